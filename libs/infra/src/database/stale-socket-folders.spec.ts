import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { removeStaleSocketFolders, SOCKET_NAME } from './stale-socket-folders.js';

describe('stale embedded-database socket folders', () => {
  it('removes old folders whose socket is dead, keeps live and young ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-stale-test-'));
    const old = new Date(Date.now() - 3_600_000);
    const dead = join(dir, 'svc-pg-dead');
    const live = join(dir, 'svc-pg-live');
    const young = join(dir, 'svc-pg-young');
    for (const f of [dead, live, young]) mkdirSync(f);
    const server = createServer().listen(join(live, SOCKET_NAME));
    await new Promise((r) => server.once('listening', r));
    utimesSync(dead, old, old);
    utimesSync(live, old, old);
    try {
      assert.equal(await removeStaleSocketFolders(dir, 60_000), 1);
      assert.deepEqual([existsSync(dead), existsSync(live), existsSync(young)], [false, true, true]);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
