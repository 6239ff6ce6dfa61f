import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { startServer, type TestServer } from '#testing/test-server.js';

/** A 1×1 transparent PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const MB = 1024 * 1024;

interface Entry {
  id: string;
  name: string;
  type: 'file' | 'folder';
  path: string;
  relativePath: string;
  extension: string;
  size: number;
  childrenLoaded?: boolean;
  children?: Entry[];
}

describe('space files and files by path', () => {
  let server: TestServer;
  let spaceId: string;
  let root: string;
  /** Calls without the password. */
  const unsigned = () => request(server.url);
  const get = (path: string) => apiClient(server).get(path);
  const post = (path: string, body: object) => apiClient(server).post(path, body);
  const del = (path: string, body: object) => apiClient(server).del(path, body);
  const spaceUrl = (rest = '') => `/api/spaces/${spaceId}/artifacts${rest}`;

  /** A fresh space whose folder is empty, for tests that look at whole listings. */
  async function freshSpace(name: string): Promise<{ id: string; path: string }> {
    const res = await post('/api/spaces', { name });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return { id: res.body.data.id as string, path: res.body.data.path as string };
  }

  function expectFailure(res: request.Response, status: number, error?: string | RegExp): void {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(res.body.success, false);
    assert.equal(typeof res.body.error, 'string');
    if (typeof error === 'string') assert.equal(res.body.error, error);
    else if (error) assert.match(res.body.error, error);
  }

  before(async () => {
    server = await startServer();
    const space = await freshSpace('Files');
    spaceId = space.id;
    root = space.path;
  });
  after(() => server.stop());

  describe('listing', () => {
    let id: string;
    let path: string;
    before(async () => {
      ({ id, path } = await freshSpace('Listing'));
      mkdirSync(join(path, 'b-folder', 'inner', 'deepest'), { recursive: true });
      mkdirSync(join(path, 'A-folder'));
      mkdirSync(join(path, '.svc', 'memory'), { recursive: true });
      writeFileSync(join(path, '.svc', 'memory.md'), 'private');
      writeFileSync(join(path, 'z.TXT'), 'zz');
      writeFileSync(join(path, 'a.md'), '# a');
      writeFileSync(join(path, 'file10.txt'), '');
      writeFileSync(join(path, 'file9.txt'), '');
      writeFileSync(join(path, 'b-folder', 'note.json'), '{}');
      writeFileSync(join(path, 'b-folder', 'inner', 'x.ts'), 'let x = 1;');
      writeFileSync(join(path, 'b-folder', 'inner', 'deepest', 'y.ts'), '');
    });

    it('lists two levels by default, folders first then by name, without .svc', async () => {
      const res = await get(`/api/spaces/${id}/artifacts`);
      assert.equal(res.status, 200);
      assert.equal(res.body.success, true);
      const entries = res.body.data as Entry[];
      assert.deepEqual(
        entries.map((e) => e.relativePath),
        ['A-folder', 'b-folder', 'b-folder/inner', 'b-folder/note.json', 'a.md', 'file9.txt', 'file10.txt', 'z.TXT'],
      );
      assert.ok(!entries.some((e) => e.name === '.svc' || e.relativePath.startsWith('.svc')));
      assert.deepEqual(
        entries.find((e) => e.name === 'z.TXT'),
        {
          id: 'z.TXT',
          name: 'z.TXT',
          type: 'file',
          path: join(path, 'z.TXT'),
          relativePath: 'z.TXT',
          extension: 'txt',
          size: 2,
        },
      );
      assert.deepEqual(
        entries.find((e) => e.name === 'inner'),
        {
          id: 'b-folder/inner',
          name: 'inner',
          type: 'folder',
          path: join(path, 'b-folder', 'inner'),
          relativePath: 'b-folder/inner',
          extension: '',
          size: 0,
        },
      );
    });

    it('honours maxDepth', async () => {
      const one = (await get(`/api/spaces/${id}/artifacts?maxDepth=1`)).body.data as Entry[];
      assert.deepEqual(
        one.map((e) => e.name),
        ['A-folder', 'b-folder', 'a.md', 'file9.txt', 'file10.txt', 'z.TXT'],
      );
      const zero = await get(`/api/spaces/${id}/artifacts?maxDepth=0`);
      assert.deepEqual(zero.body, { success: true, data: [] });
      const deep = (await get(`/api/spaces/${id}/artifacts?maxDepth=10`)).body.data as Entry[];
      assert.ok(deep.some((e) => e.relativePath === 'b-folder/inner/deepest/y.ts'));
      assert.ok(!deep.some((e) => e.relativePath.startsWith('.svc')));
    });

    it('refuses a maxDepth that is not a non-negative integer', async () => {
      for (const bad of ['-1', '1.5', 'abc', '', '2x']) {
        expectFailure(await get(`/api/spaces/${id}/artifacts?maxDepth=${bad}`), 400, /maxDepth/);
      }
    });

    it('tree: root entries, top-level folders with their children loaded, deeper ones not', async () => {
      const res = await get(`/api/spaces/${id}/artifacts/tree`);
      assert.equal(res.status, 200);
      const { workspaceRoot, nodes } = res.body.data as { workspaceRoot: string; nodes: Entry[] };
      assert.equal(workspaceRoot, path);
      assert.deepEqual(
        nodes.map((n) => n.name),
        ['A-folder', 'b-folder', 'a.md', 'file9.txt', 'file10.txt', 'z.TXT'],
      );
      const b = nodes.find((n) => n.name === 'b-folder')!;
      assert.equal(b.childrenLoaded, true);
      assert.deepEqual(
        b.children!.map((c) => [c.name, c.type, c.childrenLoaded]),
        [
          ['inner', 'folder', false],
          ['note.json', 'file', undefined],
        ],
      );
      assert.equal(b.children![0]!.children, undefined);
      assert.deepEqual(nodes.find((n) => n.name === 'A-folder')!.children, []);
      const file = nodes.find((n) => n.name === 'a.md')!;
      assert.deepEqual([file.id, file.type, file.path], ['a.md', 'file', join(path, 'a.md')]);
    });

    it('children: one folder level, by absolute or relative path', async () => {
      const res = await post(`/api/spaces/${id}/artifacts/children`, { dirPath: join(path, 'b-folder') });
      assert.equal(res.status, 200);
      assert.deepEqual(
        (res.body.data as Entry[]).map((e) => [e.name, e.type, e.relativePath, e.childrenLoaded]),
        [
          ['inner', 'folder', 'b-folder/inner', false],
          ['note.json', 'file', 'b-folder/note.json', undefined],
        ],
      );
      const relative = await post(`/api/spaces/${id}/artifacts/children`, { dirPath: 'b-folder/inner' });
      assert.deepEqual(
        (relative.body.data as Entry[]).map((e) => e.name),
        ['deepest', 'x.ts'],
      );
      const top = await post(`/api/spaces/${id}/artifacts/children`, { dirPath: path });
      assert.ok(!(top.body.data as Entry[]).some((e) => e.name === '.svc'));
    });

    it('children: 400 without dirPath, 404 for a missing folder, 400 for a file', async () => {
      expectFailure(await post(`/api/spaces/${id}/artifacts/children`, {}), 400, /dirPath/);
      expectFailure(await post(`/api/spaces/${id}/artifacts/children`, { dirPath: '' }), 400, /dirPath/);
      expectFailure(await post(`/api/spaces/${id}/artifacts/children`, { dirPath: join(path, 'nope') }), 404);
      expectFailure(await post(`/api/spaces/${id}/artifacts/children`, { dirPath: join(path, 'a.md') }), 400);
      expectFailure(await post(`/api/spaces/${id}/artifacts/children`, { dirPath: 5 }), 400, /dirPath/);
    });
  });

  describe('creating', () => {
    it('creates a file at the root with empty content by default', async () => {
      const res = await post(spaceUrl('/file'), { name: 'empty.txt' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { success: true, data: { path: join(root, 'empty.txt') } });
      assert.equal(readFileSync(join(root, 'empty.txt'), 'utf8'), '');
    });

    it('creates a file in a folder, absolute or relative parentPath, and overwrites silently', async () => {
      mkdirSync(join(root, 'docs'), { recursive: true });
      const a = await post(spaceUrl('/file'), { name: 'n.md', parentPath: join(root, 'docs'), content: 'one' });
      assert.deepEqual(a.body.data, { path: join(root, 'docs', 'n.md') });
      const b = await post(spaceUrl('/file'), { name: 'n.md', parentPath: 'docs', content: 'twö' });
      assert.equal(b.status, 200);
      assert.equal(readFileSync(join(root, 'docs', 'n.md'), 'utf8'), 'twö');
      assert.deepEqual(readdirSync(join(root, 'docs')), ['n.md'], 'no temporary file left');
      const c = await post(spaceUrl('/file'), { name: 'root.md', parentPath: '', content: 'r' });
      assert.deepEqual(c.body.data, { path: join(root, 'root.md') });
    });

    it('file: 400 without a plain name, 404 without the parent, 409 over a folder, 403 for .svc', async () => {
      expectFailure(await post(spaceUrl('/file'), {}), 400, 'name is required');
      expectFailure(await post(spaceUrl('/file'), { name: '' }), 400, 'name is required');
      expectFailure(await post(spaceUrl('/file'), { name: 'a/b.txt' }), 400, /name/);
      expectFailure(await post(spaceUrl('/file'), { name: '..' }), 400, /name/);
      expectFailure(await post(spaceUrl('/file'), { name: 'x.txt', content: 7 }), 400, /content/);
      expectFailure(await post(spaceUrl('/file'), { name: 'x.txt', parentPath: join(root, 'missing') }), 404);
      mkdirSync(join(root, 'occupied'), { recursive: true });
      expectFailure(await post(spaceUrl('/file'), { name: 'occupied' }), 409);
      expectFailure(await post(spaceUrl('/file'), { name: '.svc' }), 403);
      assert.ok(!existsSync(join(root, 'missing')));
    });

    it('creates folders; an existing folder is fine; a file in the way is a conflict', async () => {
      const res = await post(spaceUrl('/folder'), { name: 'made' });
      assert.deepEqual(res.body, { success: true, data: { path: join(root, 'made') } });
      assert.ok(statSync(join(root, 'made')).isDirectory());
      const again = await post(spaceUrl('/folder'), { name: 'made' });
      assert.deepEqual(again.body, { success: true, data: { path: join(root, 'made') } });
      const nested = await post(spaceUrl('/folder'), { name: 'sub', parentPath: join(root, 'made') });
      assert.deepEqual(nested.body.data, { path: join(root, 'made', 'sub') });
      writeFileSync(join(root, 'a-file'), '');
      expectFailure(await post(spaceUrl('/folder'), { name: 'a-file' }), 409);
      expectFailure(await post(spaceUrl('/folder'), {}), 400, 'name is required');
      expectFailure(await post(spaceUrl('/folder'), { name: 'x/y' }), 400, /name/);
      expectFailure(await post(spaceUrl('/folder'), { name: '.svc' }), 403);
      expectFailure(await post(spaceUrl('/folder'), { name: 'y', parentPath: 'nowhere' }), 404);
    });
  });

  describe('moving and renaming', () => {
    before(() => {
      mkdirSync(join(root, 'mv', 'src', 'child'), { recursive: true });
      mkdirSync(join(root, 'mv', 'dst'), { recursive: true });
      writeFileSync(join(root, 'mv', 'file.txt'), 'move me');
      writeFileSync(join(root, 'mv', 'dst', 'taken.txt'), 'already here');
      writeFileSync(join(root, 'mv', 'taken.txt'), 'incoming');
    });

    it('moves a file into a folder and back to the root by default', async () => {
      const res = await post(spaceUrl('/move'), {
        oldPath: join(root, 'mv', 'file.txt'),
        newParentPath: join(root, 'mv', 'dst'),
      });
      assert.deepEqual(res.body, { success: true, data: { path: join(root, 'mv', 'dst', 'file.txt') } });
      assert.equal(readFileSync(join(root, 'mv', 'dst', 'file.txt'), 'utf8'), 'move me');
      assert.ok(!existsSync(join(root, 'mv', 'file.txt')));
      const home = await post(spaceUrl('/move'), { oldPath: 'mv/dst/file.txt' });
      assert.deepEqual(home.body.data, { path: join(root, 'file.txt') });
      assert.ok(existsSync(join(root, 'file.txt')));
    });

    it('moves a folder with its content', async () => {
      const res = await post(spaceUrl('/move'), {
        oldPath: join(root, 'mv', 'src'),
        newParentPath: join(root, 'mv', 'dst'),
      });
      assert.deepEqual(res.body.data, { path: join(root, 'mv', 'dst', 'src') });
      assert.ok(statSync(join(root, 'mv', 'dst', 'src', 'child')).isDirectory());
    });

    it('move: 400 without oldPath, 404 missing, 409 when the target exists, 400 into itself', async () => {
      expectFailure(await post(spaceUrl('/move'), {}), 400, 'oldPath is required');
      expectFailure(await post(spaceUrl('/move'), { oldPath: join(root, 'mv', 'ghost') }), 404);
      expectFailure(
        await post(spaceUrl('/move'), {
          oldPath: join(root, 'mv', 'taken.txt'),
          newParentPath: join(root, 'mv', 'dst'),
        }),
        409,
      );
      assert.equal(readFileSync(join(root, 'mv', 'dst', 'taken.txt'), 'utf8'), 'already here');
      assert.equal(readFileSync(join(root, 'mv', 'taken.txt'), 'utf8'), 'incoming');
      const folder = join(root, 'mv', 'dst', 'src');
      expectFailure(
        await post(spaceUrl('/move'), { oldPath: folder, newParentPath: join(folder, 'child') }),
        400,
        /itself/,
      );
      expectFailure(
        await post(spaceUrl('/move'), { oldPath: join(root, 'mv', 'dst'), newParentPath: join(root, 'mv', 'dst') }),
        400,
      );
      expectFailure(
        await post(spaceUrl('/move'), { oldPath: join(root, 'mv', 'taken.txt'), newParentPath: join(root, 'nowhere') }),
        404,
      );
      expectFailure(
        await post(spaceUrl('/move'), {
          oldPath: join(root, 'mv', 'taken.txt'),
          newParentPath: join(root, 'mv', 'taken.txt'),
        }),
        400,
      );
      // Moving to where it already is changes nothing.
      const same = await post(spaceUrl('/move'), {
        oldPath: join(root, 'mv', 'taken.txt'),
        newParentPath: join(root, 'mv'),
      });
      assert.deepEqual(same.body.data, { path: join(root, 'mv', 'taken.txt') });
    });

    it('renames, answering {success:true}', async () => {
      writeFileSync(join(root, 'old-name.txt'), 'content');
      const res = await post(spaceUrl('/rename'), { oldPath: join(root, 'old-name.txt'), newName: 'new-name.txt' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { success: true });
      assert.equal(readFileSync(join(root, 'new-name.txt'), 'utf8'), 'content');
      assert.ok(!existsSync(join(root, 'old-name.txt')));
      mkdirSync(join(root, 'dir-to-rename'));
      assert.deepEqual((await post(spaceUrl('/rename'), { oldPath: 'dir-to-rename', newName: 'renamed-dir' })).body, {
        success: true,
      });
      assert.ok(statSync(join(root, 'renamed-dir')).isDirectory());
    });

    it('rename: 400 when either field is missing or the name has a slash, 404 missing, 409 on conflict', async () => {
      writeFileSync(join(root, 'r1.txt'), 'one');
      writeFileSync(join(root, 'r2.txt'), 'two');
      expectFailure(await post(spaceUrl('/rename'), { newName: 'x' }), 400, 'oldPath is required');
      expectFailure(await post(spaceUrl('/rename'), { oldPath: join(root, 'r1.txt') }), 400, 'newName is required');
      expectFailure(await post(spaceUrl('/rename'), {}), 400);
      expectFailure(
        await post(spaceUrl('/rename'), { oldPath: join(root, 'r1.txt'), newName: 'sub/r.txt' }),
        400,
        /newName/,
      );
      expectFailure(
        await post(spaceUrl('/rename'), { oldPath: join(root, 'r1.txt'), newName: '../r.txt' }),
        400,
        /newName/,
      );
      expectFailure(await post(spaceUrl('/rename'), { oldPath: join(root, 'ghost.txt'), newName: 'x.txt' }), 404);
      expectFailure(await post(spaceUrl('/rename'), { oldPath: join(root, 'r1.txt'), newName: 'r2.txt' }), 409);
      assert.equal(readFileSync(join(root, 'r1.txt'), 'utf8'), 'one');
      assert.equal(readFileSync(join(root, 'r2.txt'), 'utf8'), 'two');
      expectFailure(await post(spaceUrl('/rename'), { oldPath: join(root, 'r1.txt'), newName: '.svc' }), 403);
    });
  });

  describe('deleting to the trash', () => {
    it('moves files and folders to <data>/trash with .trashinfo records', async () => {
      writeFileSync(join(root, 'bin me.txt'), 'first');
      let res = await del(spaceUrl(), { path: join(root, 'bin me.txt') });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { success: true });
      assert.ok(!existsSync(join(root, 'bin me.txt')));
      writeFileSync(join(root, 'bin me.txt'), 'second');
      res = await del(spaceUrl(), { path: 'bin me.txt' });
      assert.equal(res.status, 200);
      mkdirSync(join(root, 'bin-dir', 'in'), { recursive: true });
      writeFileSync(join(root, 'bin-dir', 'in', 'f'), 'f');
      assert.equal((await del(spaceUrl(), { path: join(root, 'bin-dir') })).status, 200);

      const trash = join(server.dataDir, 'trash');
      assert.equal(readFileSync(join(trash, 'files', 'bin me.txt'), 'utf8'), 'first');
      assert.equal(readFileSync(join(trash, 'files', 'bin me.2.txt'), 'utf8'), 'second');
      assert.equal(readFileSync(join(trash, 'files', 'bin-dir', 'in', 'f'), 'utf8'), 'f');
      const info = readFileSync(join(trash, 'info', 'bin me.txt.trashinfo'), 'utf8');
      const encoded = join(root, 'bin me.txt').split('/').map(encodeURIComponent).join('/');
      assert.match(info, /^\[Trash Info\]\nPath=(.+)\nDeletionDate=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\n$/);
      assert.equal(info.split('\n')[1], `Path=${encoded}`);
      assert.ok(info.includes('bin%20me.txt'));
      assert.ok(existsSync(join(trash, 'info', 'bin me.2.txt.trashinfo')));
      assert.ok(existsSync(join(trash, 'info', 'bin-dir.trashinfo')));
    });

    it('delete: 400 without path, 404 when missing, 403 for the root and for .svc', async () => {
      expectFailure(await del(spaceUrl(), {}), 400, 'Missing file path');
      expectFailure(await del(spaceUrl(), { path: '' }), 400, 'Missing file path');
      expectFailure(await del(spaceUrl(), { path: join(root, 'never-there') }), 404);
      expectFailure(await del(spaceUrl(), { path: root }), 403);
      mkdirSync(join(root, '.svc'), { recursive: true });
      expectFailure(await del(spaceUrl(), { path: join(root, '.svc') }), 403);
      assert.ok(existsSync(root));
      assert.ok(existsSync(join(root, '.svc')));
    });
  });

  describe('reading and saving by path', () => {
    it('reads text exactly as stored, utf-8', async () => {
      const text = 'line 1\r\nsecret=hunter2\nü 🙂\n';
      writeFileSync(join(root, 'read.md'), text);
      const res = await get(`/api/artifacts/content?path=${encodeURIComponent(join(root, 'read.md'))}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        success: true,
        data: { content: text, mimeType: 'text/markdown', encoding: 'utf-8', size: Buffer.byteLength(text) },
      });
    });

    it('reads a PNG as base64 image/png', async () => {
      writeFileSync(join(root, 'pixel.png'), PNG);
      const res = await get(`/api/artifacts/content?path=${encodeURIComponent(join(root, 'pixel.png'))}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data, {
        content: PNG.toString('base64'),
        mimeType: 'image/png',
        encoding: 'base64',
        size: PNG.length,
      });
    });

    it('sniffs NUL bytes: a .txt holding them comes base64', async () => {
      const bytes = Buffer.from([0x61, 0x00, 0x62, 0xff]);
      writeFileSync(join(root, 'odd.txt'), bytes);
      const res = await get(`/api/artifacts/content?path=${encodeURIComponent(join(root, 'odd.txt'))}`);
      assert.equal(res.body.data.encoding, 'base64');
      assert.deepEqual(Buffer.from(res.body.data.content, 'base64'), bytes);
    });

    it('answers 500 File too large above 10 MB of text and 50 MB of binary', async () => {
      writeFileSync(join(root, 'big.txt'), Buffer.alloc(10 * MB + 1, 0x61));
      const text = await get(`/api/artifacts/content?path=${encodeURIComponent(join(root, 'big.txt'))}`);
      expectFailure(text, 500, 'File too large');
      assert.deepEqual(text.body, { success: false, error: 'File too large' });
      writeFileSync(join(root, 'limit.txt'), Buffer.alloc(10 * MB, 0x61));
      const atLimit = await get(`/api/artifacts/content?path=${encodeURIComponent(join(root, 'limit.txt'))}`);
      assert.equal(atLimit.status, 200);
      assert.equal(atLimit.body.data.size, 10 * MB);
      writeFileSync(join(root, 'huge.bin'), '');
      truncateSync(join(root, 'huge.bin'), 50 * MB + 1);
      expectFailure(
        await get(`/api/artifacts/content?path=${encodeURIComponent(join(root, 'huge.bin'))}`),
        500,
        'File too large',
      );
    });

    it('content: 400 without path, 404 missing, 400 for a folder', async () => {
      expectFailure(await get('/api/artifacts/content'), 400, 'Missing file path');
      expectFailure(await get('/api/artifacts/content?path='), 400, 'Missing file path');
      expectFailure(await get(`/api/artifacts/content?path=${encodeURIComponent(join(root, 'nope.txt'))}`), 404);
      expectFailure(await get(`/api/artifacts/content?path=${encodeURIComponent(root)}`), 400);
    });

    it('detects types', async () => {
      writeFileSync(join(root, 'page.html'), '<p>hi</p>');
      writeFileSync(join(root, 'code.ts'), 'export {};');
      const cases: Array<[string, object]> = [
        ['read.md', { isText: true, canViewInCanvas: true, contentType: 'markdown', mimeType: 'text/markdown' }],
        ['pixel.png', { isText: false, canViewInCanvas: true, contentType: 'image', mimeType: 'image/png' }],
        ['page.html', { isText: true, canViewInCanvas: true, contentType: 'html', mimeType: 'text/html' }],
        ['code.ts', { isText: true, canViewInCanvas: true, contentType: 'code', mimeType: 'text/typescript' }],
        [
          'huge.bin',
          { isText: false, canViewInCanvas: false, contentType: 'binary', mimeType: 'application/octet-stream' },
        ],
      ];
      for (const [name, expected] of cases) {
        const res = await get(`/api/artifacts/detect-type?path=${encodeURIComponent(join(root, name))}`);
        assert.equal(res.status, 200, name);
        assert.deepEqual(res.body, { success: true, data: expected }, name);
      }
      expectFailure(await get('/api/artifacts/detect-type'), 400, 'Missing file path');
      expectFailure(await get(`/api/artifacts/detect-type?path=${encodeURIComponent(join(root, 'nope.md'))}`), 404);
    });

    it('saves atomically: content replaced, mode kept, no temporary file left', async () => {
      mkdirSync(join(root, 'save'), { recursive: true });
      const file = join(root, 'save', 'doc.txt');
      writeFileSync(file, 'before');
      chmodSync(file, 0o640);
      const res = await post('/api/artifacts/save', { path: file, content: 'after ✓' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { success: true });
      assert.equal(readFileSync(file, 'utf8'), 'after ✓');
      assert.equal(statSync(file).mode & 0o777, 0o640);
      assert.deepEqual(readdirSync(join(root, 'save')), ['doc.txt']);
      assert.equal((await post('/api/artifacts/save', { path: file, content: '' })).status, 200);
      assert.equal(readFileSync(file, 'utf8'), '');
      // A new file in an existing folder is created.
      assert.equal(
        (await post('/api/artifacts/save', { path: join(root, 'save', 'new.txt'), content: 'n' })).status,
        200,
      );
      assert.equal(readFileSync(join(root, 'save', 'new.txt'), 'utf8'), 'n');
    });

    it('save: 400 without path or content, 400 for a folder, 404 without the folder', async () => {
      expectFailure(await post('/api/artifacts/save', { content: 'x' }), 400, 'Missing file path');
      expectFailure(await post('/api/artifacts/save', { path: join(root, 'save', 'doc.txt') }), 400, /content/);
      expectFailure(
        await post('/api/artifacts/save', { path: join(root, 'save', 'doc.txt'), content: 3 }),
        400,
        /content/,
      );
      expectFailure(await post('/api/artifacts/save', { path: join(root, 'save'), content: 'x' }), 400);
      expectFailure(await post('/api/artifacts/save', { path: join(root, 'no-dir', 'f.txt'), content: 'x' }), 404);
      assert.ok(!existsSync(join(root, 'no-dir')));
    });

    it('works in the temporary space too', async () => {
      const temp = (await get('/api/spaces/svc')).body.data as { path: string };
      const file = join(temp.path, 'scratch.txt');
      assert.equal((await post('/api/artifacts/save', { path: file, content: 'tmp' })).status, 200);
      const read = await get(`/api/artifacts/content?path=${encodeURIComponent(file)}`);
      assert.equal(read.body.data.content, 'tmp');
      const listed = (await get('/api/spaces/svc-temp/artifacts')).body.data as Entry[];
      assert.ok(listed.some((e) => e.name === 'scratch.txt'));
    });
  });

  it('answers 404 Space not found for every space operation on an unknown space', async () => {
    const unknown = '/api/spaces/00000000-0000-4000-8000-000000000000/artifacts';
    const responses = [
      await get(unknown),
      await get(`${unknown}/tree`),
      await post(`${unknown}/children`, { dirPath: root }),
      await post(`${unknown}/file`, { name: 'x.txt' }),
      await post(`${unknown}/folder`, { name: 'x' }),
      await post(`${unknown}/move`, { oldPath: join(root, 'file.txt') }),
      await post(`${unknown}/rename`, { oldPath: join(root, 'file.txt'), newName: 'y' }),
      await del(unknown, { path: join(root, 'file.txt') }),
    ];
    for (const res of responses) expectFailure(res, 404, 'Space not found');
    assert.ok(existsSync(join(root, 'file.txt')));
  });

  it('requires the access password', async () => {
    assert.equal((await unsigned().get(spaceUrl())).status, 401);
    assert.equal(
      (await unsigned().get(`/api/artifacts/content?path=${encodeURIComponent(join(root, 'read.md'))}`)).status,
      401,
    );
  });
});
