import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { startServer, type TestServer } from '#testing/test-server.js';

/** Every file under a folder with its content (symlinks not followed), to prove nothing changed. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, e.name);
      const key = relative(dir, full);
      if (e.isDirectory()) {
        out[`${key}/`] = '';
        walk(full);
      } else if (e.isSymbolicLink()) out[key] = '-> link';
      else out[key] = readFileSync(full, 'latin1');
    }
  };
  walk(dir);
  return out;
}

describe('path guard: nothing outside an allowed workspace is read, written, moved or deleted', () => {
  let server: TestServer;
  let outside: string;
  let spaceA: { id: string; path: string };
  let spaceB: { id: string; path: string };
  const get = (path: string) => apiClient(server).get(path);
  const post = (path: string, body: object) => apiClient(server).post(path, body);
  const del = (path: string, body: object) => apiClient(server).del(path, body);
  const a = (rest = '') => `/api/spaces/${spaceA.id}/artifacts${rest}`;
  let before_: { outside: Record<string, string>; b: Record<string, string>; sentinel: string };

  function denied(res: request.Response, what: string): void {
    if (/NUL|%00/.test(what)) {
      // A NUL in any input string is refused before the guard: 400 naming the field.
      assert.equal(res.status, 400, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.match(res.body.error, /^\w+ must not contain NUL characters$/, what);
      return;
    }
    assert.equal(res.status, 403, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
    assert.deepEqual(res.body, { success: false, error: 'Access denied' }, what);
  }

  async function createSpace(name: string): Promise<{ id: string; path: string }> {
    const res = await post('/api/spaces', { name });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return { id: res.body.data.id, path: res.body.data.path };
  }

  /** Hostile spellings of places outside space A (absolute paths only). */
  function escapes(): Array<[string, string]> {
    return [
      ['dot-dot to the data folder', `${spaceA.path}/../../sentinel.txt`],
      ['dot-dot to /etc/passwd', `${spaceA.path}/../../../../../../../../etc/passwd`],
      ['dot-dot through a sub folder', `${spaceA.path}/docs/../../../sentinel.txt`],
      ['absolute /etc/passwd', '/etc/passwd'],
      ['absolute missing outside', '/etc/svc-does-not-exist'],
      ['absolute outside folder', join(outside, 'secret.txt')],
      ['symlinked folder leading outside', join(spaceA.path, 'escape', 'secret.txt')],
      ['symlinked file leading outside', join(spaceA.path, 'secret-link')],
      ['new name under a symlink leading outside', join(spaceA.path, 'escape', 'planted.txt')],
      ['dangling symlink leading outside', join(spaceA.path, 'dangling')],
      ['sibling sharing the prefix', `${spaceA.path}-evil/x.txt`],
      ['NUL byte', `${join(spaceA.path, 'docs', 'a.md')}\0.txt`],
      ['the data folder itself', server.dataDir],
    ];
  }

  before(async () => {
    server = await startServer();
    outside = mkdtempSync(join(tmpdir(), 'svc-outside-'));
    writeFileSync(join(outside, 'secret.txt'), 'top secret');
    // A file of the data folder, beside the spaces (the database and the password live there too).
    writeFileSync(join(server.dataDir, 'sentinel.txt'), 'data folder');
    mkdirSync(join(outside, 'sub'));
    writeFileSync(join(outside, 'sub', 'inner.txt'), 'inner');
    spaceA = await createSpace('A');
    spaceB = await createSpace('B');
    mkdirSync(join(spaceA.path, 'docs'));
    writeFileSync(join(spaceA.path, 'docs', 'a.md'), 'a');
    writeFileSync(join(spaceB.path, 'b.txt'), 'b');
    symlinkSync(outside, join(spaceA.path, 'escape'));
    symlinkSync(join(outside, 'secret.txt'), join(spaceA.path, 'secret-link'));
    symlinkSync(join(outside, 'dangling-target.txt'), join(spaceA.path, 'dangling'));
    before_ = {
      outside: snapshot(outside),
      b: snapshot(spaceB.path),
      sentinel: readFileSync(join(server.dataDir, 'sentinel.txt'), 'utf8'),
    };
  });

  after(async () => {
    await server.stop();
    rmSync(outside, { recursive: true, force: true });
  });

  function assertUntouched(): void {
    assert.deepEqual(snapshot(outside), before_.outside, 'the outside folder changed');
    assert.deepEqual(snapshot(spaceB.path), before_.b, 'space B changed');
    assert.equal(readFileSync(join(server.dataDir, 'sentinel.txt'), 'utf8'), before_.sentinel);
    assert.ok(!existsSync(join(outside, 'planted.txt')));
    assert.ok(!existsSync(join(outside, 'dangling-target.txt')));
    assert.ok(!existsSync(`${spaceA.path}-evil`));
  }

  it('content and detect-type refuse every escape with 403 Access denied', async () => {
    for (const [what, path] of escapes()) {
      denied(await get(`/api/artifacts/content?path=${encodeURIComponent(path)}`), `content: ${what}`);
      denied(await get(`/api/artifacts/detect-type?path=${encodeURIComponent(path)}`), `detect-type: ${what}`);
    }
    assertUntouched();
  });

  it('refuses URL-encoded traversal in the query string', async () => {
    const prefix = encodeURIComponent(spaceA.path);
    for (const tail of [
      '%2F%2e%2e%2F%2e%2e%2Fsentinel.txt',
      '%2F..%2F..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd',
      '/%2E%2E/%2E%2E/sentinel.txt',
    ]) {
      denied(await get(`/api/artifacts/content?path=${prefix}${tail}`), `content ${tail}`);
      denied(await get(`/api/artifacts/detect-type?path=${prefix}${tail}`), `detect-type ${tail}`);
    }
    // NUL byte, URL-encoded.
    denied(await get(`/api/artifacts/content?path=${prefix}%2Fdocs%2Fa.md%00`), 'content %00');
    // Double-encoded dots are a literal (missing) name inside the space, not a traversal.
    const literal = await get(`/api/artifacts/content?path=${prefix}%2F%252e%252e%252Fsentinel.txt`);
    assert.equal(literal.status, 404);
    assertUntouched();
  });

  it('refuses relative paths where no space gives them a base', async () => {
    for (const path of ['docs/a.md', '../sentinel.txt', 'sentinel.txt', '.']) {
      denied(await get(`/api/artifacts/content?path=${encodeURIComponent(path)}`), `content ${path}`);
      denied(await post('/api/artifacts/save', { path, content: 'x' }), `save ${path}`);
    }
    assertUntouched();
  });

  it('save refuses every escape and writes nothing', async () => {
    for (const [what, path] of escapes()) {
      denied(await post('/api/artifacts/save', { path, content: 'pwned' }), `save: ${what}`);
    }
    denied(
      await post('/api/artifacts/save', { path: join(outside, 'new.txt'), content: 'pwned' }),
      'save: new file outside',
    );
    denied(await post('/api/artifacts/save', { path: spaceA.path, content: 'pwned' }), 'save: the space root');
    assertUntouched();
    assert.ok(!existsSync(join(outside, 'new.txt')));
  });

  it('files by path may be in any space (space B is allowed there)', async () => {
    const res = await get(`/api/artifacts/content?path=${encodeURIComponent(join(spaceB.path, 'b.txt'))}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.content, 'b');
  });

  it('space operations refuse paths outside their own space, another space included', async () => {
    const hostile: Array<[string, string]> = [
      ...escapes(),
      ['another space', join(spaceB.path, 'b.txt')],
      ['another space root', spaceB.path],
      [
        'dot-dot into another space',
        `${spaceA.path}/docs/../../${relative(join(spaceA.path, '..'), spaceB.path)}/b.txt`,
      ],
    ];
    for (const [what, path] of hostile) {
      denied(await post(a('/children'), { dirPath: path }), `children: ${what}`);
      denied(await post(a('/file'), { name: 'planted.txt', parentPath: path }), `file parentPath: ${what}`);
      denied(await post(a('/folder'), { name: 'planted', parentPath: path }), `folder parentPath: ${what}`);
      denied(await post(a('/move'), { oldPath: path }), `move oldPath: ${what}`);
      denied(
        await post(a('/move'), { oldPath: join(spaceA.path, 'docs', 'a.md'), newParentPath: path }),
        `move newParentPath: ${what}`,
      );
      denied(await post(a('/rename'), { oldPath: path, newName: 'renamed.txt' }), `rename: ${what}`);
      denied(await del(a(), { path }), `delete: ${what}`);
    }
    assertUntouched();
    assert.equal(readFileSync(join(spaceA.path, 'docs', 'a.md'), 'utf8'), 'a');
    assert.ok(!existsSync(join(server.dataDir, 'trash', 'files', 'b.txt')));
  });

  it('space operations refuse relative escapes', async () => {
    const up = relative(spaceA.path, spaceB.path); // ../<B's id>
    for (const path of ['..', '../..', `${up}/b.txt`, 'escape', 'escape/secret.txt', 'docs/../../x', 'secret-link']) {
      denied(await post(a('/children'), { dirPath: path }), `children ${path}`);
      denied(await post(a('/file'), { name: 'planted.txt', parentPath: path }), `file ${path}`);
      denied(
        await post(a('/move'), { oldPath: join(spaceA.path, 'docs', 'a.md'), newParentPath: path }),
        `move to ${path}`,
      );
    }
    for (const path of [`${up}/b.txt`, 'escape/secret.txt', 'secret-link', 'dangling', '../../sentinel.txt']) {
      denied(await del(a(), { path }), `delete ${path}`);
      denied(await post(a('/rename'), { oldPath: path, newName: 'r' }), `rename ${path}`);
      denied(await post(a('/move'), { oldPath: path }), `move ${path}`);
    }
    assertUntouched();
  });

  it('does not let a symlink name be used to plant files outside', async () => {
    // Creating a file whose name is an existing symlink leading outside.
    denied(await post(a('/file'), { name: 'secret-link', content: 'pwned' }), 'file over a symlink');
    denied(await post(a('/file'), { name: 'dangling', content: 'pwned' }), 'file over a dangling symlink');
    denied(await post(a('/folder'), { name: 'dangling' }), 'folder over a dangling symlink');
    // Renaming or moving something onto the symlink's name would not write outside, but it is refused too.
    writeFileSync(join(spaceA.path, 'top.txt'), 'top');
    denied(
      await post(a('/rename'), { oldPath: join(spaceA.path, 'top.txt'), newName: 'secret-link' }),
      'rename onto a symlink',
    );
    writeFileSync(join(spaceA.path, 'docs', 'escape'), 'e');
    denied(await post(a('/move'), { oldPath: join(spaceA.path, 'docs', 'escape') }), 'move onto a symlink');
    assertUntouched();
    assert.equal(readFileSync(join(spaceA.path, 'top.txt'), 'utf8'), 'top');
    assert.equal(readFileSync(join(spaceA.path, 'docs', 'a.md'), 'utf8'), 'a');
  });

  it('names with slashes are 400, never a way out', async () => {
    for (const name of ['../planted.txt', '../../planted.txt', '/etc/planted', 'a/../../planted']) {
      assert.equal((await post(a('/file'), { name, content: 'x' })).status, 400, name);
      assert.equal((await post(a('/folder'), { name })).status, 400, name);
      assert.equal(
        (await post(a('/rename'), { oldPath: join(spaceA.path, 'docs', 'a.md'), newName: name })).status,
        400,
        name,
      );
    }
    assertUntouched();
    assert.ok(!existsSync(join(spaceA.path, '..', 'planted.txt')));
  });

  it('the space root itself cannot be moved, renamed or deleted', async () => {
    denied(await del(a(), { path: spaceA.path }), 'delete root');
    denied(await post(a('/rename'), { oldPath: spaceA.path, newName: 'x' }), 'rename root');
    denied(await post(a('/move'), { oldPath: spaceA.path, newParentPath: join(spaceA.path, 'docs') }), 'move root');
    denied(await post(a('/move'), { oldPath: '.' }), 'move root, relative');
    assert.ok(statSync(spaceA.path).isDirectory());
  });

  it('.svc at the root cannot be created, moved, renamed or deleted', async () => {
    mkdirSync(join(spaceA.path, '.svc'), { recursive: true });
    writeFileSync(join(spaceA.path, '.svc', 'memory.md'), 'memory');
    mkdirSync(join(spaceA.path, 'other'), { recursive: true });
    const svc = join(spaceA.path, '.svc');
    const checks: Array<[string, request.Response]> = [
      ['delete', await del(a(), { path: svc })],
      ['rename', await post(a('/rename'), { oldPath: svc, newName: 'svc-old' })],
      ['move', await post(a('/move'), { oldPath: svc, newParentPath: join(spaceA.path, 'other') })],
      ['rename onto', await post(a('/rename'), { oldPath: join(spaceA.path, 'other'), newName: '.svc' })],
      ['create file', await post(a('/file'), { name: '.svc' })],
      ['create folder', await post(a('/folder'), { name: '.svc' })],
      ['save', await post('/api/artifacts/save', { path: svc, content: 'x' })],
    ];
    for (const [what, res] of checks) {
      assert.equal(res.status, 403, `${what}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.success, false);
    }
    assert.equal(readFileSync(join(svc, 'memory.md'), 'utf8'), 'memory');
    assert.ok(statSync(join(spaceA.path, 'other')).isDirectory());
    // A .svc deeper down is an ordinary folder.
    const deep = await post(a('/folder'), { name: '.svc', parentPath: join(spaceA.path, 'other') });
    assert.equal(deep.status, 200);
    // And .svc stays out of listings.
    const list = (await get(a('?maxDepth=5'))).body.data as Array<{ relativePath: string }>;
    assert.ok(!list.some((e) => e.relativePath === '.svc' || e.relativePath.startsWith('.svc/')));
    assert.ok(list.some((e) => e.relativePath === 'other/.svc'));
    const tree = (await get(a('/tree'))).body.data as { nodes: Array<{ name: string }> };
    assert.ok(!tree.nodes.some((n) => n.name === '.svc'));
  });

  it('listings leave out symlinks that lead outside and never descend through them', async () => {
    const list = (await get(a('?maxDepth=10'))).body.data as Array<{ name: string; relativePath: string }>;
    for (const name of ['escape', 'secret-link', 'dangling'])
      assert.ok(!list.some((e) => e.relativePath === name), name);
    assert.ok(!list.some((e) => e.relativePath.startsWith('escape/')));
    const tree = (await get(a('/tree'))).body.data as { nodes: Array<{ name: string }> };
    assert.ok(!tree.nodes.some((n) => n.name === 'escape'));
  });
});
