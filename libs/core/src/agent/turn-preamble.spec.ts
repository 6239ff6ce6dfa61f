import assert from 'node:assert/strict';
import type { SkillsService } from '../skills/skills.service.js';
import { describe, it } from 'node:test';
import type { Message } from '../kernel/conversation.js';
import type { ModelPin } from '../models/model-source-rules.js';
import type { ModelSourcesService } from '../models/model-sources.service.js';
import type { ModelProvider } from '../ports/model-provider.port.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';
import type { SpacesService } from '../spaces/spaces.service.js';
import type { TurnIO } from './engine/turn-plan.js';
import { TurnTexts } from './turn-endings.js';
import { isRefusal } from './turn-plan-builder.js';
import { conversationPin, TurnPreamble } from './turn-preamble.js';

const space = { id: 's1', path: '/work/s1' };

function preamble(options: { folder?: boolean; sources?: string[] } = {}) {
  const asked: Array<ModelPin | null> = [];
  const sources = options.sources ?? ['current'];
  const spaces = { get: async () => space, folderExists: async () => options.folder ?? true };
  const models = {
    resolveForConversation: async (pin: ModelPin | null) => {
      asked.push(pin);
      if (sources.length === 0) return null;
      const source = pin?.modelSourceId && sources.includes(pin.modelSourceId) ? pin.modelSourceId : sources[0]!;
      const model = source === pin?.modelSourceId && pin.modelId ? pin.modelId : `${source}-default`;
      return { endpoint: { provider: 'anthropic', apiUrl: 'http://x', apiKey: 'k' }, model, source: {} };
    },
  };
  const provider = { info: (_p: string, model: string) => ({ model }) };
  const emitted: string[] = [];
  const io = { emit: async (channel: string) => void emitted.push(channel) } as unknown as TurnIO;
  const helper = new TurnPreamble(
    spaces as unknown as SpacesService,
    models as unknown as ModelSourcesService,
    provider as unknown as ModelProvider,
    { forTurn: async () => ({ tools: [], prompt: '', names: [] }) } as unknown as SkillsService,
  );
  return { helper, asked, emitted, io, turn: { spaceId: 's1' } as TurnRecord };
}

const reply = { role: 'assistant', meta: {} } as unknown as Message;
const question = { role: 'user', meta: {} } as unknown as Message;
const summary = { role: 'system', meta: { kind: 'compaction' } } as unknown as Message;

describe('TurnPreamble', () => {
  it('announces the session on a first turn only, and never for a run', async () => {
    for (const [messages, expected] of [
      [[question], ['agent:session-info']],
      [[question, reply, question], []],
      // A turn's history may begin at a compaction's summary: the conversation had replies.
      [[summary, question], []],
      [null, []],
    ] as const) {
      const { helper, emitted, io, turn } = preamble();
      const ground = await helper.prepare({ turn, io, messages, pins: [] });
      assert.equal(isRefusal(ground), false);
      assert.deepEqual(emitted, expected);
    }
  });

  it('refuses a turn whose folder is missing, naming it', async () => {
    const { helper, io, turn } = preamble({ folder: false });
    const ground = await helper.prepare({ turn, io, messages: [question], pins: [] });
    assert.deepEqual(ground, {
      refused: true,
      error: TurnTexts.workDirMissing,
      details: { errorType: 'working_dir_unavailable', workDirIssue: { path: '/work/s1', reason: 'missing' } },
    });
  });

  it('refuses without a model', async () => {
    const { helper, io, turn } = preamble({ sources: [] });
    const ground = await helper.prepare({ turn, io, messages: null, pins: [] });
    assert.deepEqual(ground, { refused: true, error: TurnTexts.noModel, details: { errorCode: 'NO_MODEL' } });
  });

  it('takes the first pin given (a conversation pin before an app choice), else the current source', async () => {
    const { helper, asked, io, turn } = preamble({ sources: ['current', 'app'] });
    const appPin = { modelSourceId: 'app', modelId: 'app-model' };
    const first = await helper.prepare({ turn, io, messages: null, pins: [null, appPin] });
    assert.ok(!isRefusal(first));
    assert.equal(first.model.model, 'app-model');
    assert.equal(first.space, space);
    const pinned = conversationPin({ modelSourceId: 'current', modelId: 'pinned' });
    const second = await helper.prepare({ turn, io, messages: null, pins: [pinned, appPin] });
    assert.ok(!isRefusal(second));
    assert.equal(second.model.model, 'pinned');
    const none = await helper.prepare({ turn, io, messages: null, pins: [null, null] });
    assert.ok(!isRefusal(none));
    assert.equal(none.model.model, 'current-default');
    assert.deepEqual(asked, [appPin, pinned, null]);
    assert.equal(conversationPin({ modelSourceId: 'a', modelId: null }), null, 'a pin is both or nothing');
  });
});
