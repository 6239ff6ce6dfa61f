import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeEventLog, RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeSettingsRepository } from '#testing/fake-settings.js';
import { DomainError } from '../errors/domain-error.js';
import { ConversationEvents } from './conversation-events.js';
import { ConversationToolsets } from './conversation-toolsets.js';

describe('ConversationToolsets', () => {
  const setup = () => {
    const bus = new RecordingEventBus();
    const toolsets = new ConversationToolsets(
      new FakeSettingsRepository(),
      new ConversationEvents(bus, new FakeEventLog()),
    );
    return { bus, toolsets };
  };

  it('keeps ai-browser closed until opened, and announces each change once', async () => {
    const { bus, toolsets } = setup();
    assert.equal(await toolsets.isOpen('c1', 'ai-browser'), false);
    assert.deepEqual(await toolsets.set('s1', 'c1', 'ai-browser', true, 'user'), ['ai-browser']);
    assert.deepEqual(await toolsets.set('s1', 'c1', 'ai-browser', true, 'message'), ['ai-browser']);
    assert.equal(await toolsets.isOpen('c1', 'ai-browser'), true);
    assert.equal(await toolsets.isOpen('c2', 'ai-browser'), false);
    assert.deepEqual(await toolsets.set('s1', 'c1', 'ai-browser', false, 'message'), []);
    const changes = bus.published.filter((e) => e.channel === 'toolsets:changed').map((e) => e.data);
    assert.deepEqual(
      changes.map(({ toolsetId, action, openedBy, open, conversationId }) => ({
        toolsetId,
        action,
        openedBy,
        open,
        conversationId,
      })),
      [
        { toolsetId: 'ai-browser', action: 'open', openedBy: 'user', open: ['ai-browser'], conversationId: 'c1' },
        { toolsetId: 'ai-browser', action: 'close', openedBy: 'message', open: [], conversationId: 'c1' },
      ],
    );
  });

  it('two replicas opening at once store it once', async () => {
    const { bus, toolsets } = setup();
    await Promise.all([
      toolsets.set('s1', 'c1', 'ai-browser', true, 'user'),
      toolsets.set('s1', 'c1', 'ai-browser', true, 'user'),
    ]);
    assert.deepEqual(await toolsets.openOf('c1'), ['ai-browser']);
    assert.equal(bus.published.filter((e) => e.channel === 'toolsets:changed').length, 1);
  });

  it('refuses a toolset that is not openable, naming the field', async () => {
    const { toolsets } = setup();
    await assert.rejects(toolsets.set('s1', 'c1', 'shell', true, 'user'), (err: DomainError) =>
      /^toolsetId must be one of ai-browser/.test(err.message),
    );
  });
});
