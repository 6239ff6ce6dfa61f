import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { AppChannels, appChatConversationId } from '#contracts/apps.js';
import { WATCHER_SPEC } from '#testing/fake-apps.js';
import { planWorld } from '#testing/service-worlds.js';
import type { TurnPlan } from '../../agent/engine/turn-plan.js';
import { TurnTexts } from '../../agent/turn-endings.js';
import { isRefusal } from '../../agent/turn-plan-builder.js';
import type { App } from '../../kernel/app.js';
import type { TurnRecord } from '../../ports/turn.repository.port.js';

Logger.overrideLogger(false);

const BROWSER = 'mcp__ai-browser__browser_navigate';
const ORIGIN = { instanceId: 'i1', channel: 'telegram', chatType: 'direct', chatId: 'chat-1', replyTo: 'm-1' };
/** Asks for everything a guest must not get: the shell, the browser and the service API. */
const POWERFUL = { ...WATCHER_SPEC, name: 'Powerful', permissions: ['bash', 'ai-browser', 'svc-api-ref'] };

describe('AppChatPlanBuilder', () => {
  let w: ReturnType<typeof planWorld>;
  let app: App;
  let thread: string;
  let seq = 0;

  const turnOf = async (request: Record<string, unknown>): Promise<TurnRecord> => {
    const active = await w.turns.findActive(thread);
    if (active) await w.turns.finish(active.id, 'completed');
    await w.conversations.appendMessage(thread, { role: 'user', content: 'Hello' });
    const id = `t${++seq}`;
    return (await w.turns.createQueued({ id, kind: 'app-chat', conversationId: thread, spaceId: 's1', request }))!;
  };
  const planOf = async (turn: TurnRecord): Promise<TurnPlan> => {
    const built = await w.appChatPlan.build(turn, w.io().plan.io);
    assert.ok(!isRefusal(built), JSON.stringify(built));
    return built;
  };
  const complete = (plan: TurnPlan, reply: string) =>
    plan.hooks.onComplete({ reply, thoughts: [], tokenUsage: {} as never, model: 'm1', contextTokens: 0 } as never);
  const recordReply = (turn: TurnRecord, meta: Record<string, unknown> = {}) =>
    w.conversations.appendMessage(thread, {
      role: 'assistant',
      content: 'The answer',
      meta: { turnId: turn.id, ...meta },
    });

  beforeEach(async () => {
    w = planWorld({ bash: true });
    await w.space('s1');
    await w.model();
    app = await w.apps.install({ spec: POWERFUL, spaceId: 's1' });
    thread = appChatConversationId(app.id);
    await w.chatService.send(app.id, { spaceId: 's1', message: 'first' });
    w.knowledge.bound.add(`app:${app.id}`);
    w.skills.installed.push('tidy');
  });

  it("reads the thread's space once, for its conversation, its preamble and the app's memory", async () => {
    const turn = await turnOf({ appId: app.id });
    const read: string[] = [];
    const findById = w.spaceRepo.findById.bind(w.spaceRepo);
    w.spaceRepo.findById = async (id) => {
      read.push(id);
      return findById(id);
    };
    w.files.addFolder(`/data/spaces/s1/.svc/apps/${app.id}`);
    w.files.addFile(`/data/spaces/s1/.svc/apps/${app.id}/memory.md`, 'Remember the milk.');
    const plan = await planOf(turn);
    // (The MCP servers' configuration is read from the temporary space's folder: not counted.)
    assert.deepEqual(
      read.filter((id) => id === 's1'),
      ['s1'],
    );
    assert.match(plan.system, /Remember the milk\./);
  });

  it("gives a web thread's turn the app's tools, prompt and memory, and announces the thread's update", async () => {
    const plan = await planOf(await turnOf({ appId: app.id }));
    assert.deepEqual(plan.tools.names(), [
      'Read',
      'Write',
      'Edit',
      'Glob',
      'Grep',
      'TodoWrite',
      'Bash',
      'AskUserQuestion',
      BROWSER,
      'kb_search',
      'Skill',
      'ServiceApi',
    ]);
    assert.match(plan.system, /^You are "Powerful", a digital human/);
    assert.match(plan.system, /You are chatting with your user/);
    assert.deepEqual(w.knowledge.scopes.at(-1), { spaceId: 's1', appId: app.id });
    await complete(plan, 'Hi from the web');
    assert.deepEqual(
      w.bus.on(AppChannels.imSessionUpdated).map((e) => [e.chatId, e.lastMessage]),
      [
        [thread, 'first'],
        [thread, 'Hi from the web'],
      ],
      'the send and the reply',
    );
    assert.deepEqual(w.listener.replies, []);
  });

  it("gives a channel owner's turn the same tools but AskUserQuestion, and sends the reply to the chat", async () => {
    const turn = await turnOf({ appId: app.id, channel: ORIGIN });
    const plan = await planOf(turn);
    assert.deepEqual(plan.tools.names(), [
      'Read',
      'Write',
      'Edit',
      'Glob',
      'Grep',
      'TodoWrite',
      'Bash',
      BROWSER,
      'kb_search',
      'Skill',
      'ServiceApi',
    ]);
    await complete(plan, 'Hi from the bot');
    assert.deepEqual(w.listener.replies, [
      { appId: app.id, conversationId: thread, turnId: turn.id, origin: ORIGIN, reply: 'Hi from the bot' },
    ]);
  });

  it("gives a channel guest no tool that writes or runs: reading, tasks and the app's knowledge only", async () => {
    const plan = await planOf(await turnOf({ appId: app.id, channel: ORIGIN, guest: true }));
    assert.deepEqual(plan.tools.names(), ['Read', 'Glob', 'Grep', 'TodoWrite', 'kb_search']);
    assert.match(plan.system, /Tools: Read, Glob, Grep, TodoWrite, kb_search\./);
    const web = await planOf(await turnOf({ appId: app.id, guest: true }));
    assert.ok(web.tools.get('Bash'), 'guest counts only in a channel thread');
  });

  it('refuses a turn whose digital human is gone or unnamed', async () => {
    const expected = {
      refused: true,
      error: 'The digital human of this chat no longer exists.',
      details: { errorCode: 'NOT_FOUND' },
    };
    const io = w.io().plan.io;
    assert.deepEqual(await w.appChatPlan.build(await turnOf({}), io), expected);
    await w.appRepo.delete(app.id);
    assert.deepEqual(await w.appChatPlan.build(await turnOf({ appId: app.id }), io), expected);
  });

  it('a lost turn: interrupted in a web thread; in a channel thread completed once its reply was recorded, else run again', async () => {
    assert.equal(await w.appChatPlan.whenLost(await turnOf({ appId: app.id })), 'interrupt');
    const lost = await turnOf({ appId: app.id, channel: ORIGIN });
    assert.equal(await w.appChatPlan.whenLost(lost), 'rerun');
    await recordReply(lost, { error: 'boom' });
    assert.equal(await w.appChatPlan.whenLost(lost), 'rerun', 'a failed reply is no answer');
    await recordReply(lost);
    assert.equal(await w.appChatPlan.whenLost(lost), 'completed');
    await w.appChatPlan.completedWhenLost(lost);
    assert.deepEqual(w.listener.replies, [
      { appId: app.id, conversationId: thread, turnId: lost.id, origin: ORIGIN, reply: 'The answer' },
    ]);
  });

  it('a channel turn ended without a plan tells its chat why, unless stopped or run again', async () => {
    const failed = await turnOf({ appId: app.id, channel: ORIGIN });
    await w.appChatPlan.endedWithoutPlan(failed, { status: 'failed', error: 'No model.', partialReply: 'Part' });
    assert.equal((await w.conversations.get('s1', thread)).messages.at(-1)?.content, 'Part');
    const stopped = await turnOf({ appId: app.id, channel: ORIGIN });
    await w.appChatPlan.endedWithoutPlan(stopped, { status: 'interrupted', error: TurnTexts.stopped });
    const rerun = await turnOf({ appId: app.id, channel: ORIGIN });
    await w.appChatPlan.endedWithoutPlan(rerun, {
      status: 'interrupted',
      error: TurnTexts.replicaLost,
      partialReply: 'Half',
      rerun: true,
    });
    assert.deepEqual(
      w.listener.replies.map((r) => [r.turnId, r.reply]),
      [[failed.id, 'Part\n\n(No model.)']],
    );
    assert.equal((await w.conversations.get('s1', thread)).messages.at(-1)?.content, 'Hello', 'no half reply kept');
  });
});
