import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import { FakeTurnRepository } from '#testing/fake-agent-ports.js';
import { FakeConversationRepository } from '#testing/fake-conversations.js';
import { FakeSpaceRepository } from '#testing/fake-spaces.js';
import { FakeClock } from '#testing/fakes.js';
import { DomainError } from '../errors/domain-error.js';
import type { UserSubmission } from '../ports/conversation.repository.port.js';
import { ConversationErrors, ConversationsService } from './conversations.service.js';

const refusal = (kind: DomainError['kind'], message: string) => (err: unknown) => {
  assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
  assert.equal(err.kind, kind);
  assert.equal(err.message, message);
  return true;
};

const space = (id: string) => ({
  id,
  name: id,
  icon: '📁',
  color: null,
  path: `/spaces/${id}`,
  isTemp: false,
  preferences: {},
});

describe('ConversationsService', () => {
  let clock: FakeClock;
  let turns: FakeTurnRepository;
  let repo: FakeConversationRepository;
  let service: ConversationsService;

  beforeEach(async () => {
    clock = new FakeClock(Date.UTC(2026, 1, 3, 10, 0, 0));
    turns = new FakeTurnRepository();
    repo = new FakeConversationRepository(turns, () => clock.now());
    const spaces = new FakeSpaceRepository();
    await spaces.insert(space('s1'));
    await spaces.insert(space('s2'));
    service = new ConversationsService(repo, spaces, clock);
  });

  const submission = <E extends Partial<UserSubmission>>(
    content: string,
    extra: E = {} as E,
  ): Omit<UserSubmission, 'unlessFirst'> & E => {
    const messageId = randomUUID();
    return {
      messageId,
      content,
      meta: { source: 'queued' },
      liveMeta: { source: 'live' },
      turn: { id: randomUUID(), kind: 'chat', conversationId: '', spaceId: 's1', request: { messageId } },
      ...extra,
    };
  };

  describe('records in a space', () => {
    it('creates with the default title and remembers it as fresh once', async () => {
      const created = await service.create('s1', { title: '  ', reasoningEffort: 'high' });
      assert.equal(created.title, 'New conversation');
      assert.equal(created.reasoningEffort, 'high');
      assert.equal(created.ephemeral, false);
      assert.equal(created.appId, null);
      assert.equal(service.takeFreshHint(created.id), true);
      assert.equal(service.takeFreshHint(created.id), false);
    });

    it('never makes a digital human thread from a request', async () => {
      const created = await service.create('s1', { title: 'T', appId: 'app-1' });
      assert.equal(created.appId, null);
    });

    it('refuses an unknown space and malformed fields', async () => {
      await assert.rejects(service.create('nope', {}), refusal('not_found', 'Space not found'));
      await assert.rejects(
        service.create('s1', { ephemeral: 'yes' }),
        refusal('invalid', 'ephemeral must be a boolean'),
      );
      await assert.rejects(
        service.create('s1', { reasoningEffort: 'huge' }),
        refusal('invalid', 'reasoningEffort must be one of: off, minimal, low, medium, high, xhigh, max'),
      );
      await assert.rejects(service.create('s1', { title: 7 }), refusal('invalid', 'title must be a string'));
      await assert.rejects(
        service.create('s1', { title: 'x'.repeat(501) }),
        refusal('invalid', 'title must be at most 500 characters'),
      );
      assert.equal(repo.conversations.size, 0);
    });

    it('lists the space conversations most recently updated first, without ephemeral ones or threads', async () => {
      const older = await service.create('s1', { title: 'Older' });
      const newer = await service.create('s1', { title: 'Newer' });
      await service.create('s1', { title: 'Scratch', ephemeral: true });
      await service.openWithId('s1', 'app-chat:a1', { title: 'Thread', appId: 'a1' });
      await service.create('s2', { title: 'Elsewhere' });
      assert.deepEqual(
        (await service.list('s1')).map((c) => c.title),
        ['Newer', 'Older'],
      );
      await service.appendMessage(older.id, { role: 'user', content: 'bump' });
      assert.deepEqual(
        (await service.list('s1')).map((c) => c.id),
        [older.id, newer.id],
      );
      await assert.rejects(service.list('nope'), refusal('not_found', 'Space not found'));
    });

    it('opens a conversation by id once, and refuses an id of another space', async () => {
      const first = await service.openWithId('s1', 'app-chat:a1', { title: 'Chat' });
      const again = await service.openWithId('s1', 'app-chat:a1', { title: 'Other title' });
      assert.equal(again.id, 'app-chat:a1');
      assert.equal(again.title, 'Chat');
      assert.deepEqual(again.createdAt, first.createdAt);
      await assert.rejects(
        service.openWithId('s2', 'app-chat:a1'),
        refusal('conflict', 'conversationId is taken by a conversation of another space'),
      );
      await assert.rejects(
        service.openWithId('s1', '-bad id'),
        refusal(
          'invalid',
          'conversationId must be 1 to 128 letters, digits and . _ : @ - starting with a letter or digit',
        ),
      );
    });

    it('opens in a space the caller has just read without checking it again, by id with the check', async () => {
      // A space object is the caller's read: trusted (a run's start reads its space once).
      const opened = await service.openWithId({ id: 'unchecked' }, 'app-run:a9', { appId: 'a9' });
      assert.equal(opened.spaceId, 'unchecked');
      await assert.rejects(service.openWithId('unchecked', 'app-run:a8'), refusal('not_found', 'Space not found'));
    });

    it('keeps a UUID id in lower case', async () => {
      const id = randomUUID();
      const opened = await service.openWithId('s1', id.toUpperCase());
      assert.equal(opened.id, id);
      assert.equal((await service.get('s1', id.toUpperCase())).conversation.id, id);
    });

    it('gets a conversation of its own space only, from a message when asked', async () => {
      const c = await service.create('s1', {});
      await service.appendMessage(c.id, { role: 'user', content: 'one' });
      const second = await service.appendMessage(c.id, { role: 'assistant', content: 'two' });
      await service.appendMessage(c.id, { role: 'user', content: 'three' });
      const whole = await service.get('s1', c.id);
      assert.equal(whole.conversation.messageCount, 3);
      assert.deepEqual(
        whole.messages.map((m) => [m.position, m.content]),
        [
          [0, 'one'],
          [1, 'two'],
          [2, 'three'],
        ],
      );
      assert.deepEqual(
        (await service.get('s1', c.id, second.id)).messages.map((m) => m.content),
        ['two', 'three'],
      );
      assert.equal((await service.get('s1', c.id, 'unknown')).messages.length, 3);
      await assert.rejects(service.get('s2', c.id), refusal('not_found', 'Conversation not found'));
    });

    it('updates the title, pin and effort; refuses an empty update and a half pin', async () => {
      const c = await service.create('s1', {});
      const sourceId = randomUUID();
      const updated = await service.update('s1', c.id, {
        title: ' Renamed ',
        modelSourceId: sourceId,
        modelId: 'model-x',
        reasoningEffort: 'low',
      });
      assert.equal(updated.conversation.title, 'Renamed');
      assert.equal(updated.conversation.reasoningEffort, 'low');
      assert.deepEqual(await service.getPin(c.id), { modelSourceId: sourceId, modelId: 'model-x' });
      await service.update('s1', c.id, { modelSourceId: null, modelId: null, reasoningEffort: null });
      assert.equal(await service.getPin(c.id), null);
      assert.equal((await service.findById(c.id))?.reasoningEffort, null);
      await assert.rejects(service.update('s1', c.id, {}), refusal('invalid', ConversationErrors.nothingToUpdate));
      await assert.rejects(
        service.update('s1', c.id, { modelId: 'model-x' }),
        refusal('invalid', 'modelSourceId and modelId must be sent together'),
      );
      await assert.rejects(
        service.update('s1', c.id, { modelSourceId: 'not-a-uuid', modelId: 'm' }),
        refusal('invalid', 'modelSourceId must be a UUID'),
      );
      await assert.rejects(service.update('s2', c.id, { title: 'x' }), refusal('not_found', 'Conversation not found'));
    });

    it('stars without reordering, and refuses a non-boolean', async () => {
      const a = await service.create('s1', { title: 'A' });
      await service.create('s1', { title: 'B' });
      await service.star('s1', a.id, true);
      assert.equal((await service.findById(a.id))?.starred, true);
      assert.deepEqual(
        (await service.list('s1')).map((c) => c.title),
        ['B', 'A'],
      );
      await assert.rejects(service.star('s1', a.id, 'true'), refusal('invalid', 'starred must be a boolean'));
      await assert.rejects(service.star('s1', 'missing', true), refusal('not_found', 'Conversation not found'));
    });

    it('removes a conversation with its messages and thoughts, once', async () => {
      const c = await service.create('s1', {});
      const m = await service.appendMessage(c.id, { role: 'assistant', content: 'hi' }, [{ id: 't1', type: 'text' }]);
      await service.remove('s1', c.id);
      assert.equal(await service.findById(c.id), null);
      assert.equal(repo.thoughts.has(m.id), false);
      await assert.rejects(service.remove('s1', c.id), refusal('not_found', 'Conversation not found'));
    });
  });

  describe('messages', () => {
    it('appends with normalized meta and thoughts stamped by the clock', async () => {
      const c = await service.create('s1', {});
      const m = await service.appendMessageInSpace(
        's1',
        c.id,
        { role: 'assistant', content: 'answer', meta: { model: 'x', gone: null } },
        [
          { id: 't1', type: 'thinking', content: 'hmm' },
          { id: 't2', type: 'tool_use', timestamp: 'then' },
        ],
      );
      assert.deepEqual(m.meta, { model: 'x' });
      assert.deepEqual(await service.thoughts('s1', c.id, m.id), [
        { id: 't1', type: 'thinking', content: 'hmm', timestamp: '2026-02-03T10:00:00.000Z' },
        { id: 't2', type: 'tool_use', content: '', timestamp: 'then' },
      ]);
      assert.deepEqual(await service.thoughts('s2', c.id, m.id), [], 'another space sees no thoughts');
    });

    it('refuses a bad role, reserved meta, malformed thoughts and an unknown conversation', async () => {
      const c = await service.create('s1', {});
      await assert.rejects(
        service.appendMessage(c.id, { role: 'tool', content: 'x' }),
        refusal('invalid', 'role must be one of: user, assistant, system'),
      );
      await assert.rejects(
        service.appendMessage(c.id, { role: 'user', content: 'x', meta: { id: 'mine' } }),
        refusal('invalid', 'id cannot be set as message meta'),
      );
      await assert.rejects(
        service.appendMessage(c.id, { role: 'user', content: 'x' }, [{ id: '', type: 'text' }]),
        refusal('invalid', 'thoughts[0].id must be a non-empty string'),
      );
      await assert.rejects(
        service.appendMessage('missing', { role: 'user', content: 'x' }),
        refusal('not_found', 'Conversation not found'),
      );
      await assert.rejects(
        service.appendMessageInSpace('s2', c.id, { role: 'user', content: 'x' }),
        refusal('not_found', 'Conversation not found'),
      );
      assert.equal((await service.findById(c.id))?.messageCount, 0);
    });

    it('updates the last message: content replaced, meta merged, null removing a key', async () => {
      const c = await service.create('s1', {});
      await service.appendMessage(c.id, { role: 'user', content: 'q' });
      await service.appendMessage(c.id, { role: 'assistant', content: 'partial', meta: { streaming: true, a: 1 } });
      const last = await service.updateLastMessageInSpace('s1', c.id, {
        content: 'complete',
        meta: { streaming: null, b: 2 },
      });
      assert.equal(last.content, 'complete');
      assert.deepEqual(last.meta, { a: 1, b: 2 });
      assert.equal((await service.get('s1', c.id)).messages[0].content, 'q');
    });

    it('tells an empty conversation from a missing one when updating the last message', async () => {
      const c = await service.create('s1', {});
      await assert.rejects(service.updateLastMessage(c.id, { content: 'x' }), refusal('not_found', 'No messages'));
      await assert.rejects(
        service.updateLastMessage('missing', { content: 'x' }),
        refusal('not_found', 'Conversation not found'),
      );
      await assert.rejects(
        service.updateLastMessage(c.id, { meta: { role: 'x' } }),
        refusal('invalid', 'role cannot be set as message meta'),
      );
    });

    it('saves thoughts of a known message only', async () => {
      const c = await service.create('s1', {});
      const m = await service.appendMessage(c.id, { role: 'assistant', content: 'a' });
      await service.saveThoughts(m.id, [{ id: 't', type: 'text', content: 'c', timestamp: 'ts' }]);
      assert.deepEqual(await service.thoughts('s1', c.id, m.id), [
        { id: 't', type: 'text', content: 'c', timestamp: 'ts' },
      ]);
      await assert.rejects(service.saveThoughts('nope', []), refusal('not_found', 'Message not found'));
      await assert.rejects(service.saveThoughts(m.id, {}), refusal('invalid', 'thoughts must be an array'));
    });
  });

  describe('submitting a user message', () => {
    it('queues a turn, then stores further messages as input of the active turn', async () => {
      const c = await service.create('s1', {});
      const first = await service.submitUserMessage(c.id, submission('hello', { firstMeta: { first: true } }));
      assert.ok(first.turn, 'a turn was queued');
      assert.equal(first.turn.status, 'queued');
      assert.deepEqual(first.message.meta, { source: 'queued', first: true });
      assert.equal(first.message.role, 'user');
      const second = await service.submitUserMessage(c.id, submission('more', { firstMeta: { first: true } }));
      assert.equal(second.turn, null);
      assert.deepEqual(second.message.meta, { source: 'live' }, 'only a first message carries firstMeta');
      assert.equal(second.message.position, 1);
      assert.equal((await turns.listActive()).length, 1);
    });

    it('answers first without writing when asked to, and refuses another space or a missing conversation', async () => {
      const c = await service.create('s1', {});
      assert.equal(await service.submitUserMessage(c.id, submission('hi', { unlessFirst: true })), 'first');
      assert.equal((await service.findById(c.id))?.messageCount, 0);
      assert.equal((await turns.listActive()).length, 0);
      await assert.rejects(
        service.submitUserMessage(c.id, submission('hi', { inSpace: 's2' })),
        refusal('not_found', 'Conversation not found'),
      );
      await assert.rejects(
        service.submitUserMessage('missing', submission('hi')),
        refusal('not_found', 'Conversation not found'),
      );
      await assert.rejects(
        service.submitUserMessage(c.id, submission('hi', { meta: { createdAt: 1 } })),
        refusal('invalid', 'createdAt cannot be set as message meta'),
      );
    });
  });

  describe('lifecycle', () => {
    it('deletes a space conversations and a digital human threads', async () => {
      const a = await service.create('s1', {});
      const thread = await service.openWithId('s2', 'app-run:a1', { appId: 'a1' });
      const kept = await service.create('s2', {});
      await service.deleteAllInSpace('s1');
      assert.equal(await service.findById(a.id), null);
      assert.deepEqual(await service.removeAllOfApp('a1'), [thread.id]);
      assert.deepEqual([...repo.conversations.keys()], [kept.id]);
    });

    it('sweeps every ephemeral conversation alone, only idle ones beside replicas', async () => {
      const idle = await service.create('s1', { ephemeral: true });
      clock.advance(2 * 60 * 60 * 1000);
      const live = await service.create('s1', { ephemeral: true });
      const kept = await service.create('s1', {});
      assert.equal(await service.sweepEphemeral(true), 1);
      assert.equal(await service.findById(idle.id), null);
      assert.ok(await service.findById(live.id));
      assert.equal(await service.sweepEphemeral(false), 1);
      assert.equal(await service.findById(live.id), null);
      assert.ok(await service.findById(kept.id));
    });
  });
});
