import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient, okData } from '#testing/api-client.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

describe('spaces', () => {
  let server: TestServer;
  const outside = mkdtempSync(join(tmpdir(), 'svc-outside-'));
  const api = () => apiClient(server);
  const create = async (name: string, extra: object = {}) =>
    okData<{ id: string; name: string; path: string; icon: string }>(
      await api().post('/api/spaces', { name, ...extra }),
    );

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    rmSync(outside, { recursive: true, force: true });
  });

  it('creates a space with a folder under the default path', async () => {
    const res = await api().post('/api/spaces', { name: '  Project A  ', icon: '🚀', color: '#ff0000' });
    assert.equal(res.status, 200);
    const space = res.body.data;
    assert.match(space.id, /^[0-9a-f-]{36}$/);
    assert.equal(space.name, 'Project A');
    assert.equal(space.icon, '🚀');
    assert.equal(space.color, '#ff0000');
    assert.equal(space.isTemp, false);
    const defaultPath = (await api().get('/api/spaces/default-path')).body.data as string;
    assert.equal(defaultPath, join(server.dataDir, 'spaces'));
    assert.equal(space.path, join(defaultPath, space.id));
    assert.ok(existsSync(space.path));
    assert.ok((await create('No icon')).icon.length > 0, 'a default icon');
  });

  it('validates the name and customPath', async () => {
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 5 }, { name: 'x'.repeat(201) }]) {
      const res = await api().post('/api/spaces', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.error, /name/);
    }
    assert.equal((await api().post('/api/spaces', { name: 'r', customPath: 'relative/dir' })).status, 400);
    assert.equal((await api().post('/api/spaces', { name: 'r', customPath: '/' })).status, 400);
    assert.equal((await api().post('/api/spaces', { name: 'r', customPath: server.dataDir })).status, 400);
    assert.equal((await api().post('/api/spaces', { name: 'r', customPath: join(server.dataDir, '..') })).status, 400);
  });

  it('creates a space in a custom folder, refusing a folder another space uses', async () => {
    const folder = join(outside, 'custom-a');
    const space = await create('Custom', { customPath: folder });
    assert.equal(space.path, folder);
    assert.ok(existsSync(folder));
    const again = await api().post('/api/spaces', { name: 'Dup', customPath: folder });
    assert.equal(again.status, 409);
  });

  it('lists user spaces without the temporary one; reads it at /api/spaces/svc', async () => {
    const list = (await api().get('/api/spaces')).body.data as Array<{ id: string; name: string; path: string }>;
    assert.ok(list.length >= 3);
    assert.ok(list.every((s) => s.id !== 'svc-temp' && typeof s.name === 'string' && typeof s.path === 'string'));
    const temp = await api().get('/api/spaces/svc');
    assert.equal(temp.status, 200);
    assert.equal(temp.body.data.id, 'svc-temp');
    assert.equal(temp.body.data.isTemp, true);
    assert.equal(temp.body.data.path, join(server.dataDir, 'temp'));
    assert.ok(existsSync(temp.body.data.path));
    assert.equal((await api().get('/api/spaces/svc-temp')).body.data.id, 'svc-temp');
  });

  it('gets, updates and 404s', async () => {
    const space = await create('Before');
    const got = await api().get(`/api/spaces/${space.id}`);
    assert.equal(got.body.data.name, 'Before');
    const updated = await api().put(`/api/spaces/${space.id}`, { name: 'After', icon: '🎯' });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.data.name, 'After');
    assert.equal(updated.body.data.icon, '🎯');
    assert.equal((await api().put(`/api/spaces/${space.id}`, { name: '' })).status, 400);
    const missing = await api().get('/api/spaces/3f1e0e52-0000-4000-8000-000000000000');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { success: false, error: 'Space not found' });
    assert.equal((await api().put('/api/spaces/3f1e0e52-0000-4000-8000-000000000000', { name: 'x' })).status, 404);
  });

  it('reorders fully and partially', async () => {
    const ids = (await api().get('/api/spaces')).body.data.map((s: { id: string }) => s.id) as string[];
    const reversed = [...ids].reverse();
    assert.deepEqual((await api().put('/api/spaces/reorder', { spaceIds: reversed })).body, { success: true });
    assert.deepEqual(
      (await api().get('/api/spaces')).body.data.map((s: { id: string }) => s.id),
      reversed,
    );
    // A partial list: the listed ones come first in the given order, the rest keep their order.
    const [first, second] = [ids[0]!, ids[1]!];
    await api().put('/api/spaces/reorder', { spaceIds: [first, second] });
    const after = (await api().get('/api/spaces')).body.data.map((s: { id: string }) => s.id) as string[];
    assert.deepEqual(after, [first, second, ...reversed.filter((id) => id !== first && id !== second)]);
    assert.equal((await api().put('/api/spaces/reorder', { spaceIds: 'nope' })).status, 400);
  });

  it('changes the working folder without moving anything', async () => {
    const space = await create('Moving');
    writeFileSync(join(space.path, 'keep.txt'), 'old folder file');
    const target = join(outside, 'work');
    mkdirSync(target);
    writeFileSync(join(target, 'there.txt'), 'new folder file');
    const res = await api().put(`/api/spaces/${space.id}/working-dir`, { workingDir: target });
    assert.equal(res.status, 200);
    assert.equal(res.body.data.path, target);
    assert.ok(existsSync(join(space.path, 'keep.txt')), 'old folder untouched');
    assert.deepEqual(readdirSync(target), ['there.txt'], 'new folder untouched');
    assert.deepEqual((await api().post(`/api/spaces/${space.id}/open`, {})).body, {
      success: true,
      data: { path: target },
    });

    const missing = await api().put(`/api/spaces/${space.id}/working-dir`, { workingDir: join(outside, 'nope') });
    assert.equal(missing.body.success, false);
    assert.equal(missing.body.error, 'That folder does not exist.');
    const file = await api().put(`/api/spaces/${space.id}/working-dir`, { workingDir: join(target, 'there.txt') });
    assert.equal(file.body.error, 'That folder does not exist.');
    const inside = await api().put(`/api/spaces/${space.id}/working-dir`, {
      workingDir: join(server.dataDir, 'spaces'),
    });
    assert.equal(inside.status, 400);
    assert.match(inside.body.error, /outside/);
    const parent = await api().put(`/api/spaces/${space.id}/working-dir`, { workingDir: join(server.dataDir, '..') });
    assert.equal(parent.status, 400);
    const temp = await api().put('/api/spaces/svc-temp/working-dir', { workingDir: target });
    assert.equal(temp.status, 403);
    assert.equal((await api().get(`/api/spaces/${space.id}`)).body.data.path, target, 'refusals changed nothing');
  });

  it('deletes a space, its folder and nothing else', async () => {
    const space = await create('Doomed');
    mkdirSync(join(space.path, 'sub'));
    writeFileSync(join(space.path, 'sub', 'f.txt'), 'x');
    const keep = await create('Kept');
    assert.deepEqual((await api().del(`/api/spaces/${space.id}`)).body, { success: true });
    assert.ok(!existsSync(space.path));
    assert.equal((await api().get(`/api/spaces/${space.id}`)).status, 404);
    assert.ok(existsSync(keep.path));
    assert.equal((await api().del(`/api/spaces/${space.id}`)).status, 404);
    assert.equal((await api().del('/api/spaces/svc-temp')).status, 403);
    assert.ok(existsSync(server.dataDir));
  });

  it('reports memory state from the .svc files', async () => {
    const space = await create('Memory');
    const empty = (await api().get(`/api/spaces/${space.id}/memory`)).body.data;
    assert.deepEqual(empty, {
      exists: false,
      totalBytes: 0,
      topicCount: 0,
      lastConsolidatedAt: null,
      lastAttempt: null,
      consolidating: false,
    });
    mkdirSync(join(space.path, '.svc', 'memory', 'topics'), { recursive: true });
    writeFileSync(join(space.path, '.svc', 'memory.md'), '# now\nhello\n');
    writeFileSync(join(space.path, '.svc', 'memory', 'topics', 'a.md'), 'topic a');
    writeFileSync(join(space.path, '.svc', 'memory', 'topics', 'b.md'), 'topic bb');
    const at = '2026-11-20T10:00:00.000Z';
    writeFileSync(
      join(space.path, '.svc', 'memory', '.state.json'),
      JSON.stringify({ lastConsolidatedAt: at, lastAttempt: { at, outcome: 'committed' } }),
    );
    const state = (await api().get(`/api/spaces/${space.id}/memory`)).body.data;
    assert.deepEqual(state, {
      exists: true,
      totalBytes: 12 + 7 + 8,
      topicCount: 2,
      lastConsolidatedAt: at,
      lastAttempt: { at, outcome: 'committed' },
      consolidating: false,
    });
    assert.equal((await api().get('/api/spaces/3f1e0e52-0000-4000-8000-000000000000/memory')).status, 404);
  });

  it('reads defaults and merges preference updates', async () => {
    const space = await create('Prefs');
    const defaults = await api().get(`/api/spaces/${space.id}/preferences`);
    assert.deepEqual(defaults.body, {
      success: true,
      data: { memory: { enabled: true, autoConsolidate: true, cadence: 'diligent' } },
    });
    const first = await api().put(`/api/spaces/${space.id}/preferences`, { memory: { cadence: 'economical' } });
    assert.equal(first.status, 200);
    assert.equal(first.body.data.id, space.id, 'answers the updated space');
    assert.deepEqual(first.body.data.preferences.memory, {
      enabled: true,
      autoConsolidate: true,
      cadence: 'economical',
    });
    await api().put(`/api/spaces/${space.id}/preferences`, { memory: { enabled: false } });
    const merged = (await api().get(`/api/spaces/${space.id}/preferences`)).body.data;
    assert.deepEqual(merged, { memory: { enabled: false, autoConsolidate: true, cadence: 'economical' } });
    const bad = await api().put(`/api/spaces/${space.id}/preferences`, { memory: { cadence: 'sometimes' } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /memory\.cadence/);
    const badBool = await api().put(`/api/spaces/${space.id}/preferences`, { memory: { enabled: 'yes' } });
    assert.match(badBool.body.error, /memory\.enabled/);
    assert.deepEqual(
      (await api().get(`/api/spaces/${space.id}/preferences`)).body.data,
      merged,
      'refusals changed nothing',
    );
  });

  it('announces space changes to every signed-in socket', async () => {
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    const space = await create('Announced');
    const created = await ws.event('space:changed');
    assert.deepEqual(created.data, { spaceId: space.id, change: 'created' });
    await api().del(`/api/spaces/${space.id}`);
    assert.deepEqual((await ws.event('space:changed')).data, { spaceId: space.id, change: 'deleted' });
    ws.close();
  });
});
