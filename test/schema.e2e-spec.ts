import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { IDLE_AUTOMATION } from '#core/kernel/app.js';
import { validateSpec } from '#core/kernel/app-spec/validate-spec.js';
import { ALREADY_INSTALLED } from '#core/ports/app.repository.port.js';
import { ConversationRepository } from '#core/ports/conversation.repository.port.js';
import { TypeormAppRepository, webhookPathCondition, webhookPathProbe } from '#infra/apps/typeorm-app.repository.js';
import {
  COMPACTION_SUMMARY_CONDITION,
  RUN_MESSAGES_CONDITION,
  TypeormConversationRepository,
} from '#infra/conversations/typeorm-conversation.repository.js';
import { DataFolderLock } from '#infra/database/data-folder-lock.js';
import {
  createDataSource,
  KEPT_CONNECTIONS,
  migrateUnderLock,
  pendingSchemaChanges,
  warmConnections,
} from '#infra/database/database.js';
import { MIGRATIONS } from '#infra/database/schema.js';
import { TypeormSettingsRepository } from '#infra/database/setting.repository.js';
import { withTimeout } from '#testing/fakes.js';
import { type FreshDatabase, freshDatabase } from '#testing/fresh-database.js';
import { createTestDatabase, testMode } from '#testing/test-env.js';

const MIGRATION_NAMES = MIGRATIONS.map((M) => new M().name);

async function migrationRows(ds: DataSource): Promise<Array<{ name: string; count: number }>> {
  const rows = (await ds.query(
    'SELECT name, count(*)::int AS count FROM typeorm_migrations GROUP BY name ORDER BY name',
  )) as Array<{ name: string; count: number }>;
  return rows;
}

describe(`database schema (${testMode()})`, () => {
  let db: FreshDatabase | undefined;
  let ds: DataSource | undefined;

  before(async () => {
    db = await freshDatabase();
    ds = createDataSource(db.url, 4);
    await ds.initialize();
  });

  after(async () => {
    if (ds?.isInitialized) await ds.destroy().catch(() => undefined);
    await db?.dispose();
  });

  /**
   * The plan of `sql` with sequential scans priced out: whether an index serves the condition the
   * repository writes (a small table would otherwise be scanned either way).
   */
  async function planWithoutSeqScans(sql: string, params: unknown[]): Promise<string> {
    const runner = ds!.createQueryRunner();
    try {
      await runner.startTransaction();
      await runner.query('SET LOCAL enable_seqscan = off');
      const plan = (await runner.query(`EXPLAIN ${sql}`, params)) as Array<{ 'QUERY PLAN': string }>;
      return plan.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
    }
  }

  /** A conversation of its own in a space of its own (a space row written as the schema has it). */
  async function conversationInNewSpace(name: string) {
    const spaceId = `${name}-space-${randomUUID()}`;
    await ds!.query(
      `INSERT INTO "space" ("id", "name", "icon", "path", "sort_order", "preferences") VALUES ($1, $2, 'x', $1, 0, '{}')`,
      [spaceId, name],
    );
    const conversations = new TypeormConversationRepository(ds!);
    const conversationId = randomUUID();
    await conversations.create({ id: conversationId, spaceId, title: name, ephemeral: false, reasoningEffort: null });
    return { conversations, conversationId };
  }

  it('migrateUnderLock applies every migration, in order, on a fresh database', async () => {
    const applied = await withTimeout(migrateUnderLock(ds!), 30_000, 'migrateUnderLock');
    assert.deepEqual(applied, MIGRATION_NAMES);
    assert.deepEqual(
      await migrationRows(ds!),
      [...MIGRATION_NAMES].sort().map((name) => ({ name, count: 1 })),
    );
  });

  it('entities and migrations agree: pendingSchemaChanges is empty', async () => {
    assert.deepEqual(await pendingSchemaChanges(ds!), []);
  });

  it('settings compareAndSet is atomic: concurrent read-modify-write loops lose no increment', async () => {
    const settings = new TypeormSettingsRepository(ds!);
    assert.equal(await settings.compareAndSet('cas-test', null, { n: 0 }), true);
    assert.equal(await settings.compareAndSet('cas-test', null, { n: 99 }), false, 'insert only when absent');
    assert.equal(await settings.compareAndSet('cas-test', { n: 5 }, { n: 6 }), false, 'stale expectation');
    const increment = async (): Promise<void> => {
      for (;;) {
        const current = (await settings.get<{ n: number }>('cas-test'))!;
        if (await settings.compareAndSet('cas-test', current, { n: current.n + 1 })) return;
      }
    };
    await Promise.all(Array.from({ length: 12 }, increment));
    assert.deepEqual(await settings.get('cas-test'), { n: 12 });
  });

  it('running migrateUnderLock again applies nothing', async () => {
    assert.deepEqual(await migrateUnderLock(ds!), []);
    assert.equal(
      (await migrationRows(ds!)).every((r) => r.count === 1),
      true,
    );
  });

  it('the migrated schema serves the settings repository', async () => {
    const settings = new TypeormSettingsRepository(ds!);
    assert.equal(await settings.get('missing'), null);
    await settings.set('answer', { value: 42, list: ['a'] });
    assert.deepEqual(await settings.get('answer'), { value: 42, list: ['a'] });
    await settings.set('answer', 'replaced');
    assert.equal(await settings.get('answer'), 'replaced');
  });

  it('the app repository: one install per place even when installs race; activity pages newest first', async () => {
    const apps = new TypeormAppRepository(ds!);
    const spec = validateSpec(
      { name: 'Racer', version: '1', author: 'a', description: 'd', type: 'skill', system_prompt: 'p' },
      Date.now(),
    );
    const newApp = (spaceId: string | null) => ({
      id: randomUUID(),
      spaceId,
      spec,
      status: 'active' as const,
      userConfig: {},
      userOverrides: {},
      permissions: { granted: [], denied: [] },
      upgradeStrategy: 'notify' as const,
      builtIn: false,
      automation: { ...IDLE_AUTOMATION, nextRunAtMs: 1_795_437_805_190 },
    });
    const results = await Promise.all(Array.from({ length: 6 }, () => apps.install(newApp('space-1'))));
    const winners = results.filter((r) => r !== ALREADY_INSTALLED);
    assert.equal(winners.length, 1, JSON.stringify(results));
    const first = winners[0] as Exclude<(typeof results)[number], typeof ALREADY_INSTALLED>;
    assert.equal(first.automation.nextRunAtMs, 1_795_437_805_190, 'epoch ms survive bigint columns');
    const global = await apps.install(newApp(null));
    assert.notEqual(global, ALREADY_INSTALLED, 'another place is another install');
    assert.equal(await apps.install(newApp(null)), ALREADY_INSTALLED);

    assert.deepEqual(
      (await apps.list({ spaceId: null })).map((a) => a.id),
      [(global as { id: string }).id],
    );
    await apps.update(first.id, { status: 'uninstalled', uninstalledAt: new Date() });
    assert.deepEqual(await apps.list({ spaceId: 'space-1' }), []);
    const second = await apps.install(newApp('space-1'));
    assert.notEqual(second, ALREADY_INSTALLED, 'an uninstalled copy frees the place');
    assert.equal(await apps.update(first.id, { status: 'active' }), ALREADY_INSTALLED);
    assert.equal((await apps.findById(first.id))!.status, 'uninstalled', 'a refused change writes nothing');

    const appId = (second as { id: string }).id;
    // Automation fields alone are one plain UPDATE: every field round-trips, updatedAt moves.
    const before = (await apps.findById(appId))!;
    const automation = {
      runningCount: 1,
      nextRunAtMs: null,
      lastRunAtMs: 1_795_437_805_191,
      lastStatus: 'error' as const,
      lastError: 'it failed',
      pendingEscalationId: 'entry-9',
    };
    const changed = await apps.update(appId, { automation });
    assert.ok(changed && changed !== ALREADY_INSTALLED);
    assert.deepEqual(changed.automation, automation);
    assert.deepEqual((await apps.findById(appId))!.automation, automation);
    assert.ok(changed.updatedAt.getTime() >= before.updatedAt.getTime());
    assert.deepEqual({ ...changed, automation: before.automation, updatedAt: before.updatedAt }, before);
    assert.equal(await apps.update(randomUUID(), { automation: { runningCount: 0 } }), null);
    await apps.update(appId, { automation: { runningCount: 0, lastStatus: null, lastError: null } });
    for (let i = 1; i <= 5; i++) {
      await apps.addActivity({
        id: `entry-${i}`,
        appId,
        runId: 'run-1',
        type: 'milestone',
        ts: i * 1000,
        content: { i },
      });
    }
    assert.deepEqual(
      (await apps.listActivity(appId, { limit: 2 })).map((e) => e.id),
      ['entry-5', 'entry-4'],
    );
    // A run's end writes its entry only while its app exists, in one statement.
    const ending = { runId: 'run-1', type: 'run_complete' as const, ts: 5500, content: { summary: 'done', data: [1] } };
    assert.equal(await apps.addActivityIfAppExists({ id: 'entry-end', appId, ...ending }), true);
    assert.deepEqual(await apps.findActivity(appId, 'entry-end'), { id: 'entry-end', appId, ...ending });
    const gone = randomUUID();
    assert.equal(await apps.addActivityIfAppExists({ id: 'entry-orphan', appId: gone, ...ending }), false);
    assert.equal(await apps.findActivity(gone, 'entry-orphan'), null, 'nothing written for an app that is gone');
    await ds!.query(`DELETE FROM "app_activity" WHERE "id" = 'entry-end'`);
    const page = await apps.listActivity(appId, { limit: 10, before: 3000 });
    assert.deepEqual(
      page.map((e) => [e.id, e.ts, e.content]),
      [
        ['entry-2', 2000, { i: 2 }],
        ['entry-1', 1000, { i: 1 }],
      ],
    );
    // What the failure count reads: types, and an outage flag only where a run's error was one.
    const outcomes: Array<[string, Record<string, unknown>]> = [
      ['run_error', { error: 'model said no', outage: false }],
      ['run_error', { error: 'database away', outage: true }],
      ['output', { text: 'x'.repeat(10_000) }],
    ];
    for (const [i, [type, content]] of outcomes.entries()) {
      await apps.addActivity({
        id: `outcome-${i}`,
        appId,
        runId: 'run-2',
        type: type as 'output',
        ts: 6000 + i,
        content,
      });
    }
    assert.deepEqual(await apps.recentOutcomes(appId, 4), [
      { type: 'output', content: {} },
      { type: 'run_error', content: { outage: true } },
      { type: 'run_error', content: {} },
      { type: 'milestone', content: {} },
    ]);
    assert.deepEqual((await apps.deleteAllInSpace('space-1')).sort(), [first.id, appId].sort());
    assert.deepEqual(await apps.listActivity(appId, { limit: 10 }), []);
  });

  it('the app repository lists apps of one type, alone or with a webhook path', async () => {
    const apps = new TypeormAppRepository(ds!);
    const base = validateSpec(
      { name: 'Typed', version: '1', author: 'a', description: 'd', type: 'skill', system_prompt: 'p' },
      Date.now(),
    );
    const install = async (name: string, spec: Record<string, unknown>) => {
      const app = await apps.install({
        id: randomUUID(),
        spaceId: 'typed-space',
        spec: { ...base, name, ...spec } as typeof base,
        status: 'active',
        userConfig: {},
        userOverrides: {},
        permissions: { granted: [], denied: [] },
        upgradeStrategy: 'notify',
        builtIn: false,
        automation: { ...IDLE_AUTOMATION },
      });
      return (app as { id: string }).id;
    };
    const server = await install('Typed server', { type: 'mcp' });
    const hook = { id: 'h', source: { type: 'webhook', config: { path: 'typed-hook' } } };
    const automation = await install('Typed automation', { type: 'automation', subscriptions: [hook] });
    await install('Typed skill', {});
    const ids = async (filter: Parameters<typeof apps.list>[0]) =>
      (await apps.list({ spaceId: 'typed-space', ...filter })).map((a) => a.id);
    assert.deepEqual(await ids({ type: 'mcp' }), [server]);
    assert.deepEqual(await ids({ type: 'mcp', status: 'active' }), [server]);
    assert.deepEqual(await ids({ type: 'automation', webhookPath: 'typed-hook' }), [automation]);
    assert.deepEqual(await ids({ type: 'mcp', webhookPath: 'typed-hook' }), []);
    assert.equal((await ids({})).length, 3);
    await apps.deleteAllInSpace('typed-space');
  });

  it("a run's messages are read alone, in order, through the index on the run id", async () => {
    const { conversations, conversationId } = await conversationInNewSpace('runs');
    for (const [runId, content] of [
      ['run-a', 'a1'],
      ['run-b', 'b1'],
      ['run-a', 'a2'],
      [null, 'no run'],
      ['run-b', 'b2'],
    ] as const) {
      await conversations.appendMessage(conversationId, {
        role: 'user',
        content,
        meta: runId === null ? {} : { runId },
      });
    }
    const contents = async (runId: string) =>
      (await conversations.findRunMessages(conversationId, runId)).map((m) => [m.content, m.meta.runId]);
    assert.deepEqual(await contents('run-a'), [
      ['a1', 'run-a'],
      ['a2', 'run-a'],
    ]);
    assert.deepEqual(await contents('run-b'), [
      ['b1', 'run-b'],
      ['b2', 'run-b'],
    ]);
    assert.deepEqual(await contents('run-c'), []);
    assert.deepEqual(await conversations.findRunMessages(randomUUID(), 'run-a'), [], 'a conversation that is gone');
    const plan = await planWithoutSeqScans(`SELECT "id" FROM "conversation_message" WHERE ${RUN_MESSAGES_CONDITION}`, [
      conversationId,
      'run-a',
    ]);
    assert.match(plan, /IDX_conversation_message_run/, plan);
  });

  it("a turn's history is read from the latest compaction summary on, as the parts would give it", async () => {
    const { conversations, conversationId } = await conversationInNewSpace('history');
    const append = (role: 'user' | 'assistant' | 'system', content: string, meta: Record<string, unknown> = {}) =>
      conversations.appendMessage(conversationId, { role, content, meta });
    const read = async () => {
      const found = await conversations.findWithHistory(conversationId);
      assert.deepEqual(
        found,
        await ConversationRepository.prototype.findWithHistory.call(conversations, conversationId),
        'the same as the whole conversation cut at its latest summary',
      );
      return { count: found?.conversation.messageCount, contents: found?.messages.map((m) => m.content) };
    };
    assert.deepEqual(await read(), { count: 0, contents: [] });
    await append('user', 'u1');
    await append('assistant', 'a1');
    // A system message of another kind is no summary.
    await append('system', 'note', { kind: 'notice' });
    assert.deepEqual(await read(), { count: 3, contents: ['u1', 'a1', 'note'] }, 'never compacted: all of it');
    await append('system', 'summary 1', { kind: 'compaction' });
    await append('user', 'u2');
    await append('system', 'summary 2', { kind: 'compaction' });
    await append('assistant', 'a2');
    await append('user', 'u3');
    assert.deepEqual(await read(), { count: 8, contents: ['summary 2', 'a2', 'u3'] }, 'the count is still the whole');
    assert.equal(await conversations.findWithHistory(randomUUID()), null, 'a conversation that is gone');
    const plan = await planWithoutSeqScans(
      `SELECT "position" FROM "conversation_message" WHERE ${COMPACTION_SUMMARY_CONDITION} ORDER BY "position" DESC LIMIT 1`,
      [conversationId],
    );
    assert.match(plan, /IDX_conversation_message_compaction/, plan);
  });

  it('warming connections goes through a turn on each and leaves nothing written; the pool keeps them', async () => {
    const counts = async () =>
      (await ds!.query(
        `SELECT (SELECT count(*) FROM "space")::int AS spaces, (SELECT count(*) FROM "conversation")::int AS conversations,
           (SELECT count(*) FROM "conversation_message")::int AS messages, (SELECT count(*) FROM "agent_turn")::int AS turns`,
      )) as unknown[];
    const before = await counts();
    assert.deepEqual(await warmConnections(ds!, 3), [], 'every step of the warm-up runs on the current schema');
    assert.deepEqual(await counts(), before, 'rolled back');
    const pool = (ds!.driver as unknown as { master: { options: { min: number }; idleCount: number } }).master;
    assert.ok(pool.idleCount >= 3, `the warmed connections are idle in the pool (${pool.idleCount})`);
    assert.equal(
      pool.options.min,
      Math.min(4, KEPT_CONNECTIONS),
      'idle connections up to KEPT_CONNECTIONS are not closed',
    );
  });

  it("a webhook delivery's look-up of the app of its path can use the index on spec subscriptions", async () => {
    const plan = await planWithoutSeqScans(`SELECT "id" FROM "app" WHERE ${webhookPathCondition('"spec"', '$1')}`, [
      webhookPathProbe('orders'),
    ]);
    assert.match(plan, /IDX_app_spec_subscriptions/, plan);
  });

  it(
    'two DataSources migrating concurrently on a fresh database both succeed, each migration applied once',
    { skip: testMode() !== 'services' ? 'one process per embedded database: services mode only' : false },
    async () => {
      const fresh = await createTestDatabase();
      const sources = [createDataSource(fresh.url, 2), createDataSource(fresh.url, 2)];
      try {
        await Promise.all(sources.map((s) => s.initialize()));
        const results = await withTimeout(
          Promise.all(sources.map((s) => migrateUnderLock(s))),
          30_000,
          'concurrent migrations',
        );
        assert.deepEqual(results.flat().sort(), [...MIGRATION_NAMES].sort(), `applied: ${JSON.stringify(results)}`);
        assert.deepEqual(
          await migrationRows(sources[0]!),
          [...MIGRATION_NAMES].sort().map((name) => ({ name, count: 1 })),
        );
        assert.deepEqual(await pendingSchemaChanges(sources[1]!), []);
      } finally {
        await Promise.all(sources.map((s) => (s.isInitialized ? s.destroy().catch(() => undefined) : undefined)));
        await fresh.drop();
      }
    },
  );
});

describe(
  'embedded database under concurrent clients',
  { skip: testMode() === 'embedded' ? false : 'embedded only' },
  () => {
    it('parameterized queries from many connections never mix (pglite-socket serialization)', async () => {
      const db = await freshDatabase();
      const pools = [0, 1].map(() => new pg.Pool({ connectionString: db.url, max: 8 }));
      try {
        const queries = Array.from({ length: 300 }, (_, i) =>
          // Each statement text differs, so a Bind landing on another client's Parse shows.
          pools[i % 2]!.query<{ n: number; s: string; k: number }>(
            `SELECT $1::int AS n, $2::text AS s, ${i % 13} AS k`,
            [i, `v${i}`],
          ).then((r) => r.rows[0]!),
        );
        const settled = await withTimeout(Promise.allSettled(queries), 30_000, 'concurrent queries');
        settled.forEach((r, i) =>
          assert.deepEqual(r.status === 'fulfilled' ? r.value : r.reason?.message, { n: i, s: `v${i}`, k: i % 13 }),
        );
        // A failing statement mid-stream leaves the session usable for everyone.
        const mixed = await Promise.allSettled(
          Array.from({ length: 60 }, (_, i) =>
            i % 3 === 0
              ? pools[0]!.query('SELECT $1::int / 0 AS boom', [i])
              : pools[1]!.query('SELECT $1::int AS n', [i]),
          ),
        );
        mixed.forEach((r, i) => {
          if (i % 3 === 0) assert.equal(r.status, 'rejected');
          else assert.deepEqual(r.status === 'fulfilled' ? r.value.rows[0] : null, { n: i });
        });
      } finally {
        await Promise.all(pools.map((p) => p.end()));
        await db.dispose();
      }
    });
  },
);

describe('DataFolderLock', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const folder = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
    dirs.push(dir);
    return dir;
  };
  const lockModule = new URL('../libs/infra/src/database/data-folder-lock.js', import.meta.url).href;

  after(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A separate process that takes the lock on `dir` and stays alive. */
  async function holdInChild(dir: string): Promise<ChildProcess> {
    const script =
      'const { DataFolderLock } = await import(process.argv[1]);' +
      'DataFolderLock.acquire(process.argv[2]);' +
      'console.log("locked");' +
      'setInterval(() => {}, 60_000);';
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, lockModule, dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (output.includes('locked')) resolve();
        };
        child.stdout!.on('data', check);
        child.on('exit', (code) => reject(new Error(`lock holder exited (${code}): ${output}`)));
      }),
      10_000,
      'the child taking the lock',
    );
    return child;
  }

  it('a live process holding the folder makes acquire fail with "in use"; once it is killed the stale lock is taken over', async () => {
    const dir = folder();
    const child = await holdInChild(dir);
    const owner = JSON.parse(readFileSync(join(dir, 'server.lock'), 'utf8')) as { pid: number };
    assert.equal(owner.pid, child.pid);

    assert.throws(
      () => DataFolderLock.acquire(dir),
      (err: Error) => {
        assert.match(err.message, /in use/);
        assert.ok(err.message.includes(`pid ${child.pid}`), err.message);
        return true;
      },
    );

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await withTimeout(exited, 5000, 'the child exiting');

    const lock = DataFolderLock.acquire(dir);
    const taken = JSON.parse(readFileSync(join(dir, 'server.lock'), 'utf8')) as { pid: number };
    assert.equal(taken.pid, process.pid);
    lock.release();
    assert.equal(existsSync(join(dir, 'server.lock')), false, 'release removes the lock file');
  });

  it('acquire after release works; release twice is harmless', () => {
    const dir = folder();
    DataFolderLock.acquire(dir).release();
    const again = DataFolderLock.acquire(dir);
    assert.equal(existsSync(join(dir, 'server.lock')), true);
    again.release();
    again.release();
    assert.equal(existsSync(join(dir, 'server.lock')), false);
  });

  it('creates a missing data folder', () => {
    const dir = join(folder(), 'nested', 'data');
    const lock = DataFolderLock.acquire(dir);
    assert.equal(existsSync(join(dir, 'server.lock')), true);
    lock.release();
  });

  it('a lock file of another host is assumed alive', () => {
    const dir = folder();
    writeFileSync(
      join(dir, 'server.lock'),
      JSON.stringify({ pid: 1, hostname: `not-${process.pid}-this-host`, startedAt: new Date().toISOString() }),
    );
    assert.throws(() => DataFolderLock.acquire(dir), /in use/);
  });

  it('an unreadable lock file is treated as stale', () => {
    const dir = folder();
    writeFileSync(join(dir, 'server.lock'), 'not json');
    const lock = DataFolderLock.acquire(dir);
    assert.equal((JSON.parse(readFileSync(join(dir, 'server.lock'), 'utf8')) as { pid: number }).pid, process.pid);
    lock.release();
  });
});
