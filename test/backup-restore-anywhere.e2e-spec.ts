import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { apiClient } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { startServer } from '#testing/test-server.js';

/**
 * Backups restore anywhere: spaces inside the data folder are stored relative to it, so a
 * backup restored into another folder serves (and writes) its own copies, never the original
 * install's folders. Backup files are readable by their owner only; a restore refuses a used
 * data folder unless --force and says what it restored.
 */
describe(
  'backups restore anywhere',
  { skip: testMode() === 'embedded' ? false : 'embedded installations only' },
  () => {
    const dirs: string[] = [];
    const tempDir = (name: string): string => {
      const dir = mkdtempSync(join(tmpdir(), `svc-${name}-`));
      dirs.push(dir);
      return dir;
    };
    after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

    it('a restored server writes into the restored folder; the original is untouched', async () => {
      const original = tempDir('anywhere-original');
      const server = await startServer({ dataDir: original });
      const space = await apiClient(server).post('/api/spaces', { name: 'Portable' }).expect(200);
      const spaceId = space.body.data.id as string;
      const originalFolder = space.body.data.path as string;
      assert.ok(originalFolder.startsWith(original), originalFolder);
      await apiClient(server)
        .post(`/api/spaces/${spaceId}/artifacts/file`, { name: 'plan.md', content: 'before' })
        .expect(200);
      const target = join(tempDir('anywhere-backup'), 'b');
      const backup = await startServer({
        dataDir: original,
        args: ['backup', target],
        waitForListening: false,
        env: { PORT: String(server.port) },
      });
      assert.equal((await backup.exited).code, 0, backup.output());
      await backup.stop();
      await server.stop();
      for (const file of ['database.tar.gz', 'backup.json']) {
        assert.equal(statSync(join(target, file)).mode & 0o777, 0o600, file);
      }
      assert.equal(statSync(target).mode & 0o777, 0o700);

      // A used folder is refused unless --force.
      const used = tempDir('anywhere-used');
      writeFileSync(join(used, 'notes.txt'), 'mine');
      const refused = await startServer({ dataDir: used, args: ['restore', target], waitForListening: false });
      assert.notEqual((await refused.exited).code, 0);
      assert.match(refused.output(), /is not empty.*--force/);
      await refused.stop();

      const restoredDir = tempDir('anywhere-restored');
      const restore = await startServer({ dataDir: restoredDir, args: ['restore', target], waitForListening: false });
      assert.equal((await restore.exited).code, 0, restore.output());
      const line = restore
        .output()
        .split('\n')
        .find((l) => l.includes('"msg":"backup restored"'));
      assert.ok(line, restore.output());
      const said = JSON.parse(line) as { spaces: number; records: number; files: number };
      assert.ok(said.spaces >= 2 && said.records > said.spaces && said.files > 0, line);
      await restore.stop();

      const restored = await startServer({ dataDir: restoredDir });
      try {
        const got = await apiClient(restored).get(`/api/spaces/${spaceId}`).expect(200);
        const folder = got.body.data.path as string;
        assert.ok(folder.startsWith(restoredDir), `the space is in the restored folder: ${folder}`);
        const read = await apiClient(restored)
          .get(`/api/spaces/${spaceId}/artifacts/content`)
          .query({ path: 'plan.md' });
        assert.equal(read.status, 200, JSON.stringify(read.body));
        await apiClient(restored)
          .post(`/api/spaces/${spaceId}/artifacts/file`, { name: 'after.md', content: 'restored' })
          .expect(200);
        assert.equal(readFileSync(join(folder, 'after.md'), 'utf8'), 'restored');
        assert.equal(existsSync(join(originalFolder, 'after.md')), false, 'nothing written to the original');
        assert.equal(readFileSync(join(originalFolder, 'plan.md'), 'utf8'), 'before');
      } finally {
        await restored.stop();
      }
    });
  },
);
