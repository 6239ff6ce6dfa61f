import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient } from '#testing/api-client.js';
import { DataSource } from 'typeorm';
import { ConversationsService } from '#core/conversations/conversations.service.js';
import { DomainError } from '#core/errors/domain-error.js';
import { SystemClock } from '#core/ports/clock.port.js';
import { TypeormTurnRepository } from '#infra/agent/typeorm-turn.repository.js';
import { TypeormConversationRepository } from '#infra/conversations/typeorm-conversation.repository.js';
import { createDataSource, migrateUnderLock, pendingSchemaChanges } from '#infra/database/database.js';
import { EmbeddedPostgres } from '#infra/database/embedded-postgres.js';
import { MIGRATIONS } from '#infra/database/schema.js';
import { TypeormSpaceRepository } from '#infra/spaces/typeorm-space.repository.js';
import { withTimeout } from '#testing/fakes.js';
import { type FreshDatabase, freshDatabase } from '#testing/fresh-database.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer } from '#testing/test-server.js';

/** The migrations of the schema before turn kinds and text conversation ids. */
const BEFORE_TEXT_IDS = MIGRATIONS.slice(
  0,
  MIGRATIONS.findIndex((M) => new M().name === 'TurnKind1764000000000'),
);

const OLD_CONVERSATION = '5b0e6f4a-2c8d-4e1f-9a3b-7c6d5e4f3a2b';
const OLD_MESSAGE = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const OLD_TURN = 'f0e1d2c3-b4a5-4968-8776-655443322110';
const SPACE = 'space-ids';

const columnType = async (ds: DataSource, table: string, column: string): Promise<string> =>
  (
    (await ds.query(`SELECT data_type FROM information_schema.columns WHERE table_name = $1 AND column_name = $2`, [
      table,
      column,
    ])) as Array<{ data_type: string }>
  )[0]!.data_type;

describe(`conversation ids as text (${testMode()})`, () => {
  let db: FreshDatabase | undefined;
  let ds: DataSource | undefined;

  before(async () => {
    db = await freshDatabase();
    // The schema as it was: conversation ids were uuid columns.
    const old = new DataSource({
      type: 'postgres',
      url: db.url,
      migrations: BEFORE_TEXT_IDS,
      migrationsTableName: 'typeorm_migrations',
    });
    await old.initialize();
    await old.runMigrations({ transaction: 'each' });
    await old.query(
      `INSERT INTO "space" ("id", "name", "icon", "path", "sort_order", "preferences") VALUES ($1, 'ids', 'x', '/tmp/ids', 0, '{}')`,
      [SPACE],
    );
    await old.query(`INSERT INTO "conversation" ("id", "space_id", "title") VALUES ($1, $2, 'old one')`, [
      OLD_CONVERSATION,
      SPACE,
    ]);
    await old.query(
      `INSERT INTO "conversation_message" ("id", "conversation_id", "position", "role", "content", "meta") VALUES ($1, $2, 0, 'user', 'kept?', '{}')`,
      [OLD_MESSAGE, OLD_CONVERSATION],
    );
    await old.query(`INSERT INTO "conversation_thought" ("message_id", "position", "data") VALUES ($1, 0, $2)`, [
      OLD_MESSAGE,
      JSON.stringify({ id: 't1', type: 'thinking', content: 'hm', timestamp: 'x' }),
    ]);
    await old.query(
      `INSERT INTO "agent_turn" ("id", "conversation_id", "space_id", "status", "request", "pending_inputs", "thoughts") VALUES ($1, $2, $3, 'completed', '{}', '[]', '[]')`,
      [OLD_TURN, OLD_CONVERSATION, SPACE],
    );
    assert.equal(await columnType(old, 'conversation', 'id'), 'uuid');
    await old.destroy();

    ds = createDataSource(db.url, 4);
    await ds.initialize();
  });

  after(async () => {
    if (ds?.isInitialized) await ds.destroy().catch(() => undefined);
    await db?.dispose();
  });

  it('the migration turns the id columns into text and keeps every row; old turns are chats', async () => {
    // These two, then any migration added after them (the apps tables, ...).
    const later = MIGRATIONS.slice(BEFORE_TEXT_IDS.length).map((M) => new M().name);
    assert.deepEqual(later.slice(0, 2), ['TurnKind1764000000000', 'ConversationTextIds1764000000100']);
    assert.deepEqual(await withTimeout(migrateUnderLock(ds!), 30_000, 'migrations'), later);
    assert.equal(await columnType(ds!, 'conversation', 'id'), 'text');
    assert.equal(await columnType(ds!, 'conversation_message', 'conversation_id'), 'text');
    assert.deepEqual(await pendingSchemaChanges(ds!), []);

    const conversations = new TypeormConversationRepository(ds!);
    const found = await conversations.findWithMessages(OLD_CONVERSATION);
    assert.equal(found?.conversation.title, 'old one');
    assert.deepEqual(
      found?.messages.map((m) => [m.id, m.content]),
      [[OLD_MESSAGE, 'kept?']],
    );
    assert.equal((await conversations.thoughtsOf(OLD_CONVERSATION, OLD_MESSAGE))[0]?.id, 't1');
    // A UUID still names its conversation in upper case, as the uuid column allowed.
    assert.equal((await conversations.findById(OLD_CONVERSATION.toUpperCase()))?.id, OLD_CONVERSATION);
    assert.equal((await new TypeormTurnRepository(ds!).findById(OLD_TURN))?.kind, 'chat');
  });

  it('non-UUID ids round-trip through the repository: app-chat:<appId> and a caller’s thread id', async () => {
    const conversations = new TypeormConversationRepository(ds!);
    const turns = new TypeormTurnRepository(ds!);
    for (const id of [`app-chat:${randomUUID()}`, 'customer-42:support.thread@2']) {
      const created = await conversations.create({
        id,
        spaceId: SPACE,
        title: id,
        ephemeral: false,
        reasoningEffort: null,
      });
      assert.equal(created.id, id);
      const user = await conversations.appendMessage(id, { role: 'user', content: 'hi', meta: {} });
      const reply = await conversations.appendMessage(id, { role: 'assistant', content: 'hello', meta: {} }, [
        { id: 'th-1', type: 'thinking', content: 'so', timestamp: 'x' },
      ]);
      assert.deepEqual([user?.conversationId, reply?.conversationId], [id, id]);
      assert.deepEqual(
        (await conversations.findWithMessages(id))?.messages.map((m) => m.content),
        ['hi', 'hello'],
      );
      assert.deepEqual(
        (await conversations.findWithMessages(id, reply!.id))?.messages.map((m) => m.content),
        ['hello'],
      );
      assert.equal((await conversations.thoughtsOf(id, reply!.id))[0]?.id, 'th-1');
      assert.equal((await conversations.updateLastMessage(id, { content: 'hello!' }))?.content, 'hello!');
      assert.equal((await conversations.update(id, { title: 'renamed' }))?.title, 'renamed');
      assert.equal(await conversations.setStarred(id, true), true);
      assert.ok((await conversations.listForSpace(SPACE)).some((c) => c.id === id));

      const turn = await turns.createQueued({
        id: randomUUID(),
        kind: 'app-chat',
        conversationId: id,
        spaceId: SPACE,
        request: {},
      });
      assert.equal(turn?.kind, 'app-chat');
      assert.equal((await turns.findActive(id))?.id, turn?.id);
      assert.equal(await turns.finish(turn!.id, 'completed'), true);

      assert.equal(await conversations.remove(id), true);
      assert.equal(await conversations.findById(id), null);
      assert.deepEqual(
        (await ds!.query(`SELECT count(*)::int AS n FROM "conversation_message" WHERE "conversation_id" = $1`, [id]))[0]
          .n,
        0,
        'messages go with their conversation',
      );
    }
  });

  it('ConversationsService.openWithId creates a thread once, concurrently too; another space’s id is a conflict', async () => {
    const service = new ConversationsService(
      new TypeormConversationRepository(ds!),
      new TypeormSpaceRepository(ds!, '/tmp/svc-test-data'),
      new SystemClock(),
    );
    const id = `app-chat:${randomUUID()}`;
    const opened = await Promise.all(
      Array.from({ length: 5 }, () => service.openWithId(SPACE, id, { title: 'Digital human' })),
    );
    assert.deepEqual(new Set(opened.map((c) => c.id)), new Set([id]));
    assert.equal(opened[0]!.title, 'Digital human');
    await service.appendMessage(id, { role: 'user', content: 'kept' });
    assert.equal((await service.openWithId(SPACE, id, { title: 'ignored' })).messageCount, 1);
    assert.equal((await service.get(SPACE, id)).conversation.title, 'Digital human');

    await ds!.query(
      `INSERT INTO "space" ("id", "name", "icon", "path", "sort_order", "preferences") VALUES ('other-space', 'o', 'x', '/tmp/o', 1, '{}')`,
    );
    await assert.rejects(service.openWithId('other-space', id), (err: unknown) => {
      assert.ok(err instanceof DomainError && err.kind === 'conflict', String(err));
      return true;
    });
    await assert.rejects(service.openWithId(SPACE, 'no spaces allowed'), /conversationId must be/);
    await assert.rejects(service.openWithId('no-such-space', 'fine-id'), /Space not found/);
  });

  it('ids that can never exist find nothing and are refused on create', async () => {
    const conversations = new TypeormConversationRepository(ds!);
    for (const id of ['has space', '../up', '', 'x'.repeat(129), 'app-chat:Ω']) {
      assert.equal(await conversations.findById(id), null, id);
      assert.equal(await conversations.findWithMessages(id), null, id);
      assert.equal(await conversations.appendMessage(id, { role: 'user', content: 'x', meta: {} }), null, id);
      assert.equal(await conversations.remove(id), false, id);
    }
    await assert.rejects(
      conversations.create({ id: 'has space', spaceId: SPACE, title: 't', ephemeral: false, reasoningEffort: null }),
      /id must be 1 to 128/,
    );
  });
});

describe(`a conversation with a non-UUID id over HTTP (${testMode()})`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-ids-'));
  let services: SharedServices | undefined;

  before(async () => {
    if (testMode() === 'services') services = await createSharedServices();
  });

  after(async () => {
    await services?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Runs `fn` on the server's database while no server holds it (the embedded one is in-process). */
  async function withServerDatabase(fn: (ds: DataSource) => Promise<void>): Promise<void> {
    const embedded = services ? null : await EmbeddedPostgres.start(dataDir);
    const ds = createDataSource(services?.databaseUrl ?? embedded!.url, 2);
    await ds.initialize();
    try {
      await fn(ds);
    } finally {
      await ds.destroy();
      await embedded?.stop();
    }
  }

  it('is read, appended to and deleted through the conversation routes; unknown ids stay 404', async () => {
    const first = await startServer({ dataDir, ...(services ? { services } : {}) });
    const space = (await apiClient(first).post('/api/spaces', { name: 'ids' })).body.data.id as string;
    await first.stop();

    const id = `app-chat:${randomUUID()}`;
    await withServerDatabase(async (ds) => {
      const conversations = new TypeormConversationRepository(ds);
      await conversations.create({ id, spaceId: space, title: 'App chat', ephemeral: false, reasoningEffort: null });
      await conversations.appendMessage(id, { role: 'user', content: 'hello app', meta: {} });
    });

    const server = await startServer({ dataDir, ...(services ? { services } : {}) });
    try {
      const http = apiClient(server);
      const path = `/api/spaces/${space}/conversations/${encodeURIComponent(id)}`;
      const got = await http.get(path);
      assert.equal(got.status, 200, JSON.stringify(got.body));
      assert.equal(got.body.data.id, id);
      assert.deepEqual(
        got.body.data.messages.map((m: { content: string }) => m.content),
        ['hello app'],
      );
      const appended = await http.post(`${path}/messages`, { role: 'assistant', content: 'hi' });
      assert.equal(appended.status, 200, JSON.stringify(appended.body));
      assert.equal((await http.get(path)).body.data.messageCount, 2);

      for (const unknown of [`app-chat:${randomUUID()}`, 'never-created', 'bad%20id']) {
        const res = await http.get(`/api/spaces/${space}/conversations/${unknown}`);
        assert.equal(res.status, 404, unknown);
        assert.equal(res.body.error, 'Conversation not found');
      }
      assert.equal((await http.del(path)).status, 200);
      assert.equal((await http.get(path)).status, 404);
    } finally {
      await server.stop();
    }
  });
});
