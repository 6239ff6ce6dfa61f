import assert from 'node:assert/strict';
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient, okData } from '#testing/api-client.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { sleep, waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

interface Space {
  id: string;
  path: string;
}
interface Item {
  name: string;
  type: string;
  path: string;
  relativePath: string;
}
interface QueryResult {
  items: Item[];
  truncated: boolean;
  indexing: boolean;
}

/** The index cap of this server, small so that truncation is cheap to reach. */
const INDEX_LIMIT = 200;

describe('artifact search', () => {
  let server: TestServer;
  let ws: WsTestClient;

  const get = (p: string) => apiClient(server).get(p);
  const post = (p: string, body: object = {}) => apiClient(server).post(p, body);

  async function createSpace(name: string, files: string[] = []): Promise<Space> {
    const res = await post('/api/spaces', { name });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const space = res.body.data as Space;
    for (const file of files) {
      mkdirSync(dirname(join(space.path, file)), { recursive: true });
      writeFileSync(join(space.path, file), file);
    }
    return space;
  }

  async function query(space: Space, q: string, limit?: number): Promise<QueryResult> {
    return okData<QueryResult>(
      await get(`/api/spaces/${space.id}/artifacts/query`).query(limit === undefined ? { q } : { q, limit }),
    );
  }

  /** Queries until the index is built. */
  async function settled(space: Space, q: string, limit?: number): Promise<QueryResult> {
    let result: QueryResult | null = null;
    await waitFor(
      async () => {
        result = await query(space, q, limit);
        return !result.indexing;
      },
      10_000,
      'index built',
    );
    return result!;
  }

  /** Writes `file` (again) until its change event reaches the socket (the new space's watcher starts a moment after). */
  async function writeSeen(space: Space, file: string): Promise<void> {
    const full = join(space.path, file);
    mkdirSync(dirname(full), { recursive: true });
    const seen = () =>
      ws.frames.some(
        (f) =>
          f.channel === 'artifact:changed-batch' &&
          f.data?.spaceId === space.id &&
          (f.data?.changes as Array<{ relativePath: string }>).some((c) => c.relativePath === file),
      );
    const deadline = Date.now() + 15_000;
    while (!seen()) {
      if (Date.now() > deadline) throw new Error(`no event for ${file}`);
      writeFileSync(full, String(Date.now()));
      await waitFor(seen, 1_500, file).catch(() => undefined);
    }
  }

  before(async () => {
    server = await startServer({ env: { SVC_SEARCH_INDEX_LIMIT: String(INDEX_LIMIT) } });
    ws = await WsTestClient.signedIn(server.wsUrl, server.password);
  });
  after(async () => {
    ws?.close();
    await server?.stop();
  });

  it('validates q and limit; unknown spaces answer 404', async () => {
    const space = await createSpace('Validation');
    for (const qs of ['', '?q=', '?q=%20%20', '?limit=5']) {
      const res = await get(`/api/spaces/${space.id}/artifacts/query${qs}`);
      assert.equal(res.status, 400, qs);
      assert.deepEqual(res.body, { success: false, error: 'q is required' });
    }
    for (const limit of ['0', '-1', 'abc', '1.5', '2e3']) {
      const res = await get(`/api/spaces/${space.id}/artifacts/query?q=a&limit=${limit}`);
      assert.equal(res.status, 400, limit);
      assert.deepEqual(res.body, { success: false, error: 'limit must be a positive integer' });
    }
    const missing = await get('/api/spaces/00000000-0000-4000-8000-000000000000/artifacts/query?q=a');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.success, false);
  });

  it('returns the best matches first, within the limit', async () => {
    const space = await createSpace('Ranking', [
      'src/app/main.ts',
      'src/domain/maintenance/notes.txt',
      'docs/readme.md',
      'README',
      'archive/old/readme-2019.md',
      'lib/components/UserInterface.tsx',
      ...Array.from({ length: 60 }, (_, i) => `items/item-${i}.json`),
    ]);
    const readme = await settled(space, 'readme');
    assert.deepEqual(
      readme.items.map((i) => i.relativePath),
      ['README', 'docs/readme.md', 'archive/old/readme-2019.md'],
    );
    assert.deepEqual(readme.items[1], {
      name: 'readme.md',
      type: 'file',
      path: join(space.path, 'docs/readme.md'),
      relativePath: 'docs/readme.md',
    });
    assert.equal(readme.truncated, false);
    assert.equal((await query(space, 'main.ts')).items[0]?.relativePath, 'src/app/main.ts');
    assert.equal((await query(space, 'usrintf')).items[0]?.name, 'UserInterface.tsx');
    const folder = (await query(space, 'maintenance')).items[0];
    assert.deepEqual(folder && { type: folder.type, relativePath: folder.relativePath }, {
      type: 'folder',
      relativePath: 'src/domain/maintenance',
    });

    assert.equal((await query(space, 'item')).items.length, 50, 'default limit 50');
    const five = await query(space, 'item', 5);
    assert.equal(five.items.length, 5);
    assert.equal((await query(space, 'item-42', 1)).items[0]?.relativePath, 'items/item-42.json');
    assert.deepEqual((await query(space, 'zzqqxx')).items, []);
  });

  it('answers indexing: true with what it has while the first build runs', async () => {
    const files = Array.from({ length: 150 }, (_, i) => `d${i % 10}/e${i % 3}/entry-${i}.txt`);
    const space = await createSpace('Indexing', files);
    const first = await query(space, 'entry-7');
    assert.equal(first.indexing, true, 'the first query starts the build and does not wait for it');
    assert.ok(Array.isArray(first.items));
    const done = await settled(space, 'entry-7');
    assert.equal(done.items[0]?.relativePath, 'd7/e1/entry-7.txt');
    assert.equal(done.truncated, false);
  });

  it('leaves .git, node_modules and .svc out of results', async () => {
    const space = await createSpace('Ignored', [
      'visible/config.json',
      '.git/config',
      'node_modules/pkg/config.js',
      'nested/node_modules/config.js',
      '.svc/config.md',
    ]);
    const result = await settled(space, 'config');
    assert.deepEqual(
      result.items.map((i) => i.relativePath),
      ['visible/config.json'],
    );
  });

  it('picks up new, changed and deleted files from change events', async () => {
    const space = await createSpace('Live', ['start.txt']);
    await settled(space, 'start');
    await writeSeen(space, 'later/brand-new-file.md');
    const added = await query(space, 'brand-new-file');
    assert.equal(added.indexing, false);
    assert.deepEqual(
      added.items.map((i) => i.relativePath),
      ['later/brand-new-file.md'],
    );
    assert.equal((await query(space, 'later')).items[0]?.type, 'folder');

    // Created through the API.
    const res = await post(`/api/spaces/${space.id}/artifacts/file`, { name: 'api-made.txt', content: 'x' });
    assert.equal(res.status, 200);
    await waitFor(async () => (await query(space, 'api-made')).items.length === 1, 10_000, 'API-made file indexed');

    ws.frames.length = 0;
    rmSync(join(space.path, 'later'), { recursive: true });
    await waitFor(async () => (await query(space, 'brand-new-file')).items.length === 0, 10_000, 'deletion indexed');
    assert.deepEqual((await query(space, 'later')).items, []);
    unlinkSync(join(space.path, 'start.txt'));
    await waitFor(async () => (await query(space, 'start.txt')).items.length === 0, 10_000, 'unlink indexed');
  });

  it('says truncated when the space holds more paths than the index', async () => {
    const many = Array.from({ length: INDEX_LIMIT + 50 }, (_, i) => `bulk/f-${i}.txt`);
    const space = await createSpace('Big', many);
    const result = await settled(space, 'f-', 1_000);
    assert.equal(result.truncated, true);
    assert.ok(result.items.length <= INDEX_LIMIT && result.items.length > 0, `${result.items.length} items`);
    const small = await createSpace('Small', ['one.txt', 'two.txt']);
    assert.equal((await settled(small, 'one')).truncated, false);
  });

  it('reconcile rebuilds the index from disk', async () => {
    const space = await createSpace('Reconcile', ['before.txt']);
    await settled(space, 'before');
    const res = await post(`/api/spaces/${space.id}/artifacts/reconcile`);
    assert.deepEqual(res.body, { success: true });
    // A file the index could not have heard of yet: reconcile reads it from disk.
    writeFileSync(join(space.path, 'quiet.txt'), 'x');
    const again = await post(`/api/spaces/${space.id}/artifacts/reconcile`);
    assert.equal(again.status, 200);
    const after = await query(space, 'quiet');
    assert.equal(after.indexing, false, 'reconcile waits for the rebuild');
    assert.deepEqual(
      after.items.map((i) => i.relativePath),
      ['quiet.txt'],
    );
    // A space never queried gets its index built by reconcile.
    const fresh = await createSpace('Fresh', ['x/y/found-me.txt']);
    await post(`/api/spaces/${fresh.id}/artifacts/reconcile`).expect(200);
    const found = await query(fresh, 'found-me');
    assert.equal(found.indexing, false);
    assert.equal(found.items[0]?.relativePath, 'x/y/found-me.txt');
    await sleep(100);
  });
});
