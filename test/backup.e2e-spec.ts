import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';

describe('backup and restore', () => {
  const dirs: string[] = [];
  const tempDir = (name: string): string => {
    const dir = mkdtempSync(join(tmpdir(), `svc-${name}-`));
    dirs.push(dir);
    return dir;
  };
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  describe('embedded', { skip: testMode() === 'embedded' ? false : 'embedded installations only' }, () => {
    let server: TestServer;
    let dataDir: string;
    const ids = { space: '', conversation: '' };
    let spacePath = '';

    before(async () => {
      dataDir = tempDir('backup-data');
      server = await startServer({ dataDir });
      const api = apiClient(server);
      const space = await api.post('/api/spaces', { name: 'Backed up' }).expect(200);
      ids.space = space.body.data.id;
      spacePath = space.body.data.path;
      await api.post(`/api/spaces/${ids.space}/artifacts/file`, { name: 'plan.md', content: 'keep me' }).expect(200);
      const conv = await api.post(`/api/spaces/${ids.space}/conversations`, { title: 'Before the backup' }).expect(200);
      ids.conversation = conv.body.data.id;
    });
    after(() => server?.stop());

    it('backs up while the server runs, then restores into a fresh folder that serves the same data', async () => {
      const target = join(tempDir('backup-out'), 'svc-backup');
      // Same settings as the running server (its PORT), as an operator would run it.
      const job = await startServer({
        dataDir,
        args: ['backup', target],
        waitForListening: false,
        env: { PORT: String(server.port) },
      });
      const { code } = await job.exited;
      assert.equal(code, 0, job.output());
      assert.match(job.output(), /"msg":"backup written"/);
      await job.stop();
      assert.ok(existsSync(join(target, 'database.tar.gz')));
      assert.ok(existsSync(join(target, 'backup.json')));

      // A change after the backup is not in it.
      await apiClient(server).post('/api/spaces', { name: 'After the backup' }).expect(200);
      await server.stop();

      const restoredDir = tempDir('restored');
      const restore = await startServer({ dataDir: restoredDir, args: ['restore', target], waitForListening: false });
      assert.equal((await restore.exited).code, 0, restore.output());
      await restore.stop();

      const restored = await startServer({ dataDir: restoredDir });
      try {
        const spaces = await apiClient(restored).get('/api/spaces').expect(200);
        const names = (spaces.body.data as Array<{ name: string }>).map((s) => s.name);
        assert.ok(names.includes('Backed up'));
        assert.ok(!names.includes('After the backup'));
        const conv = await apiClient(restored)
          .get(`/api/spaces/${ids.space}/conversations/${ids.conversation}`)
          .expect(200);
        assert.equal(conv.body.data.title, 'Before the backup');
        const file = join(restoredDir, spacePath.slice(dataDir.length), 'plan.md');
        assert.equal(readFileSync(file, 'utf8'), 'keep me');
      } finally {
        await restored.stop();
      }
    });

    it('refuses to restore over an existing database', async () => {
      const again = await startServer({ dataDir, args: ['restore', dataDir], waitForListening: false });
      assert.notEqual((await again.exited).code, 0);
      await again.stop();
    });
  });

  describe('with DATABASE_URL', { skip: testMode() === 'services' ? false : 'needs Postgres' }, () => {
    it('points to pg_dump instead of copying a database it does not own', async () => {
      const job = await startServer({ args: ['backup'], waitForListening: false });
      assert.equal((await job.exited).code, 2);
      assert.match(job.output(), /pg_dump/);
      await job.stop();
    });
  });
});
