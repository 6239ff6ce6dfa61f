import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createDataSource } from '#infra/database/database.js';
import { EmbeddedPostgres } from '#infra/database/embedded-postgres.js';
import { MIGRATIONS } from '#infra/database/schema.js';
import { apiClient } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';

/** The schema of an earlier release: its migrations only (settings and spaces; no conversations yet). */
const PREVIOUS = MIGRATIONS.slice(0, 2);

/**
 * An installation made by an earlier release, upgraded in place: the migrations Job
 * (`main.js migrate`) brings the schema up to date, then a server started with
 * SVC_MIGRATIONS=skip serves the old records and the new features.
 */
describe('upgrading a database made by an earlier release', () => {
  let dataDir: string;
  let services: SharedServices | undefined;
  let server: TestServer | undefined;
  const spaceId = randomUUID();

  before(async () => {
    assert.ok(PREVIOUS.length < MIGRATIONS.length, 'there are newer migrations to apply');
    dataDir = mkdtempSync(join(tmpdir(), 'svc-upgrade-'));
    let embedded: EmbeddedPostgres | null = null;
    let url: string;
    if (testMode() === 'services') {
      services = await createSharedServices();
      url = services.databaseUrl;
    } else {
      embedded = await EmbeddedPostgres.start(dataDir);
      url = embedded.url;
    }
    const old = createDataSource(url, 1, PREVIOUS);
    await old.initialize();
    await old.runMigrations({ transaction: 'each' });
    const folder = join(dataDir, 'spaces', spaceId);
    mkdirSync(folder, { recursive: true });
    await old.query(
      `INSERT INTO "space" ("id", "name", "icon", "path", "sort_order", "preferences") VALUES ($1, $2, $3, $4, 0, '{}'::jsonb)`,
      [spaceId, 'From the old release', 'folder', folder],
    );
    await old.destroy();
    await embedded?.stop();
  });
  after(async () => {
    await server?.stop();
    await services?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the migrate command applies exactly the newer migrations and exits 0', async () => {
    const job = await startServer({ dataDir, services, args: ['migrate'], waitForListening: false });
    const { code } = await job.exited;
    assert.equal(code, 0, job.output());
    const line = job
      .output()
      .split('\n')
      .find((l) => l.includes('"msg":"migrations applied"'));
    assert.ok(line, job.output());
    const applied = (JSON.parse(line) as { migrations: string[] }).migrations;
    assert.deepEqual(
      applied,
      MIGRATIONS.slice(PREVIOUS.length).map((m) => m.name),
    );
    await job.stop();
  });

  it('the current server then starts without migrating and serves old and new', async () => {
    server = await startServer({ dataDir, services, env: { SVC_MIGRATIONS: 'skip' } });
    assert.match(server.output(), /migrations skipped/);
    const api = apiClient(server);
    const space = await api.get(`/api/spaces/${spaceId}`);
    assert.equal(space.status, 200, JSON.stringify(space.body));
    assert.equal(space.body.data.name, 'From the old release');
    // Conversations arrived with a later migration.
    const conv = await api.post(`/api/spaces/${spaceId}/conversations`, { title: 'new' });
    assert.equal(conv.status, 200, JSON.stringify(conv.body));
  });
});
