import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient } from '#testing/api-client.js';
import { createTestDatabase, type TestDatabase, testMode, testRedisUrl, uniqueSuffix } from '#testing/test-env.js';
import { startServer } from '#testing/test-server.js';

/** 200, or the body in the failure message. */
const ok = (res: { status: number; body: unknown }): void => assert.equal(res.status, 200, JSON.stringify(res.body));

const EMBEDDED = { DATABASE_URL: undefined, REDIS_URL: undefined, SVC_TEST_MODE: 'embedded' };

describe(
  'moving an embedded installation to Postgres',
  { skip: testMode() === 'services' ? false : 'needs Postgres (runs in the services pass)' },
  () => {
    let dataDir: string;
    let target: TestDatabase;
    const ids = { space: '', conversation: '', knowledgeBase: '' };

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'svc-move-'));
      target = await createTestDatabase();
      const embedded = await startServer({ dataDir, env: EMBEDDED });
      try {
        const space = await apiClient(embedded).post('/api/spaces', { name: 'Moved' }).expect(ok);
        ids.space = space.body.data.id;
        const conv = await apiClient(embedded)
          .post(`/api/spaces/${ids.space}/conversations`, { title: 'Kept' })
          .expect(ok);
        ids.conversation = conv.body.data.id;
        await apiClient(embedded)
          .post(`/api/spaces/${ids.space}/conversations/${ids.conversation}/messages`, {
            role: 'user',
            content: 'ünïcødé and "quotes" survive',
          })
          .expect(ok);
        await apiClient(embedded)
          .post('/api/ai-sources/sources', {
            name: 'main',
            provider: 'openai',
            apiUrl: 'http://127.0.0.1:9/v1',
            apiKey: 'sk-moved',
            model: 'm1',
          })
          .expect(ok);
        // Knowledge bases are kept through plain SQL (no TypeORM entity): they move too.
        const kb = await apiClient(embedded).post('/api/tlon', { name: 'Moved handbook' }).expect(ok);
        ids.knowledgeBase = kb.body.data.id;
      } finally {
        await embedded.stop();
      }
    });
    /** Runs `main.js migrate-to-postgres` on the data folder towards the target database. */
    async function moveRecords(): Promise<{ code: number | null; output: string }> {
      const run = await startServer({
        dataDir,
        args: ['migrate-to-postgres'],
        waitForListening: false,
        env: { ...EMBEDDED, DATABASE_URL: target.url },
      });
      const { code } = await run.exited;
      const output = run.output();
      await run.stop();
      return { code, output };
    }

    after(async () => {
      await target?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('copies every record, and the server then runs on Postgres with the same data folder', async () => {
      const move = await moveRecords();
      assert.equal(move.code, 0, move.output);
      assert.match(move.output, /embedded records copied to Postgres/);
      // The embedded copy is kept out of the way: a start without DATABASE_URL refuses and says why.
      assert.equal(existsSync(join(dataDir, 'db')), false);
      const kept = readdirSync(dataDir).filter((n) => n.startsWith('db.migrated-'));
      assert.equal(kept.length, 1, readdirSync(dataDir).join(', '));
      const embeddedAgain = await startServer({ dataDir, env: EMBEDDED, waitForListening: false });
      assert.notEqual((await embeddedAgain.exited).code, 0);
      assert.match(embeddedAgain.output(), /moved to Postgres.*start with DATABASE_URL/);
      await embeddedAgain.stop();

      const server = await startServer({
        dataDir,
        services: {
          databaseUrl: target.url,
          redisUrl: testRedisUrl(),
          redisPrefix: `svc-move-${uniqueSuffix()}`,
          dispose: async () => {},
        },
      });
      try {
        const space = await apiClient(server).get(`/api/spaces/${ids.space}`);
        assert.equal(space.body.data?.name, 'Moved', JSON.stringify(space.body));
        const conv = await apiClient(server).get(`/api/spaces/${ids.space}/conversations/${ids.conversation}`);
        assert.equal(conv.body.data.title, 'Kept');
        assert.equal(conv.body.data.messages[0].content, 'ünïcødé and "quotes" survive');
        const config = await apiClient(server).get('/api/config');
        assert.match(JSON.stringify(config.body), /"model":"m1"/);
        const kb = await apiClient(server).get(`/api/tlon/${ids.knowledgeBase}`);
        assert.equal(kb.body.data?.name, 'Moved handbook', JSON.stringify(kb.body));
      } finally {
        await server.stop();
      }
    });

    it('refuses a target that already has records', async () => {
      // The way back the refusal names: the kept copy renamed to db.
      const kept = readdirSync(dataDir).find((n) => n.startsWith('db.migrated-'))!;
      renameSync(join(dataDir, kept), join(dataDir, 'db'));
      const again = await moveRecords();
      assert.equal(again.code, 1);
      assert.match(again.output, /already has records/);
    });
  },
);
