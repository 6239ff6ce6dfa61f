import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TrashEntry } from '#contracts/artifacts.js';
import { apiClient, failure, okData } from '#testing/api-client.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { sleep } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

interface Space {
  id: string;
  path: string;
}
interface Change {
  type: string;
  relativePath: string;
}

/** A space's trash (docs/api.md, "Trash"; issue 31, restore from trash), in both test modes. */
describe('space trash: list, restore, delete for good', () => {
  let server: TestServer;
  let ws: WsTestClient;
  let space: Space;
  let other: Space;
  const api = () => apiClient(server);
  const trashUrl = (s: Space, rest = '') => `/api/spaces/${s.id}/trash${rest}`;
  const list = async (s: Space) => okData<TrashEntry[]>(await api().get(trashUrl(s)));
  const write = async (s: Space, relativePath: string, content: string) => {
    mkdirSync(join(s.path, relativePath, '..'), { recursive: true });
    writeFileSync(join(s.path, relativePath), content);
  };
  const trash = async (s: Space, path: string) => {
    const res = await api().del(`/api/spaces/${s.id}/artifacts`, { path });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const entryFor = async (s: Space, path: string) => {
    const found = (await list(s)).find((e) => e.path === path);
    assert.ok(found, `${path} in the trash of ${s.id}`);
    return found;
  };

  before(async () => {
    server = await startServer();
    ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    space = okData<Space>(await api().post('/api/spaces', { name: 'Trash' }));
    other = okData<Space>(await api().post('/api/spaces', { name: 'Other' }));
  });
  after(async () => {
    ws?.close();
    await server?.stop();
  });

  it('lists only what was deleted from this space, newest first, with its original path', async () => {
    assert.deepEqual(await list(space), []);
    await write(space, 'first.txt', 'one');
    await write(space, 'notes/second.md', '# two');
    await write(other, 'first.txt', 'elsewhere');
    mkdirSync(join(space.path, 'empty dir'));
    await trash(space, 'first.txt');
    await sleep(1_100); // a later DeletionDate (whole seconds)
    await trash(space, join(space.path, 'notes', 'second.md'));
    await trash(space, 'empty dir');
    await trash(other, 'first.txt');

    const entries = await list(space);
    assert.deepEqual(
      entries.map((e) => e.path),
      ['empty dir', 'notes/second.md', 'first.txt'],
    );
    const [dir, second, first] = entries as [TrashEntry, TrashEntry, TrashEntry];
    assert.equal(first.isDirectory, false);
    assert.equal(first.size, 3);
    assert.equal(second.size, 5);
    assert.equal(dir.isDirectory, true);
    assert.equal(dir.size, undefined);
    assert.ok(Date.parse(second.deletedAt) > Date.parse(first.deletedAt), JSON.stringify(entries));
    assert.match(first.deletedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Math.abs(Date.parse(first.deletedAt) - Date.now()) < 60_000, first.deletedAt);
    // Two entries named first.txt in one trash get different ids.
    const otherFirst = (await list(other)).find((e) => e.path === 'first.txt');
    assert.ok(otherFirst);
    assert.notEqual(otherFirst.id, first.id);
    assert.deepEqual(
      (await list(other)).map((e) => e.path),
      ['first.txt'],
    );
  });

  it('restores a file to its original path, and the file event announces it', async () => {
    await watched(space);
    const entry = await entryFor(space, 'notes/second.md');
    ws.frames.length = 0;
    const data = okData<{ path: string; relativePath: string }>(
      await api().post(trashUrl(space, '/restore'), { id: entry.id }),
    );
    assert.deepEqual(data, { path: join(space.path, 'notes', 'second.md'), relativePath: 'notes/second.md' });
    assert.equal(readFileSync(join(space.path, 'notes', 'second.md'), 'utf8'), '# two');
    assert.ok(!(await list(space)).some((e) => e.id === entry.id), 'gone from the trash');
    const batch = await ws.next(
      (f) =>
        f.channel === 'artifact:changed-batch' &&
        f.data?.spaceId === space.id &&
        (f.data.changes as Change[]).some((c) => c.relativePath === 'notes/second.md' && c.type === 'add'),
      10_000,
    );
    assert.ok(batch);
    // And it is a file like any other again.
    const tree = okData<{ nodes: Array<{ name: string; children?: Array<{ name: string }> }> }>(
      await api().get(`/api/spaces/${space.id}/artifacts/tree`),
    );
    assert.deepEqual(
      tree.nodes.find((n) => n.name === 'notes')?.children?.map((c) => c.name),
      ['second.md'],
    );
  });

  it('creates the folders on the way when the original folder is gone too', async () => {
    await write(space, 'deep/er/leaf.txt', 'leaf');
    await trash(space, 'deep/er/leaf.txt');
    await trash(space, 'deep');
    assert.equal(existsSync(join(space.path, 'deep')), false);
    const leaf = await entryFor(space, 'deep/er/leaf.txt');
    const restored = okData<{ path: string }>(await api().post(trashUrl(space, '/restore'), { id: leaf.id }));
    assert.equal(restored.path, join(space.path, 'deep', 'er', 'leaf.txt'));
    assert.equal(readFileSync(restored.path, 'utf8'), 'leaf');
  });

  it('answers 409 when something is at the original path now, and restores under another path when asked', async () => {
    const deep = await entryFor(space, 'deep');
    failure(
      await api().post(trashUrl(space, '/restore'), { id: deep.id }),
      409,
      /already exists at deep; restore it under another path/,
    );
    assert.ok(
      (await list(space)).some((e) => e.id === deep.id),
      'still in the trash',
    );
    const restored = okData<{ path: string; relativePath: string }>(
      await api().post(trashUrl(space, '/restore'), { id: deep.id, path: 'old/deep (restored)' }),
    );
    assert.equal(restored.relativePath, 'old/deep (restored)');
    assert.deepEqual(readdirSync(join(space.path, 'old', 'deep (restored)')), ['er']);
    // A file where a folder on the way should be: 409 too.
    await write(space, 'blocker', 'a file');
    const dir = await entryFor(space, 'empty dir');
    failure(
      await api().post(trashUrl(space, '/restore'), { id: dir.id, path: 'blocker/inside' }),
      409,
      /blocker is a file/,
    );
  });

  it("answers 404 for an unknown id and for another space's entry, and refuses ids that leave the trash", async () => {
    const otherFirst = await entryFor(other, 'first.txt');
    failure(
      await api().post(trashUrl(space, '/restore'), { id: 'nothing-like-it.txt' }),
      404,
      "Not in this space's trash",
    );
    failure(await api().post(trashUrl(space, '/restore'), { id: otherFirst.id }), 404, "Not in this space's trash");
    failure(
      await api().del(trashUrl(space, `/${encodeURIComponent(otherFirst.id)}`)),
      404,
      "Not in this space's trash",
    );
    assert.equal(readFileSync(join(server.dataDir, 'trash', 'files', otherFirst.id), 'utf8'), 'elsewhere');
    failure(await api().post(trashUrl(space, '/restore'), {}), 400, 'id is required');
    failure(await api().post(trashUrl(space, '/restore'), { id: 42 }), 400, /id must be a string/);
    for (const id of ['..', '.', '../info/first.txt', '../../spaces', 'a/b', '..\\x', 'a\0b']) {
      const res = await api().post(trashUrl(space, '/restore'), { id });
      assert.equal(res.status, 400, `${JSON.stringify(id)}: ${JSON.stringify(res.body)}`);
    }
    // (A bare `..` segment would be resolved by the client's URL parser before it is sent.)
    for (const id of ['..%2Finfo', '..%2F..%2Fspaces', 'a%2Fb', '..%5Cx']) {
      failure(await api().del(trashUrl(space, `/${id}`)), 400, 'Invalid trash id');
    }
    assert.ok(existsSync(join(server.dataDir, 'trash', 'info')), 'the trash is still there');
    assert.ok(existsSync(join(server.dataDir, 'spaces')), 'the spaces are still there');
    // A record whose Path lies outside every space is nobody's.
    writeFileSync(join(server.dataDir, 'trash', 'files', 'passwd'), 'x');
    writeFileSync(
      join(server.dataDir, 'trash', 'info', 'passwd.trashinfo'),
      '[Trash Info]\nPath=/etc/passwd\nDeletionDate=2025-01-01T00:00:00\n',
    );
    assert.ok(!(await list(space)).some((e) => e.id === 'passwd'));
    failure(await api().post(trashUrl(space, '/restore'), { id: 'passwd' }), 404, "Not in this space's trash");
    // The restore path goes through the path guard.
    const first = await entryFor(space, 'first.txt');
    failure(
      await api().post(trashUrl(space, '/restore'), { id: first.id, path: '../escape.txt' }),
      403,
      /Access denied/,
    );
    failure(
      await api().post(trashUrl(space, '/restore'), { id: first.id, path: '/etc/escape.txt' }),
      403,
      /Access denied/,
    );
    failure(
      await api().post(trashUrl(space, '/restore'), { id: first.id, path: '.svc/first.txt' }),
      403,
      /\.svc is reserved/,
    );
    failure(await api().get('/api/spaces/no-such-space/trash'), 404, /Space not found/);
  });

  it('deletes an entry for good', async () => {
    const first = await entryFor(space, 'first.txt');
    const res = await api().del(trashUrl(space, `/${encodeURIComponent(first.id)}`));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { success: true });
    assert.ok(!(await list(space)).some((e) => e.id === first.id));
    assert.equal(existsSync(join(server.dataDir, 'trash', 'files', first.id)), false);
    assert.equal(existsSync(join(server.dataDir, 'trash', 'info', `${first.id}.trashinfo`)), false);
    failure(await api().del(trashUrl(space, `/${encodeURIComponent(first.id)}`)), 404, "Not in this space's trash");
    failure(await api().post(trashUrl(space, '/restore'), { id: first.id }), 404, "Not in this space's trash");
  });

  /** Waits until the space's watcher reports changes (it starts a moment after the space is created). */
  async function watched(s: Space): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (let n = 0; ; n++) {
      ws.frames.length = 0;
      const name = `probe-${n}.txt`;
      okData(await api().post(`/api/spaces/${s.id}/artifacts/file`, { name, content: 'x' }));
      try {
        await ws.next(
          (f) =>
            f.channel === 'artifact:changed-batch' &&
            f.data?.spaceId === s.id &&
            (f.data.changes as Change[]).some((c) => c.relativePath === name),
          1_500,
        );
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
    }
  }
});
