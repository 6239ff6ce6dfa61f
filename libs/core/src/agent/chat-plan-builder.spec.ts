import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { AI_BROWSER_SERVER } from '#contracts/browser.js';
import { FAKE_KNOWLEDGE_PROMPT } from '#testing/fake-turn-parts.js';
import { planWorld } from '#testing/service-worlds.js';
import { BROWSER_PROMPT } from '../browser/browser-turns.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';
import type { TurnPlan } from './engine/turn-plan.js';
import { TurnTexts } from './turn-endings.js';
import { isRefusal, type TurnRefusal } from './turn-plan-builder.js';

Logger.overrideLogger(false);

/** The built-ins of a turn with Bash off (the world's configuration). */
const BUILTINS = ['Read', 'Write', 'Edit', 'Glob', 'Grep', 'TodoWrite', 'AskUserQuestion'];

describe('ChatPlanBuilder', () => {
  let w: ReturnType<typeof planWorld>;
  let conversationId: string;
  let seq = 0;

  /** A chat turn on the conversation, after a user message. */
  const turnOf = async (request: Record<string, unknown> = {}): Promise<TurnRecord> => {
    const active = await w.turns.findActive(conversationId);
    if (active) await w.turns.finish(active.id, 'completed');
    await w.conversations.appendMessage(conversationId, { role: 'user', content: 'Hello' });
    return (await w.turns.createQueued({ id: `t${++seq}`, kind: 'chat', conversationId, spaceId: 's1', request }))!;
  };
  const build = async (request: Record<string, unknown> = {}) => {
    const turn = await turnOf(request);
    const io = w.io();
    return { turn, io, built: await w.chatPlan.build(turn, io.plan.io) };
  };
  const planOf = async (request: Record<string, unknown> = {}): Promise<TurnPlan> => {
    const { built } = await build(request);
    assert.ok(!isRefusal(built), JSON.stringify(built));
    return built;
  };

  beforeEach(async () => {
    w = planWorld();
    await w.space('s1');
    await w.model();
    conversationId = (await w.conversations.create('s1', { title: 'c' })).id;
  });

  it("plans in the space's folder with the built-ins, the current model and the history", async () => {
    const plan = await planOf();
    assert.deepEqual(plan.tools.names(), BUILTINS);
    assert.equal(plan.workspace.id, 's1');
    assert.equal(plan.model.model, 'm1');
    assert.equal(plan.model.effort, 'off');
    assert.match(plan.system, /\/data\/spaces\/s1/);
    assert.match(plan.system, new RegExp(BUILTINS.join(', ')));
    assert.equal(plan.system.includes(BROWSER_PROMPT), false);
    assert.equal(plan.history.length, 1);
    assert.equal(plan.contextTokens, 0);
  });

  it("takes the effort from the conversation, else the message's reasoningEffort, else thinkingEnabled", async () => {
    assert.equal((await planOf({ thinkingEnabled: true })).model.effort, 'medium');
    assert.equal((await planOf({ reasoningEffort: 'high', thinkingEnabled: true })).model.effort, 'high');
    await w.conversations.update('s1', conversationId, { reasoningEffort: 'low' });
    assert.equal((await planOf({ reasoningEffort: 'high' })).model.effort, 'low');
  });

  it("offers ServiceApi only when the assistant's preference says so", async () => {
    assert.equal((await planOf()).tools.get('ServiceApi'), undefined);
    await w.models.updateConfiguration({ assistant: { serviceApi: true } });
    assert.deepEqual((await planOf()).tools.names(), [...BUILTINS, 'ServiceApi']);
  });

  it("opens the browser for a message's aiBrowserEnabled, and keeps the conversation's toolset for the next turns", async () => {
    const opened = await planOf({ aiBrowserEnabled: true });
    assert.ok(opened.tools.get('mcp__ai-browser__browser_navigate'));
    assert.ok(opened.system.includes(BROWSER_PROMPT));
    assert.equal(await w.toolsets.isOpen(conversationId, AI_BROWSER_SERVER), true);
    assert.ok((await planOf()).tools.get('mcp__ai-browser__browser_navigate'), 'still open');
    assert.equal((await planOf({ aiBrowserEnabled: false })).tools.get('mcp__ai-browser__browser_navigate'), undefined);
    assert.equal(await w.toolsets.isOpen(conversationId, AI_BROWSER_SERVER), false);
  });

  it("gives the knowledge base a message names, with the default one, and the space's skills", async () => {
    assert.equal((await planOf()).tools.get('kb_search'), undefined);
    w.knowledge.bound.add('kb:kb-1');
    w.skills.installed.push('tidy');
    const plan = await planOf({ knowledgeBaseId: 'kb-1' });
    assert.deepEqual(plan.tools.names(), [...BUILTINS, 'kb_search', 'Skill']);
    assert.ok(plan.system.includes(FAKE_KNOWLEDGE_PROMPT));
    assert.ok(plan.system.includes('Skills: tidy'));
    assert.deepEqual(w.knowledge.scopes.at(-1), { spaceId: 's1', kbId: 'kb-1', withDefault: true });
  });

  it('refuses without a model, and in a conversation that is gone', async () => {
    await w.models.removeSource('main');
    const { built } = await build();
    assert.deepEqual(built, {
      refused: true,
      error: TurnTexts.noModel,
      details: { errorCode: 'NO_MODEL' },
    } satisfies TurnRefusal);
    await assert.rejects(
      w.chatPlan.build({ ...(await turnOf()), conversationId: 'gone' }, w.io().plan.io),
      /not found/i,
    );
  });

  it('keeps the reply in the conversation, then titles it and offers the memory a consolidation', async () => {
    const { turn, built } = await build();
    assert.ok(!isRefusal(built));
    await built.hooks.onComplete({
      reply: 'Hi!',
      thoughts: [],
      tokenUsage: {} as never,
      model: 'm1',
      contextTokens: 1234,
    } as never);
    await built.hooks.afterCompleted?.();
    const { messages } = await w.conversations.get('s1', conversationId);
    assert.equal(messages.at(-1)?.content, 'Hi!');
    assert.equal(messages.at(-1)?.meta.turnId, turn.id);
    assert.deepEqual(w.titles.calls, [`s1 ${conversationId}`]);
    assert.deepEqual(w.memory.calls, ['s1']);
    assert.equal((await planOf()).contextTokens, 1234, 'the next turn starts from the context the reply ended with');
  });

  it('records what a turn lost without a plan had streamed as an interrupted reply', async () => {
    const turn = await turnOf();
    await w.chatPlan.endedWithoutPlan(turn, {
      status: 'interrupted',
      error: TurnTexts.replicaLost,
      partialReply: 'Half of it',
    } as never);
    const last = (await w.conversations.get('s1', conversationId)).messages.at(-1);
    assert.equal(last?.content, 'Half of it');
    assert.deepEqual(last?.meta, { turnId: turn.id, interrupted: true, tokenUsage: last?.meta.tokenUsage });
  });
});
