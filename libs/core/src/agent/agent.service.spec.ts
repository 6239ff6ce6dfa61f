import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { AgentChannels, AgentInternalChannels } from '#contracts/agent.js';
import { AI_BROWSER_SERVER } from '#contracts/browser.js';
import { REASONING_EFFORTS } from '#contracts/conversations.js';
import { agentWorld, refusal } from '#testing/service-worlds.js';
import { DomainError } from '../errors/domain-error.js';
import { SERVICE_FOLDER } from '../kernel/space.js';
import { AgentService, parseImages } from './agent.service.js';
import { TurnTexts } from './turn-endings.js';

Logger.overrideLogger(false);

type World = ReturnType<typeof agentWorld>;

describe('AgentService', () => {
  let w: World;
  const messagesOf = async (conversationId: string) =>
    (await w.conversationRepo.findWithMessages(conversationId))?.messages ?? [];

  beforeEach(() => {
    w = agentWorld();
  });

  describe('sendMessage', () => {
    it('refuses a bad body with the texts of docs/api.md, before any lookup', async () => {
      const send = (input: Record<string, unknown>) => w.agent.sendMessage(input);
      const valid = { spaceId: 'nowhere', conversationId: 'c', message: 'hi' };
      await assert.rejects(
        send({ conversationId: 'c', message: 'hi' }),
        refusal('invalid', 'spaceId is required and must be a string'),
      );
      await assert.rejects(
        send({ ...valid, message: '  ' }),
        refusal('invalid', 'message is required and must be a string'),
      );
      await assert.rejects(
        send({ ...valid, reasoningEffort: 'extreme' }),
        refusal('invalid', `reasoningEffort must be one of ${REASONING_EFFORTS.join(', ')}`),
      );
      await assert.rejects(
        send({ ...valid, thinkingEnabled: 'yes' }),
        refusal('invalid', 'thinkingEnabled must be a boolean'),
      );
      await assert.rejects(
        send({ ...valid, aiBrowserEnabled: 1 }),
        refusal('invalid', 'aiBrowserEnabled must be a boolean'),
      );
      await assert.rejects(
        send({ ...valid, knowledgeBaseId: 7 }),
        refusal('invalid', 'knowledgeBaseId must be a string'),
      );
      await assert.rejects(send({ ...valid, images: 'x' }), refusal('invalid', 'images must be an array'));
      await assert.rejects(send(valid), (err: unknown) => err instanceof DomainError && err.kind === 'not_found');
    });

    it("records the message, queues one turn with the request's options and announces it", async () => {
      const space = await w.space();
      const conversation = await w.conversations.create(space.id, {});
      await w.agent.sendMessage({
        spaceId: space.id,
        conversationId: conversation.id,
        message: 'Summarise the notes',
        reasoningEffort: 'high',
        thinkingEnabled: true,
        knowledgeBaseId: 'kb-1',
      });

      const [turn] = await w.turns.listActive();
      assert.ok(turn, 'a turn is queued');
      assert.equal(turn.status, 'queued');
      assert.equal(turn.kind, 'chat');
      const { messageId, ...request } = turn.request as { messageId: string };
      assert.deepEqual(request, { reasoningEffort: 'high', thinkingEnabled: true, knowledgeBaseId: 'kb-1' });
      const [message] = await messagesOf(conversation.id);
      assert.equal(message?.id, messageId, 'the turn names the message it answers');
      assert.equal(message?.content, 'Summarise the notes');
      assert.deepEqual(w.bus.on(AgentChannels.turnStart).length, 1);
      assert.deepEqual(w.queue.named('agent.turn'), [
        { id: `turn-${turn.id}`, data: { turnId: turn.id, kind: 'chat' }, options: { jobId: `turn-${turn.id}` } },
      ]);
    });

    it("gives a conversation's first message the space's memory as it was then, and no later one", async () => {
      const space = await w.space();
      w.files.addFile(`${space.path}/${SERVICE_FOLDER}/memory.md`, '# Memory\n- likes tea\n');
      const conversation = await w.conversations.create(space.id, {});
      await w.agent.sendMessage({ spaceId: space.id, conversationId: conversation.id, message: 'one' });
      await w.turns.finish((await w.turns.listActive())[0]!.id, 'completed');
      w.files.addFile(`${space.path}/${SERVICE_FOLDER}/memory.md`, '# Memory\n- changed\n');
      await w.agent.sendMessage({ spaceId: space.id, conversationId: conversation.id, message: 'two' });

      const [first, second] = await messagesOf(conversation.id);
      assert.equal(first?.meta.memorySnapshot, '# Memory\n- likes tea\n');
      assert.equal(second?.meta.memorySnapshot, undefined);
      assert.equal(w.queue.named('agent.turn').length, 2);
    });

    it("takes no memory snapshot where the space's memory is off", async () => {
      const space = await w.space('quiet', false);
      w.files.addFile(`${space.path}/${SERVICE_FOLDER}/memory.md`, 'secret');
      const conversation = await w.conversations.create(space.id, {});
      await w.agent.sendMessage({ spaceId: space.id, conversationId: conversation.id, message: 'hi' });
      const [message] = await messagesOf(conversation.id);
      assert.equal(message?.meta.memorySnapshot, undefined);
    });

    it('hands a message sent while a turn is active to that turn instead of queueing another', async () => {
      const space = await w.space();
      const conversation = await w.conversations.create(space.id, {});
      await w.agent.sendMessage({ spaceId: space.id, conversationId: conversation.id, message: 'first' });
      await w.agent.sendMessage({ spaceId: space.id, conversationId: conversation.id, message: 'and also' });

      const active = await w.turns.listActive();
      assert.equal(active.length, 1);
      assert.deepEqual(
        active[0]!.pendingInputs.map((i) => i.content),
        ['and also'],
      );
      assert.equal(w.queue.named('agent.turn').length, 1);
      const arrived = w.bus.on(AgentChannels.inputArrived);
      assert.equal(arrived.length, 1);
      assert.equal(arrived[0]!.live, true);
      const [, second] = await messagesOf(conversation.id);
      assert.equal(second?.meta.live, true, 'stored as live input');
    });

    it("does not find another space's conversation", async () => {
      const a = await w.space('a');
      await w.space('b');
      const conversation = await w.conversations.create(a.id, {});
      await assert.rejects(
        w.agent.sendMessage({ spaceId: 'b', conversationId: conversation.id, message: 'hi' }),
        (err: unknown) => err instanceof DomainError && err.kind === 'not_found',
      );
      assert.equal((await w.turns.listActive()).length, 0);
    });
  });

  describe('stop', () => {
    it('ends a turn no worker has picked up, and tells its kind', async () => {
      const space = await w.space();
      const conversation = await w.conversations.create(space.id, {});
      await w.agent.sendMessage({ spaceId: space.id, conversationId: conversation.id, message: 'hi' });
      const [turn] = await w.turns.listActive();
      await w.agent.stop(conversation.id);

      const ended = await w.turns.findById(turn!.id);
      assert.equal(ended?.status, 'interrupted');
      assert.equal(ended?.error, TurnTexts.stopped);
      assert.deepEqual(w.chat.endedUnplanned, [
        { turnId: turn!.id, ending: { status: 'interrupted', error: TurnTexts.stopped } },
      ]);
      assert.equal(w.bus.on(AgentInternalChannels.stop).length, 0, 'no replica runs it');
      assert.equal(await w.agent.isGenerating(conversation.id), false);
    });

    it('asks the replicas to stop a running turn, and stopping again is harmless', async () => {
      const space = await w.space();
      const conversation = await w.conversations.create(space.id, {});
      await w.agent.sendMessage({ spaceId: space.id, conversationId: conversation.id, message: 'hi' });
      const [turn] = await w.turns.listActive();
      assert.equal((await w.turns.claim(turn!.id, 'replica-1'))?.status, 'running');

      await w.agent.stop();
      await w.agent.stop(conversation.id);
      assert.deepEqual(w.bus.on(AgentInternalChannels.stop), [{ turnIds: [turn!.id] }, { turnIds: [turn!.id] }]);
      assert.equal((await w.turns.findById(turn!.id))?.status, 'running', 'its replica ends it');
      assert.deepEqual(w.chat.endedUnplanned, []);
    });
  });

  describe('questions and session state', () => {
    it('answers false for no pending question, else records the answer and wakes the turn', async () => {
      const space = await w.space();
      const conversation = await w.conversations.create(space.id, {});
      await w.agent.sendMessage({ spaceId: space.id, conversationId: conversation.id, message: 'hi' });
      const [turn] = await w.turns.listActive();
      await w.turns.claim(turn!.id, 'replica-1');
      const question = { id: 'q1', questions: [{ question: 'Which?', options: [{ label: 'A' }] }] };
      await w.turns.setQuestion(turn!.id, question as never);

      const asked = await w.agent.session(conversation.id);
      assert.equal(asked.active, true);
      assert.equal(asked.status, 'running');
      assert.equal(asked.replicaId, 'replica-1');
      assert.deepEqual(asked.pendingQuestion, question);

      const answer = (id: string) =>
        w.agent.answerQuestion({ conversationId: conversation.id, id, answers: { Which: 'A' } });
      assert.equal(await answer('q-other'), false);
      assert.equal(w.bus.on(AgentInternalChannels.answer).length, 0);
      assert.equal(await answer('q1'), true);
      assert.deepEqual(w.bus.on(AgentInternalChannels.answer), [{ turnId: turn!.id }]);
      assert.equal(
        (await w.agent.session(conversation.id)).pendingQuestion,
        null,
        'an answered question is no longer pending',
      );
      assert.equal(await answer('q1'), false, 'a question is answered once');
    });

    it('describes a conversation without a turn as idle, and lists the generating ones', async () => {
      const space = await w.space();
      const idle = await w.conversations.create(space.id, {});
      const busy = await w.conversations.create(space.id, {});
      await w.agent.sendMessage({ spaceId: space.id, conversationId: busy.id, message: 'hi' });
      assert.deepEqual(await w.agent.session(idle.id), {
        conversationId: idle.id,
        spaceId: null,
        active: false,
        turnId: null,
        status: null,
        startedAt: null,
        thoughts: [],
        pendingQuestion: null,
        pendingApproval: null,
        pendingRetry: null,
        replicaId: null,
      });
      assert.deepEqual(await w.agent.sessions(), [busy.id]);
      assert.equal(await w.agent.isGenerating(busy.id), true);
    });
  });

  describe('toolsets', () => {
    it('offers Bash only where configured, and the AI browser once the conversation opens it', async () => {
      const space = await w.space();
      const conversation = await w.conversations.create(space.id, {});
      const openOf = async (agent: AgentService) =>
        Object.fromEntries((await agent.toolsets(space.id, conversation.id)).map((t) => [t.id, t.open]));
      assert.deepEqual(await openOf(w.agent), { 'workspace-files': true, shell: false, [AI_BROWSER_SERVER]: false });

      const opened = await w.agent.changeToolset(
        { spaceId: space.id, conversationId: conversation.id, toolsetId: AI_BROWSER_SERVER },
        true,
      );
      assert.equal(opened.find((t) => t.id === AI_BROWSER_SERVER)?.open, true);
      await assert.rejects(
        w.agent.changeToolset({ spaceId: space.id, conversationId: conversation.id, toolsetId: 'shell' }, true),
        refusal('invalid', `toolsetId must be one of ${AI_BROWSER_SERVER} (the others are always open)`),
      );

      const withBash = agentWorld({ bash: true });
      const other = await withBash.space();
      const c = await withBash.conversations.create(other.id, {});
      const shell = (await withBash.agent.toolsets(other.id, c.id)).find((t) => t.id === 'shell');
      assert.equal(shell?.open, true);
    });

    it("refuses an unknown space or another space's conversation", async () => {
      await w.space('a');
      await assert.rejects(
        w.agent.toolsets('nowhere', 'c'),
        (err: unknown) => err instanceof DomainError && err.kind === 'not_found',
      );
      const b = await w.space('b');
      const conversation = await w.conversations.create(b.id, {});
      await assert.rejects(
        w.agent.changeToolset({ spaceId: 'a', conversationId: conversation.id, toolsetId: AI_BROWSER_SERVER }, true),
        (err: unknown) => err instanceof DomainError && err.kind === 'not_found',
      );
    });
  });

  it('reports the configured step limit and the tools of the registry as capabilities', () => {
    const caps = w.agent.capabilities();
    assert.equal(caps.maxSteps, 25);
    assert.deepEqual(caps.tools, ['Read', 'Write', 'Edit', 'Glob', 'Grep', 'TodoWrite', 'AskUserQuestion']);
  });
});

describe('parseImages', () => {
  it('reads base64 strings, data URLs and {data, mediaType} objects', () => {
    assert.deepEqual(parseImages(undefined), []);
    assert.deepEqual(
      parseImages(['AAAA', 'data:image/jpeg;base64,BBBB', { data: 'data:x/y;base64,CCCC', mimeType: 'image/gif' }]),
      [
        { mediaType: 'image/png', data: 'AAAA' },
        { mediaType: 'image/jpeg', data: 'BBBB' },
        { mediaType: 'image/gif', data: 'CCCC' },
      ],
    );
  });

  it('names the item that is neither', () => {
    assert.throws(
      () => parseImages(['AAAA', { data: 5 }]),
      refusal('invalid', 'images[1] must be a base64 string or {data, mediaType}'),
    );
  });
});
