import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { apiClient, failure, okData } from '#testing/api-client.js';
import type { DataSource } from 'typeorm';
import type { Thought } from '#core/kernel/conversation.js';
import { ConversationsService } from '#core/conversations/conversations.service.js';
import { DomainError } from '#core/errors/domain-error.js';
import { SystemClock } from '#core/ports/clock.port.js';
import { TypeormTurnRepository } from '#infra/agent/typeorm-turn.repository.js';
import { TypeormConversationRepository } from '#infra/conversations/typeorm-conversation.repository.js';
import { createDataSource, migrateUnderLock } from '#infra/database/database.js';
import { EmbeddedPostgres } from '#infra/database/embedded-postgres.js';
import { TypeormSpaceRepository } from '#infra/spaces/typeorm-space.repository.js';
import { withTimeout } from '#testing/fakes.js';
import { createTestDatabase, testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';

const TEMP = 'svc-temp';
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';
const SOURCE_ID = '3f2c8a4e-1b7d-4c61-9a2e-5d8f0b6c7e91';

type Body = { success: boolean; data?: unknown; error?: string };

interface Message {
  id: string;
  role: string;
  content: string;
  createdAt: string;
  [k: string]: unknown;
}
interface ConversationBody {
  id: string;
  spaceId: string;
  title: string;
  starred: boolean;
  ephemeral: boolean;
  messageCount: number;
  createdAt: string;
  updatedAt: string;
  reasoningEffort?: string;
  modelSourceId?: string;
  modelId?: string;
  messages: Message[];
  messagesFrom?: string;
}

/** A small client for the conversation routes of one server. */
function client(server: TestServer) {
  const api = apiClient(server);
  const base = (space: string) => `/api/spaces/${encodeURIComponent(space)}/conversations`;
  return {
    api,
    base,
    list: (space: string) => api.get(base(space)),
    create: (space: string, body?: object) => api.post(base(space), body),
    get: (space: string, id: string, from?: string) =>
      api.get(`${base(space)}/${id}`).query(from === undefined ? {} : { from }),
    update: (space: string, id: string, body: object) => api.put(`${base(space)}/${id}`, body),
    remove: (space: string, id: string) => api.del(`${base(space)}/${id}`),
    star: (space: string, id: string, body: object) => api.post(`${base(space)}/${id}/star`, body),
    append: (space: string, id: string, body: object) => api.post(`${base(space)}/${id}/messages`, body),
    updateLast: (space: string, id: string, body: object) => api.put(`${base(space)}/${id}/messages/last`, body),
    thoughts: (space: string, id: string, messageId: string) =>
      api.get(`${base(space)}/${id}/messages/${messageId}/thoughts`),
  };
}

describe(`conversation records over HTTP (${testMode()})`, () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let space: string;
  let otherSpace: string;

  /** A user-created space (POST /api/spaces); the temporary space when that route is missing. */
  async function newSpace(name: string): Promise<string> {
    const res = await api.api.post('/api/spaces', { name });
    return res.status === 200 && (res.body as Body).success ? (res.body.data as { id: string }).id : TEMP;
  }

  async function createConversation(body: object = {}, inSpace = space): Promise<string> {
    return okData<{ id: string }>(await api.create(inSpace, body)).id;
  }

  before(async () => {
    server = await startServer();
    api = client(server);
    space = await newSpace('Conversations');
    otherSpace = await newSpace('Elsewhere');
  });
  after(() => server.stop());

  describe('create', () => {
    it('answers {id, title} with the default title and an empty conversation; the body is optional', async () => {
      const created = okData<{ id: string; title: string }>(await api.create(space));
      assert.deepEqual(Object.keys(created).sort(), ['id', 'title']);
      assert.match(created.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.equal(created.title, 'New conversation');
      const got = okData<ConversationBody>(await api.get(space, created.id));
      assert.equal(got.id, created.id);
      assert.equal(got.spaceId, space);
      assert.deepEqual(got.messages, []);
      assert.equal(got.messageCount, 0);
      assert.equal(got.starred, false);
      assert.equal(got.ephemeral, false);
      assert.equal('reasoningEffort' in got, false);
      assert.equal('modelSourceId' in got, false);
      assert.equal('messagesFrom' in got, false);
    });

    it('keeps a title (trimmed) and a reasoning effort', async () => {
      const created = okData<{ id: string; title: string }>(
        await api.create(space, { title: '  Quarterly plan ', reasoningEffort: 'xhigh' }),
      );
      assert.equal(created.title, 'Quarterly plan');
      const got = okData<ConversationBody>(await api.get(space, created.id));
      assert.equal(got.title, 'Quarterly plan');
      assert.equal(got.reasoningEffort, 'xhigh');
    });

    it('accepts every reasoning effort of the spec', async () => {
      for (const reasoningEffort of ['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']) {
        const id = await createConversation({ reasoningEffort, ephemeral: true });
        assert.equal(okData<ConversationBody>(await api.get(space, id)).reasoningEffort, reasoningEffort);
      }
    });

    it('answers 400 naming the field for a bad reasoningEffort, ephemeral or title', async () => {
      failure(await api.create(space, { reasoningEffort: 'extreme' }), 400, /reasoningEffort/);
      failure(await api.create(space, { reasoningEffort: 3 }), 400, /reasoningEffort/);
      failure(await api.create(space, { ephemeral: 'yes' }), 400, /ephemeral/);
      failure(await api.create(space, { title: 42 }), 400, /title/);
      failure(await api.create(space, { title: 'x'.repeat(501) }), 400, /title/);
    });

    it('answers 404 "Space not found" for an unknown space', async () => {
      failure(await api.create('no-such-space'), 404, 'Space not found');
      failure(await api.create(UNKNOWN_UUID, { title: 'x' }), 404, 'Space not found');
    });

    it('works in the temporary space', async () => {
      const id = await createConversation({ title: 'temp chat' }, TEMP);
      assert.equal(okData<ConversationBody>(await api.get(TEMP, id)).spaceId, TEMP);
    });
  });

  describe('list', () => {
    it('lists {id, title, starred, createdAt, updatedAt, messageCount, …}, newest-updated first, ephemeral left out', async () => {
      const listSpace = await newSpace('Listing');
      if (listSpace === TEMP) return; // needs a space of its own to know the whole list
      const a = await createConversation({ title: 'A' }, listSpace);
      const b = await createConversation({ title: 'B' }, listSpace);
      const e = await createConversation({ title: 'E', ephemeral: true }, listSpace);
      okData(await api.append(listSpace, e, { role: 'user', content: 'hidden' }));
      let list = okData<ConversationBody[]>(await api.list(listSpace));
      assert.deepEqual(
        list.map((c) => c.title),
        ['B', 'A'],
      );
      // A message moves A to the top.
      okData(await api.append(listSpace, a, { role: 'user', content: 'hello' }));
      okData(await api.append(listSpace, a, { role: 'assistant', content: 'hi' }));
      list = okData<ConversationBody[]>(await api.list(listSpace));
      assert.deepEqual(
        list.map((c) => [c.id, c.title, c.messageCount]),
        [
          [a, 'A', 2],
          [b, 'B', 0],
        ],
      );
      const entry = list[0]!;
      for (const key of ['id', 'title', 'starred', 'createdAt', 'updatedAt', 'messageCount', 'spaceId']) {
        assert.ok(key in entry, `list entry lacks ${key}`);
      }
      assert.equal('messages' in entry, false);
      assert.ok(Date.parse(entry.updatedAt) >= Date.parse(entry.createdAt));
      assert.ok(list.every((c) => c.id !== e));
      // The ephemeral one exists all the same.
      assert.equal(okData<ConversationBody>(await api.get(listSpace, e)).ephemeral, true);
    });

    it('answers 404 "Space not found" for an unknown space', async () => {
      failure(await api.list('no-such-space'), 404, 'Space not found');
    });
  });

  describe('get', () => {
    let id: string;
    const ids: string[] = [];
    before(async () => {
      id = await createConversation({ title: 'Windowed' });
      for (const [role, content] of [
        ['user', 'one'],
        ['assistant', 'two'],
        ['user', 'three'],
        ['assistant', 'four'],
      ] as const) {
        ids.push(okData<Message>(await api.append(space, id, { role, content })).id);
      }
    });

    it('returns the conversation with its messages {id, role, content, createdAt} in order', async () => {
      const got = okData<ConversationBody>(await api.get(space, id));
      assert.equal(got.title, 'Windowed');
      assert.equal(got.messageCount, 4);
      assert.deepEqual(
        got.messages.map((m) => [m.id, m.role, m.content]),
        [
          [ids[0], 'user', 'one'],
          [ids[1], 'assistant', 'two'],
          [ids[2], 'user', 'three'],
          [ids[3], 'assistant', 'four'],
        ],
      );
      for (const m of got.messages) assert.ok(!Number.isNaN(Date.parse(m.createdAt)));
    });

    it('?from= starts at that message (inclusive) and echoes it in messagesFrom', async () => {
      const got = okData<ConversationBody>(await api.get(space, id, ids[2]));
      assert.deepEqual(
        got.messages.map((m) => m.content),
        ['three', 'four'],
      );
      assert.equal(got.messagesFrom, ids[2]);
      assert.equal(got.messageCount, 4, 'messageCount counts the whole conversation');
      const last = okData<ConversationBody>(await api.get(space, id, ids[3]));
      assert.deepEqual(
        last.messages.map((m) => m.content),
        ['four'],
      );
      const first = okData<ConversationBody>(await api.get(space, id, ids[0]));
      assert.equal(first.messages.length, 4);
    });

    it('an unknown ?from= returns the whole conversation; messagesFrom still echoes what was asked', async () => {
      for (const from of [UNKNOWN_UUID, 'not-a-message-id']) {
        const got = okData<ConversationBody>(await api.get(space, id, from));
        assert.equal(got.messages.length, 4, from);
        assert.equal(got.messagesFrom, from);
      }
      // A message of another conversation is unknown here too.
      const other = await createConversation();
      const foreign = okData<Message>(await api.append(space, other, { role: 'user', content: 'x' })).id;
      const got = okData<ConversationBody>(await api.get(space, id, foreign));
      assert.equal(got.messages.length, 4);
      // An empty from= is not a use of from.
      const empty = okData<ConversationBody>(await api.get(space, id, ''));
      assert.equal('messagesFrom' in empty, false);
    });

    it('answers 404 "Conversation not found" for unknown ids and for a conversation of another space', async () => {
      failure(await api.get(space, UNKNOWN_UUID), 404, 'Conversation not found');
      failure(await api.get(space, 'not-a-uuid'), 404, 'Conversation not found');
      if (otherSpace !== space) failure(await api.get(otherSpace, id), 404, 'Conversation not found');
      failure(await api.get('no-such-space', id), 404, 'Space not found');
    });
  });

  describe('update', () => {
    it('changes the title and answers the updated conversation with its messages', async () => {
      const id = await createConversation({ title: 'Old' });
      okData(await api.append(space, id, { role: 'user', content: 'kept' }));
      const updated = okData<ConversationBody>(await api.update(space, id, { title: 'New' }));
      assert.equal(updated.title, 'New');
      assert.deepEqual(
        updated.messages.map((m) => m.content),
        ['kept'],
      );
      assert.equal(okData<ConversationBody>(await api.get(space, id)).title, 'New');
    });

    it('pins modelSourceId and modelId together; a pin to an unknown source is accepted; nulls unpin', async () => {
      const id = await createConversation();
      const pinned = okData<ConversationBody>(
        await api.update(space, id, { modelSourceId: SOURCE_ID, modelId: 'model-x' }),
      );
      assert.equal(pinned.modelSourceId, SOURCE_ID);
      assert.equal(pinned.modelId, 'model-x');
      const both = okData<ConversationBody>(
        await api.update(space, id, { title: 'Pinned', modelSourceId: randomUUID(), modelId: 'model-y' }),
      );
      assert.equal(both.title, 'Pinned');
      assert.equal(both.modelId, 'model-y');
      const unpinned = okData<ConversationBody>(await api.update(space, id, { modelSourceId: null, modelId: null }));
      assert.equal('modelSourceId' in unpinned, false);
      assert.equal('modelId' in unpinned, false);
    });

    it('answers 400 for half a pin, a non-UUID source, a bad title or nothing to update', async () => {
      const id = await createConversation();
      failure(await api.update(space, id, { modelSourceId: SOURCE_ID }), 400, /modelSourceId and modelId/);
      failure(await api.update(space, id, { modelId: 'model-x' }), 400, /modelSourceId and modelId/);
      failure(await api.update(space, id, { modelSourceId: 'abc', modelId: 'model-x' }), 400, /modelSourceId/);
      failure(await api.update(space, id, { modelSourceId: SOURCE_ID, modelId: 5 }), 400, /modelId/);
      failure(await api.update(space, id, { title: '' }), 400, /title/);
      failure(await api.update(space, id, { title: 5 }), 400, /title/);
      failure(await api.update(space, id, {}), 400, /Nothing to update/);
      const got = okData<ConversationBody>(await api.get(space, id));
      assert.equal(got.title, 'New conversation');
      assert.equal('modelSourceId' in got, false);
    });

    it('answers 404 for an unknown conversation or space', async () => {
      failure(await api.update(space, UNKNOWN_UUID, { title: 'x' }), 404, 'Conversation not found');
      failure(await api.update('no-such-space', UNKNOWN_UUID, { title: 'x' }), 404, 'Space not found');
    });
  });

  describe('delete', () => {
    it('answers {success:true}; the conversation, its messages and their thoughts are gone', async () => {
      const id = await createConversation({ title: 'Doomed' });
      const message = okData<Message>(
        await api.append(space, id, { role: 'assistant', content: 'x', thoughts: [{ id: 't', type: 'thinking' }] }),
      );
      assert.equal(okData<Thought[]>(await api.thoughts(space, id, message.id)).length, 1);
      const res = await api.remove(space, id);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { success: true });
      failure(await api.get(space, id), 404, 'Conversation not found');
      assert.deepEqual(okData(await api.thoughts(space, id, message.id)), []);
      assert.ok(okData<ConversationBody[]>(await api.list(space)).every((c) => c.id !== id));
      failure(await api.remove(space, id), 404, 'Conversation not found');
    });

    it('answers 404 for an unknown space, and for a conversation of another space (which stays)', async () => {
      const id = await createConversation();
      failure(await api.remove('no-such-space', id), 404, 'Space not found');
      if (otherSpace !== space) failure(await api.remove(otherSpace, id), 404, 'Conversation not found');
      okData(await api.get(space, id));
    });
  });

  describe('star', () => {
    it('answers {success:true} and sets starred without reordering the list', async () => {
      const id = await createConversation({ title: 'Star me' });
      const later = await createConversation({ title: 'Later' });
      const res = await api.star(space, id, { starred: true });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { success: true });
      const list = okData<ConversationBody[]>(await api.list(space));
      const entry = list.find((c) => c.id === id)!;
      assert.equal(entry.starred, true);
      assert.ok(
        list.findIndex((c) => c.id === later) < list.findIndex((c) => c.id === id),
        'starring does not move it up',
      );
      okData(await api.star(space, id, { starred: false }));
      assert.equal(okData<ConversationBody>(await api.get(space, id)).starred, false);
    });

    it('answers 400 when starred is not a boolean, 404 for unknown ids', async () => {
      const id = await createConversation();
      failure(await api.star(space, id, { starred: 'yes' }), 400, /starred/);
      failure(await api.star(space, id, {}), 400, /starred/);
      failure(await api.star(space, UNKNOWN_UUID, { starred: true }), 404, 'Conversation not found');
      failure(await api.star('no-such-space', id, { starred: true }), 404, 'Space not found');
    });
  });

  describe('append a message', () => {
    it('answers the stored message {id, role, content, createdAt}; optional facts come back as fields', async () => {
      const id = await createConversation();
      const user = okData<Message>(await api.append(space, id, { role: 'user', content: 'Hello' }));
      assert.deepEqual(Object.keys(user).sort(), ['content', 'createdAt', 'id', 'role']);
      assert.equal(user.role, 'user');
      assert.equal(user.content, 'Hello');
      const tokenUsage = { inputTokens: 10, outputTokens: 20, totalCostUsd: 0.01 };
      const reply = okData<Message>(
        await api.append(space, id, { role: 'assistant', content: '', tokenUsage, error: 'Stopped by user.' }),
      );
      assert.deepEqual(reply.tokenUsage, tokenUsage);
      assert.equal(reply.error, 'Stopped by user.');
      okData(await api.append(space, id, { role: 'system', content: 'note', unknownField: 1 }));
      const got = okData<ConversationBody>(await api.get(space, id));
      assert.deepEqual(
        got.messages.map((m) => [m.role, m.content]),
        [
          ['user', 'Hello'],
          ['assistant', ''],
          ['system', 'note'],
        ],
      );
      assert.deepEqual(got.messages[1]!.tokenUsage, tokenUsage);
      assert.equal('unknownField' in got.messages[2]!, false);
    });

    it('answers 400 for a bad role, content or thoughts, 404 for unknown ids', async () => {
      const id = await createConversation();
      failure(await api.append(space, id, { role: 'tool', content: 'x' }), 400, /role/);
      failure(await api.append(space, id, { content: 'x' }), 400, /role/);
      failure(await api.append(space, id, { role: 'user', content: 5 }), 400, /content/);
      failure(await api.append(space, id, { role: 'user' }), 400, /content/);
      failure(await api.append(space, id, { role: 'user', content: 'x', thoughts: 'no' }), 400, /thoughts/);
      failure(
        await api.append(space, id, { role: 'user', content: 'x', thoughts: [{ type: 'thinking' }] }),
        400,
        /thoughts\[0\]\.id/,
      );
      assert.equal(okData<ConversationBody>(await api.get(space, id)).messages.length, 0);
      failure(await api.append(space, UNKNOWN_UUID, { role: 'user', content: 'x' }), 404, 'Conversation not found');
      failure(await api.append('no-such-space', id, { role: 'user', content: 'x' }), 404, 'Space not found');
    });

    it('20 parallel appends yield 20 messages, each stored once, in one order', async () => {
      const id = await createConversation({ title: 'Busy' });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => api.append(space, id, { role: 'user', content: `m${i}` })),
      );
      const stored = results.map((r) => okData<Message>(r));
      assert.equal(new Set(stored.map((m) => m.id)).size, 20);
      const got = okData<ConversationBody>(await api.get(space, id));
      assert.equal(got.messageCount, 20);
      assert.equal(got.messages.length, 20);
      assert.deepEqual(got.messages.map((m) => m.content).sort(), Array.from({ length: 20 }, (_, i) => `m${i}`).sort());
      // Reading from the k-th message gives exactly the 20 - k after it: positions are consecutive.
      for (const k of [0, 7, 19]) {
        const window = okData<ConversationBody>(await api.get(space, id, got.messages[k]!.id));
        assert.deepEqual(
          window.messages.map((m) => m.id),
          got.messages.slice(k).map((m) => m.id),
        );
      }
    });
  });

  describe('thoughts', () => {
    it('round-trip: thoughts sent with a message come back in order, every field kept', async () => {
      const id = await createConversation();
      const thoughts = [
        { id: 'thought-thinking-1', type: 'thinking', content: 'Let me look.', timestamp: '2025-01-01T00:00:00.000Z' },
        {
          id: 'thought-tool-2',
          type: 'tool_use',
          content: '',
          timestamp: '2025-01-01T00:00:01.000Z',
          toolName: 'Read',
          toolInput: { file_path: 'notes.md' },
          toolOutput: 'line 1\nline 2 ' + 'x'.repeat(2000),
          isError: false,
        },
        { id: 'thought-text-3', type: 'text', content: 'Done.' },
      ];
      const message = okData<Message>(await api.append(space, id, { role: 'assistant', content: 'Done.', thoughts }));
      assert.equal('thoughts' in message, false, 'thoughts are read with their own operation');
      const got = okData<Array<Record<string, unknown>>>(await api.thoughts(space, id, message.id));
      assert.equal(got.length, 3);
      assert.deepEqual(got[0], thoughts[0]);
      assert.deepEqual(got[1], thoughts[1]);
      assert.equal(got[2]!.id, 'thought-text-3');
      assert.equal(got[2]!.content, 'Done.');
      assert.equal(typeof got[2]!.timestamp, 'string', 'a missing timestamp is filled in');
    });

    it('wrong ids answer an empty array with 200, never 404', async () => {
      const id = await createConversation();
      const message = okData<Message>(
        await api.append(space, id, { role: 'assistant', content: 'x', thoughts: [{ id: 't', type: 'thinking' }] }),
      );
      const none = await createConversation();
      for (const [s, c, m] of [
        [space, id, UNKNOWN_UUID],
        [space, id, 'nope'],
        [space, none, message.id],
        [space, UNKNOWN_UUID, message.id],
        [space, 'nope', 'nope'],
        ['no-such-space', id, message.id],
        ...(otherSpace !== space ? [[otherSpace, id, message.id]] : []),
      ] as Array<[string, string, string]>) {
        const res = await api.thoughts(s, c, m);
        assert.equal(res.status, 200, `${s}/${c}/${m}`);
        assert.deepEqual(res.body, { success: true, data: [] }, `${s}/${c}/${m}`);
      }
      // A message without thoughts.
      const plain = okData<Message>(await api.append(space, id, { role: 'user', content: 'y' }));
      assert.deepEqual(okData(await api.thoughts(space, id, plain.id)), []);
    });
  });

  describe('update the last message', () => {
    it('answers 404 "No messages" for an empty conversation and "Conversation not found" for an unknown one', async () => {
      const id = await createConversation();
      failure(await api.updateLast(space, id, { content: 'x' }), 404, 'No messages');
      failure(await api.updateLast(space, UNKNOWN_UUID, { content: 'x' }), 404, 'Conversation not found');
      failure(await api.updateLast('no-such-space', id, { content: 'x' }), 404, 'Space not found');
    });

    it('replaces content, merges facts (null removes one), replaces thoughts; earlier messages untouched', async () => {
      const id = await createConversation();
      const first = okData<Message>(await api.append(space, id, { role: 'user', content: 'question' }));
      const last = okData<Message>(
        await api.append(space, id, {
          role: 'assistant',
          content: 'partial',
          error: 'interrupted',
          thoughts: [{ id: 'a', type: 'thinking', content: 'old' }],
        }),
      );
      const updated = okData<Message>(
        await api.updateLast(space, id, {
          content: 'complete answer',
          tokenUsage: { outputTokens: 9 },
          error: null,
          thoughts: [
            { id: 'b', type: 'thinking', content: 'new 1' },
            { id: 'c', type: 'thinking', content: 'new 2' },
          ],
        }),
      );
      assert.equal(updated.id, last.id);
      assert.equal(updated.role, 'assistant');
      assert.equal(updated.content, 'complete answer');
      assert.deepEqual(updated.tokenUsage, { outputTokens: 9 });
      assert.equal('error' in updated, false);
      assert.equal(updated.createdAt, last.createdAt);
      const got = okData<ConversationBody>(await api.get(space, id));
      assert.deepEqual(
        got.messages.map((m) => [m.id, m.content]),
        [
          [first.id, 'question'],
          [last.id, 'complete answer'],
        ],
      );
      assert.deepEqual(
        okData<Thought[]>(await api.thoughts(space, id, last.id)).map((t) => [t.id, t.content]),
        [
          ['b', 'new 1'],
          ['c', 'new 2'],
        ],
      );
      // Without content or thoughts, only the facts change.
      const again = okData<Message>(await api.updateLast(space, id, { images: [{ name: 'a.png' }] }));
      assert.equal(again.content, 'complete answer');
      assert.deepEqual(again.images, [{ name: 'a.png' }]);
      assert.equal(okData<Thought[]>(await api.thoughts(space, id, last.id)).length, 2);
      failure(await api.updateLast(space, id, { content: 5 }), 400, /content/);
    });
  });
});

describe(`ephemeral conversations are deleted at the next start (${testMode()})`, () => {
  const services = testMode() === 'services';
  let shared: SharedServices | undefined;
  let dataDir: string | undefined;
  let first: TestServer | undefined;
  let second: TestServer | undefined;

  after(async () => {
    await first?.stop();
    await second?.stop();
    await shared?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    services
      ? 'with replicas (REDIS_URL) only those idle for an hour go; live ones and normal ones stay'
      : 'one process: every ephemeral conversation goes; normal ones stay',
    async () => {
      // Embedded: the same data folder; services: the same database and Redis prefix.
      if (services) shared = await createSharedServices();
      else dataDir = mkdtempSync(join(tmpdir(), 'svc-e2e-conv-'));
      const start = () => startServer(shared ? { services: shared } : { dataDir });

      first = await start();
      let api = client(first);
      const normal = okData<{ id: string }>(await api.create(TEMP, { title: 'keep me' })).id;
      const live = okData<{ id: string }>(await api.create(TEMP, { title: 'live', ephemeral: true })).id;
      const idle = okData<{ id: string }>(await api.create(TEMP, { title: 'idle', ephemeral: true })).id;
      okData(await api.append(TEMP, live, { role: 'user', content: 'hi' }));
      const listed = okData<ConversationBody[]>(await api.list(TEMP)).map((c) => c.id);
      assert.ok(listed.includes(normal));
      assert.ok(!listed.includes(live) && !listed.includes(idle), 'ephemeral conversations are not listed');
      if (shared) {
        // Make one look idle for two hours (the database clock decides).
        const db = new pg.Client({ connectionString: shared.databaseUrl });
        await db.connect();
        try {
          await db.query(`UPDATE "conversation" SET "updated_at" = now() - interval '2 hours' WHERE "id" = $1`, [idle]);
        } finally {
          await db.end();
        }
      }
      await first.stop();

      second = await start();
      api = client(second);
      okData(await api.get(TEMP, normal));
      failure(await api.get(TEMP, idle), 404, 'Conversation not found');
      if (services) {
        // Possibly in use on another replica: kept.
        assert.equal(okData<ConversationBody>(await api.get(TEMP, live)).messages.length, 1);
      } else {
        failure(await api.get(TEMP, live), 404, 'Conversation not found');
      }
      assert.match(second.output(), /ephemeral conversations deleted/);
    },
  );
});

/** A fresh, migrated database of this run's kind, for service-level tests on the real adapter. */
async function freshDataSource(): Promise<{ ds: DataSource; dispose(): Promise<void> }> {
  let url: string;
  let disposeDb: () => Promise<void>;
  if (testMode() === 'services') {
    const db = await createTestDatabase();
    url = db.url;
    disposeDb = () => db.drop();
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'svc-conv-db-'));
    const embedded = await EmbeddedPostgres.start(dir);
    url = embedded.url;
    disposeDb = async () => {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const ds = createDataSource(url, 10);
  await ds.initialize();
  await withTimeout(migrateUnderLock(ds), 30_000, 'migrations');
  return {
    ds,
    dispose: async () => {
      await ds.destroy().catch(() => undefined);
      await disposeDb();
    },
  };
}

describe(`ConversationsService on the real repository: the agent engine's operations (${testMode()})`, () => {
  let db: Awaited<ReturnType<typeof freshDataSource>> | undefined;
  let service: ConversationsService;
  let spaces: TypeormSpaceRepository;
  const spaceId = randomUUID();

  const count = async (table: string): Promise<number> =>
    ((await db!.ds.query(`SELECT count(*)::int AS n FROM "${table}"`)) as Array<{ n: number }>)[0]!.n;
  const notFound = (message: string) => (err: unknown) =>
    err instanceof DomainError && err.kind === 'not_found' && err.message === message;

  before(async () => {
    db = await freshDataSource();
    spaces = new TypeormSpaceRepository(db.ds, '/tmp/svc-test-data');
    service = new ConversationsService(new TypeormConversationRepository(db.ds), spaces, new SystemClock());
    await spaces.insert({
      id: spaceId,
      name: 'engine',
      icon: '🤖',
      color: null,
      path: join(tmpdir(), 'engine'),
      isTemp: false,
      preferences: {},
    });
  });
  after(async () => {
    await db?.dispose();
  });

  it('appendMessage stores meta and thoughts with the message; positions follow the order of appends', async () => {
    const { id } = await service.create(spaceId, { title: 'engine' });
    const user = await service.appendMessage(id, { role: 'user', content: 'Hi', meta: { images: [{ n: 1 }] } });
    const thoughts = [
      { id: 'thought-thinking-1', type: 'thinking', content: 'hm', timestamp: '2025-01-01T00:00:00.000Z' },
      {
        id: 'thought-tool-2',
        type: 'tool_use',
        content: '',
        timestamp: 'x',
        toolName: 'Bash',
        toolInput: { command: 'ls' },
      },
    ];
    const reply = await service.appendMessage(
      id,
      { role: 'assistant', content: 'Hello', meta: { tokenUsage: { inputTokens: 1 } } },
      thoughts,
    );
    assert.deepEqual([user.position, reply.position], [0, 1]);
    assert.deepEqual(reply.meta, { tokenUsage: { inputTokens: 1 } });
    assert.deepEqual(await service.thoughts(spaceId, id, reply.id), thoughts);
    const got = await service.get(spaceId, id);
    assert.deepEqual(
      got.messages.map((m) => [m.role, m.content, m.meta]),
      [
        ['user', 'Hi', { images: [{ n: 1 }] }],
        ['assistant', 'Hello', { tokenUsage: { inputTokens: 1 } }],
      ],
    );
    await assert.rejects(
      service.appendMessage(UNKNOWN_UUID, { role: 'user', content: 'x' }),
      notFound('Conversation not found'),
    );
    // With thoughts (the function's other form): nothing of it is written either.
    const thoughtRows = await count('conversation_thought');
    await assert.rejects(
      service.appendMessage(UNKNOWN_UUID, { role: 'assistant', content: 'x' }, thoughts),
      notFound('Conversation not found'),
    );
    assert.equal(await count('conversation_thought'), thoughtRows);
    await assert.rejects(service.appendMessage(id, { role: 'bot' as 'user', content: 'x' }), /role/);
  });

  it("saveThoughts replaces a message's thoughts; unknown message → not found; bad thoughts → invalid", async () => {
    const { id } = await service.create(spaceId, {});
    const m = await service.appendMessage(id, { role: 'assistant', content: '' }, [{ id: 'a', type: 'thinking' }]);
    await service.saveThoughts(m.id, [
      { id: 'b', type: 'thinking', content: '1' },
      { id: 'c', type: 'tool_use', content: '', toolName: 'Read', toolOutput: { big: 'x'.repeat(10_000) } },
    ]);
    const stored = await service.thoughts(spaceId, id, m.id);
    assert.deepEqual(
      stored.map((t) => [t.id, t.type]),
      [
        ['b', 'thinking'],
        ['c', 'tool_use'],
      ],
    );
    assert.equal((stored[1]!.toolOutput as { big: string }).big.length, 10_000);
    await service.saveThoughts(m.id, []);
    assert.deepEqual(await service.thoughts(spaceId, id, m.id), []);
    await assert.rejects(service.saveThoughts(UNKNOWN_UUID, []), notFound('Message not found'));
    await assert.rejects(service.saveThoughts('garbage', []), notFound('Message not found'));
    await assert.rejects(service.saveThoughts(m.id, [{ type: 'x' }]), /thoughts\[0\]\.id/);
  });

  it('updateLastMessage changes only the last message and merges meta; errors for empty or unknown', async () => {
    const { id } = await service.create(spaceId, {});
    await assert.rejects(service.updateLastMessage(id, { content: 'x' }), notFound('No messages'));
    await assert.rejects(service.updateLastMessage(UNKNOWN_UUID, { content: 'x' }), notFound('Conversation not found'));
    await service.appendMessage(id, { role: 'user', content: 'q' });
    await service.appendMessage(id, { role: 'assistant', content: '', meta: { error: 'e', images: [1] } });
    const updated = await service.updateLastMessage(
      id,
      { content: 'answer', meta: { error: null, tokenUsage: { outputTokens: 2 } } },
      [{ id: 't', type: 'thinking', content: 'done' }],
    );
    assert.equal(updated.content, 'answer');
    assert.deepEqual(updated.meta, { images: [1], tokenUsage: { outputTokens: 2 } });
    const got = await service.get(spaceId, id);
    assert.deepEqual(
      got.messages.map((m) => m.content),
      ['q', 'answer'],
    );
    assert.deepEqual(got.messages[1]!.meta, updated.meta);
    assert.equal((await service.thoughts(spaceId, id, updated.id))[0]!.content, 'done');
  });

  it('getPin answers the pin or null', async () => {
    const { id } = await service.create(spaceId, {});
    assert.equal(await service.getPin(id), null);
    assert.equal(await service.getPin(UNKNOWN_UUID), null);
    await service.update(spaceId, id, { modelSourceId: SOURCE_ID, modelId: 'm' });
    assert.deepEqual(await service.getPin(id), { modelSourceId: SOURCE_ID, modelId: 'm' });
    await service.update(spaceId, id, { modelSourceId: null, modelId: null });
    assert.equal(await service.getPin(id), null);
  });

  it('20 concurrent appends get distinct, consecutive positions 0..19', async () => {
    const { id } = await service.create(spaceId, {});
    const stored = await Promise.all(
      Array.from({ length: 20 }, (_, i) => service.appendMessage(id, { role: 'user', content: `m${i}` })),
    );
    assert.deepEqual(
      stored.map((m) => m.position).sort((a, b) => a - b),
      Array.from({ length: 20 }, (_, i) => i),
    );
    const got = await service.get(spaceId, id);
    assert.deepEqual(
      got.messages.map((m) => m.position),
      Array.from({ length: 20 }, (_, i) => i),
    );
    assert.equal(got.conversation.messageCount, 20);
  });

  // The one-round-trip write behind POST /api/agent/message (migration SubmitUserMessage1765300000000).
  const submission = (conversationId: string, content: string) => {
    const messageId = randomUUID();
    return {
      messageId,
      content,
      meta: { source: 'chat' },
      liveMeta: { source: 'chat', live: true },
      turn: { id: randomUUID(), kind: 'chat' as const, spaceId, conversationId, request: { messageId } },
    };
  };

  it('submitUserMessage queues the turn with its message; while it is active, stores live input', async () => {
    const { id } = await service.create(spaceId, {});
    const before = (await service.findById(id))!.updatedAt;
    const first = submission(id, 'hello');
    const queued = await service.submitUserMessage(id, first);
    assert.equal(queued.message.id, first.messageId);
    assert.equal(queued.message.position, 0);
    assert.equal(queued.message.role, 'user');
    assert.equal(queued.message.content, 'hello');
    assert.deepEqual(queued.message.meta, { source: 'chat' });
    assert.ok(queued.message.createdAt instanceof Date && !Number.isNaN(queued.message.createdAt.getTime()));
    assert.ok(queued.turn);
    assert.equal(queued.turn.id, first.turn.id);
    assert.equal(queued.turn.status, 'queued');
    assert.equal(queued.turn.kind, 'chat');
    assert.equal(queued.turn.conversationId, id);
    assert.equal(queued.turn.spaceId, spaceId);
    assert.deepEqual(queued.turn.request, { messageId: first.messageId });
    assert.deepEqual(queued.turn.pendingInputs, []);
    assert.ok(queued.turn.createdAt instanceof Date && !Number.isNaN(queued.turn.createdAt.getTime()));
    const turns = new TypeormTurnRepository(db!.ds);
    assert.deepEqual(await turns.findById(first.turn.id), queued.turn);
    const touched = await service.findById(id);
    assert.ok(touched!.updatedAt.getTime() >= before.getTime());
    assert.equal(touched!.messageCount, 1);

    const second = submission(id, 'more');
    const live = await service.submitUserMessage(id, second);
    assert.equal(live.turn, null);
    assert.equal(live.message.position, 1);
    assert.deepEqual(live.message.meta, { source: 'chat', live: true });
    assert.equal(await turns.findById(second.turn.id), null);
    assert.equal((await turns.findActive(id))?.id, first.turn.id);

    // Once the turn has ended, the next submission queues a new one.
    await turns.finish(first.turn.id, 'completed');
    const third = submission(id, 'again');
    const next = await service.submitUserMessage(id, third);
    assert.equal(next.turn?.id, third.turn.id);
    assert.equal(next.message.position, 2);

    await assert.rejects(
      service.submitUserMessage(randomUUID(), submission('x', 'x')),
      notFound('Conversation not found'),
    );
    await assert.rejects(
      service.submitUserMessage('no such id!', submission('x', 'x')),
      notFound('Conversation not found'),
    );
  });

  it("submitUserMessage with inSpace finds only that space's conversation; with unlessFirst, writes nothing into an empty one", async () => {
    const { id } = await service.create(spaceId, {});
    const turns = new TypeormTurnRepository(db!.ds);
    const elsewhere = submission(id, 'x');
    await assert.rejects(
      service.submitUserMessage(id, { ...elsewhere, inSpace: randomUUID() }),
      notFound('Conversation not found'),
    );
    const first = submission(id, 'first');
    assert.equal(await service.submitUserMessage(id, { ...first, inSpace: spaceId, unlessFirst: true }), 'first');
    assert.equal((await service.findById(id))!.messageCount, 0);
    assert.equal(await turns.findActive(id), null);
    const queued = await service.submitUserMessage(id, {
      ...first,
      meta: { snapshot: 'kept' },
      inSpace: spaceId,
      unlessFirst: false,
    });
    assert.ok(queued.turn);
    assert.deepEqual(queued.message.meta, { snapshot: 'kept' });
    // Not empty any more: unlessFirst changes nothing.
    const second = await service.submitUserMessage(id, {
      ...submission(id, 'second'),
      inSpace: spaceId,
      unlessFirst: true,
    });
    assert.ok(second !== 'first');
    assert.equal(second.message.position, 1);
    assert.equal(second.turn, null);
  });

  it('submitUserMessage of a message id stored already (derived from its source) writes nothing and answers exists', async () => {
    const { id } = await service.create(spaceId, {});
    const turns = new TypeormTurnRepository(db!.ds);
    const first = submission(id, 'from the platform');
    const queued = await service.submitUserMessage(id, { ...first, idFromSource: true });
    assert.ok(queued !== 'exists' && queued !== 'first' && queued.turn);
    await turns.finish(queued.turn.id, 'completed');
    const again = { ...submission(id, 'from the platform'), messageId: first.messageId, idFromSource: true };
    assert.equal(await service.submitUserMessage(id, again), 'exists');
    assert.equal((await service.findById(id))!.messageCount, 1);
    assert.equal(await turns.findActive(id), null, 'no second turn');
    assert.equal(await turns.findById(again.turn.id), null);
    // Without idFromSource a taken id is a fault, never a quiet repeat.
    await assert.rejects(
      service.submitUserMessage(id, { ...submission(id, 'x'), messageId: first.messageId }),
      /is stored already/,
    );
  });

  it('submitUserMessage hands live input to the active turn in the same write, unless that turn is stopping', async () => {
    const { id } = await service.create(spaceId, {});
    const turns = new TypeormTurnRepository(db!.ds);
    const first = await service.submitUserMessage(id, submission(id, 'first'));
    assert.ok(first.turn);
    const second = submission(id, 'second');
    const liveInput = { messageId: second.messageId, content: 'second', createdAt: new Date().toISOString() };
    const live = await service.submitUserMessage(id, { ...second, liveInput });
    assert.deepEqual([live.turn, 'handed' in live && live.handed], [null, true]);
    assert.deepEqual((await turns.findById(first.turn.id))?.pendingInputs, [liveInput]);

    await turns.requestStop(id);
    const third = submission(id, 'third');
    const refused = await service.submitUserMessage(id, {
      ...third,
      liveInput: { messageId: third.messageId, content: 'third', createdAt: new Date().toISOString() },
    });
    assert.deepEqual([refused.turn, 'handed' in refused && refused.handed], [null, false]);
    assert.deepEqual((await turns.findById(first.turn.id))?.pendingInputs, [liveInput], 'a stopping turn takes none');
    assert.equal(refused.message.position, 2, 'the message is recorded all the same');

    // Taken once, in one statement: the list as it was, then emptied; a second take finds nothing.
    assert.deepEqual(await turns.takePendingInputs(first.turn.id), [liveInput]);
    assert.deepEqual((await turns.findById(first.turn.id))?.pendingInputs, []);
    assert.deepEqual(await turns.takePendingInputs(first.turn.id), []);
    assert.deepEqual(await turns.takePendingInputs(randomUUID()), [], 'a turn that is gone has none');
  });

  it('an ended turn is unannounced until endAnnounced (complete_turn and finish mark it); the sweep uses its partial index', async () => {
    const turns = new TypeormTurnRepository(db!.ds);
    const ended: string[] = [];
    for (const end of ['complete', 'finish'] as const) {
      const { id } = await service.create(spaceId, {});
      const queued = await service.submitUserMessage(id, submission(id, end));
      assert.ok(queued.turn);
      const turnId = queued.turn.id;
      const claimed = await turns.claim(turnId, 'replica-a');
      assert.equal(claimed?.status, 'running', 'the claim answers the record as claimed');
      assert.equal(claimed.replicaId, 'replica-a');
      if (end === 'complete') assert.ok(await turns.complete(turnId, randomUUID()));
      else assert.ok(await turns.finish(turnId, 'interrupted', 'Stopped by user.'));
      ended.push(turnId);
    }
    const unannounced = async () =>
      (await turns.findUnannounced(new Date(Date.now() + 60_000))).map((t) => t.id).filter((id) => ended.includes(id));
    assert.deepEqual((await unannounced()).sort(), [...ended].sort());
    assert.deepEqual(await turns.findUnannounced(new Date(Date.now() - 60_000)), [], 'not before their time');
    const [completed, interrupted] = await Promise.all(ended.map((id) => turns.findById(id)));
    assert.deepEqual(
      [completed?.status, interrupted?.status, interrupted?.error],
      ['completed', 'interrupted', 'Stopped by user.'],
    );
    for (const id of ended) await turns.endAnnounced(id);
    assert.deepEqual(await unannounced(), []);

    const plan = await db!.ds.transaction(async (tx) => {
      await tx.query(`SET LOCAL enable_seqscan = off`);
      return (await tx.query(
        `EXPLAIN SELECT * FROM "agent_turn" WHERE "end_pending_at" IS NOT NULL AND "end_pending_at" < now() ORDER BY "end_pending_at" LIMIT 200`,
      )) as Array<{ 'QUERY PLAN': string }>;
    });
    assert.match(plan.map((r) => r['QUERY PLAN']).join('\n'), /IDX_agent_turn_end_pending/);
  });

  it('submitUserMessage adds firstMeta to a first message only (the meta or the live meta)', async () => {
    const { id } = await service.create(spaceId, {});
    const first = await service.submitUserMessage(id, {
      ...submission(id, 'first'),
      meta: { mine: 1 },
      firstMeta: { snapshot: 'kept' },
    });
    assert.ok(first.turn);
    assert.deepEqual(first.message.meta, { mine: 1, snapshot: 'kept' });
    const live = await service.submitUserMessage(id, {
      ...submission(id, 'live'),
      liveMeta: { live: true },
      firstMeta: { snapshot: 'not kept' },
    });
    assert.equal(live.turn, null);
    assert.deepEqual(live.message.meta, { live: true });
  });

  it('20 concurrent submissions (with 10 plain appends): one turn queued, the rest live input, positions 0..29', async () => {
    const { id } = await service.create(spaceId, {});
    const submissions = Array.from({ length: 20 }, (_, i) => submission(id, `s${i}`));
    const [submitted, appended] = await Promise.all([
      Promise.all(submissions.map((s) => service.submitUserMessage(id, s))),
      Promise.all(
        Array.from({ length: 10 }, (_, i) => service.appendMessage(id, { role: 'assistant', content: `a${i}` })),
      ),
    ]);
    const queued = submitted.filter((s) => s.turn !== null);
    assert.equal(queued.length, 1);
    assert.ok(submitted.filter((s) => s.turn === null).every((s) => s.message.meta.live === true));
    assert.equal(queued[0]!.message.meta.live, undefined);
    const turns = new TypeormTurnRepository(db!.ds);
    assert.equal((await turns.findActive(id))?.id, queued[0]!.turn!.id);
    const [{ n }] = (await db!.ds.query(`SELECT count(*)::int AS n FROM "agent_turn" WHERE "conversation_id" = $1`, [
      id,
    ])) as Array<{ n: number }>;
    assert.equal(n, 1);
    assert.deepEqual(
      [...submitted.map((s) => s.message.position), ...appended.map((m) => m.position)].sort((a, b) => a - b),
      Array.from({ length: 30 }, (_, i) => i),
    );
    const got = await service.get(spaceId, id);
    assert.deepEqual(
      got.messages.map((m) => m.position),
      Array.from({ length: 30 }, (_, i) => i),
    );
    assert.deepEqual(
      new Set(got.messages.filter((m) => m.role === 'user').map((m) => m.id)),
      new Set(submissions.map((s) => s.messageId)),
    );
  });

  it('sweepEphemeral: replicated keeps recently updated ones; single process removes all', async () => {
    const fresh = await service.create(spaceId, { ephemeral: true });
    const idle = await service.create(spaceId, { ephemeral: true });
    const normal = await service.create(spaceId, {});
    await db!.ds.query(`UPDATE "conversation" SET "updated_at" = now() - interval '61 minutes' WHERE "id" = $1`, [
      idle.id,
    ]);
    assert.equal(await service.sweepEphemeral(true), 1);
    assert.equal(await service.findById(idle.id), null);
    assert.notEqual(await service.findById(fresh.id), null);
    assert.equal(await service.sweepEphemeral(false), 1);
    assert.equal(await service.findById(fresh.id), null);
    assert.notEqual(await service.findById(normal.id), null);
  });

  it('deleteAllInSpace (ConversationCleanup) removes conversations, messages and thoughts of that space only', async () => {
    const other = randomUUID();
    await spaces.insert({
      id: other,
      name: 'other',
      icon: '📁',
      color: null,
      path: '/tmp/o',
      isTemp: false,
      preferences: {},
    });
    const kept = await service.create(other, {});
    await service.appendMessage(kept.id, { role: 'user', content: 'k' }, [{ id: 'k', type: 'thinking' }]);
    await service.deleteAllInSpace(spaceId);
    assert.deepEqual(await service.list(spaceId), []);
    assert.equal(await count('conversation'), 1);
    assert.equal(await count('conversation_message'), 1);
    assert.equal(await count('conversation_thought'), 1);
    // Deleting the space row itself cascades too.
    await spaces.remove(other);
    assert.equal(await count('conversation'), 0);
    assert.equal(await count('conversation_message'), 0);
    assert.equal(await count('conversation_thought'), 0);
    await assert.rejects(service.list(other), notFound('Space not found'));
  });
});
