import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createDataSource } from '#infra/database/database.js';
import { EmbeddedPostgres } from '#infra/database/embedded-postgres.js';
import { MIGRATIONS } from '#infra/database/schema.js';
import {
  COMPATIBLE_MIGRATIONS_KEY,
  recordCompatibleMigrations,
  schemaProblem,
  schemaStatus,
} from '#infra/database/schema-status.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

/** The schema of the release before: every migration but the newest. */
const OLDER = MIGRATIONS.slice(0, -1);
const NEWEST = new (MIGRATIONS.at(-1)!)().name as string;
const FUTURE = 'FromANewerRelease1799999999999';

/**
 * Never ready on an old schema: a process started with SVC_MIGRATIONS=skip compares the
 * database's applied migrations with its own at start and on every /readyz; behind → not
 * ready (a log line names the missing ones) until they are applied; ahead → ready only when
 * the newer migrations are marked compatible.
 */
describe(`readiness follows the schema (${testMode()})`, () => {
  let dataDir: string;
  let services: SharedServices | undefined;
  let server: TestServer | undefined;

  /** Runs `fn` on the database while no server holds it. */
  async function onDatabase(fn: (ds: DataSource) => Promise<void>, migrations = MIGRATIONS): Promise<void> {
    let embedded: EmbeddedPostgres | null = null;
    let url: string;
    if (services) url = services.databaseUrl;
    else {
      embedded = await EmbeddedPostgres.start(dataDir);
      url = embedded.url;
    }
    const ds = createDataSource(url, 1, migrations);
    await ds.initialize();
    try {
      await fn(ds);
    } finally {
      await ds.destroy();
      await embedded?.stop();
    }
  }
  const readyz = () => request(server!.url).get('/readyz');
  const skip = () => startServer({ dataDir, services, env: { SVC_MIGRATIONS: 'skip' } });

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-schema-ready-'));
    if (testMode() === 'services') services = await createSharedServices();
    await onDatabase((ds) => ds.runMigrations({ transaction: 'each' }).then(() => undefined), OLDER);
  });
  after(async () => {
    await server?.stop();
    await services?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('behind: not ready, naming the missing migration, until the migrations are applied', async () => {
    server = await skip();
    const res = await readyz();
    assert.equal(res.status, 503, JSON.stringify(res.body));
    assert.equal(res.body.checks.schema.ok, false);
    assert.match(res.body.checks.schema.error, new RegExp(`behind.*${NEWEST}`));
    assert.match(server.output(), new RegExp(`not ready: the database schema is behind this version.*${NEWEST}`));
    if (services) {
      // The init container's wait: it waits while behind and ends once the migrations Job ran.
      const waiter = await startServer({ dataDir, services, args: ['wait-for-migrations'], waitForListening: false });
      await waitFor(() => /waiting for the migrations/.test(waiter.output()), 30_000, 'the waiter says why it waits');
      const job = await startServer({ dataDir, services, args: ['migrate'], waitForListening: false });
      assert.equal((await job.exited).code, 0, job.output());
      assert.equal((await waiter.exited).code, 0, waiter.output());
      // The running server follows without a restart.
      await waitFor(async () => (await readyz()).status === 200, 30_000, 'ready once migrated');
      await job.stop();
      await waiter.stop();
    } else {
      await server.stop();
      const job = await startServer({ dataDir, services, args: ['migrate'], waitForListening: false });
      assert.equal((await job.exited).code, 0, job.output());
      await job.stop();
      server = await skip();
    }
    const ready = await readyz();
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.deepEqual(ready.body.checks.schema, { ok: true });
    await server.stop();
    server = undefined;
  });

  it('ahead: not ready on a newer migration unless that release marked it compatible', async () => {
    // Read as /readyz reads it (a server start per case would only repeat the first test's path).
    await onDatabase(async (ds) => {
      await ds.query(`INSERT INTO "typeorm_migrations" ("timestamp", "name") VALUES ($1, $2)`, [1799999999999, FUTURE]);
      const ahead = await schemaStatus(ds);
      assert.deepEqual([ahead.ok, ahead.missing, ahead.newer, ahead.incompatible], [false, [], [FUTURE], [FUTURE]]);
      assert.match(schemaProblem(ahead) ?? '', new RegExp(`ahead.*${FUTURE}`));
      const rows = (await ds.query(`SELECT "value" FROM "app_setting" WHERE "key" = $1`, [
        COMPATIBLE_MIGRATIONS_KEY,
      ])) as Array<{ value: string[] }>;
      assert.ok(
        rows[0]?.value.includes('TriggerDeliveries1766000000000'),
        'the migrate command recorded its compatible migrations',
      );
      await recordCompatibleMigrations(ds, [FUTURE]);
      const marked = await schemaStatus(ds);
      assert.deepEqual([marked.ok, marked.newer, marked.incompatible], [true, [FUTURE], []]);
      assert.equal(schemaProblem(marked), null);
    });
  });
});
