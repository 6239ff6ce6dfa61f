import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient, authHeaders } from '#testing/api-client.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

const MB = 1024 * 1024;
const LIMIT = 50 * MB;

/** Every byte value, then random bytes: nothing may be re-encoded on the way. */
function binary(size: number): Buffer {
  const head = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  return Buffer.concat([head, randomBytes(Math.max(0, size - 256))]).subarray(0, size);
}

/** Names in a folder, half-written temporary files included. */
const namesIn = (folder: string): string[] => readdirSync(folder).sort();

describe('streaming upload and download (addition to spec doc 2)', () => {
  let server: TestServer;
  let space: { id: string; path: string };
  const auth = () => authHeaders(server);
  const uploadUrl = (path: string, spaceId = space.id) =>
    `/api/spaces/${spaceId}/artifacts/upload?path=${encodeURIComponent(path)}`;
  const upload = (path: string, body: Buffer, spaceId = space.id) =>
    apiClient(server).put(uploadUrl(path, spaceId), body).set('Content-Type', 'application/octet-stream');
  const download = (path: string) =>
    apiClient(server)
      .get(`/api/artifacts/download?path=${encodeURIComponent(path)}`)
      .buffer(true)
      .parse((res, done) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => done(null, Buffer.concat(parts)));
      });

  function expectFailure(res: request.Response, status: number, error?: string | RegExp): void {
    const body = Buffer.isBuffer(res.body) ? JSON.parse(res.body.toString('utf8')) : res.body;
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(body.success, false);
    if (typeof error === 'string') assert.equal(body.error, error);
    else if (error) assert.match(body.error, error);
  }

  before(async () => {
    server = await startServer();
    const res = await apiClient(server).post('/api/spaces', { name: 'Uploads' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    space = res.body.data;
  });
  after(() => server?.stop());

  it('writes a binary file byte for byte and streams it back as an attachment', async () => {
    const bytes = binary(3 * MB + 17);
    const res = await upload(join(space.path, 'photo.bin'), bytes);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { success: true, data: { path: join(space.path, 'photo.bin'), size: bytes.length } });
    assert.ok(readFileSync(join(space.path, 'photo.bin')).equals(bytes));

    const back = await download(join(space.path, 'photo.bin'));
    assert.equal(back.status, 200);
    assert.equal(back.headers['content-length'], String(bytes.length));
    assert.equal(back.headers['content-disposition'], `attachment; filename="photo.bin"; filename*=UTF-8''photo.bin`);
    assert.ok((back.body as Buffer).equals(bytes), 'downloaded bytes differ');
  });

  it('takes a path relative to the space, replaces an existing file and names odd files exactly', async () => {
    mkdirSync(join(space.path, 'docs'));
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    );
    const name = 'Café "menu" (1).png';
    assert.equal((await upload(`docs/${name}`, Buffer.from('old'))).status, 200);
    const res = await upload(`docs/${name}`, png);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.path, join(space.path, 'docs', name));
    assert.ok(readFileSync(join(space.path, 'docs', name)).equals(png));
    assert.deepEqual(namesIn(join(space.path, 'docs')), [name], 'no temporary file left');

    const back = await download(join(space.path, 'docs', name));
    assert.equal(back.headers['content-type'], 'image/png');
    assert.equal(
      back.headers['content-disposition'],
      `attachment; filename="Caf_ _menu_ (1).png"; filename*=UTF-8''Caf%C3%A9%20%22menu%22%20%281%29.png`,
    );
    assert.ok((back.body as Buffer).equals(png));

    const empty = await upload('docs/empty.dat', Buffer.alloc(0));
    assert.deepEqual(empty.body.data, { path: join(space.path, 'docs', 'empty.dat'), size: 0 });
  });

  it('produces the usual change event', async () => {
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    try {
      const seen = () =>
        ws.frames.some(
          (f) =>
            f.channel === 'artifact:changed-batch' &&
            f.data?.spaceId === space.id &&
            (f.data.changes as Array<{ relativePath: string }>).some((c) => c.relativePath === 'evented.bin'),
        );
      // The space's watcher may start a moment after the space: upload again until it reports.
      const deadline = Date.now() + 20_000;
      while (!seen()) {
        assert.equal((await upload('evented.bin', binary(1000))).status, 200);
        await waitFor(seen, 1_500).catch(() => undefined);
        assert.ok(Date.now() < deadline, 'no artifact:changed-batch for the upload');
      }
    } finally {
      ws.close();
    }
  });

  it('refuses more than 50 MB, declared or streamed, and leaves the old file as it was', async () => {
    writeFileSync(join(space.path, 'big.bin'), 'original');
    // Announced too large: answered before any of the body is sent.
    const declared = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(new URL(uploadUrl('big.bin'), server.url), {
        method: 'PUT',
        headers: { ...auth(), 'Content-Type': 'application/octet-stream', 'Content-Length': String(LIMIT + 1) },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: text });
          req.destroy();
        });
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    assert.equal(declared.status, 413, declared.body);
    assert.equal(JSON.parse(declared.body).error, 'File too large (the upload limit is 50 MB)');

    // Chunked, no length announced: the server counts while writing.
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(uploadUrl('big.bin'), server.url);
      const req = httpRequest(
        url,
        { method: 'PUT', headers: { ...auth(), 'Content-Type': 'application/octet-stream' } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      const chunk = Buffer.alloc(MB, 7);
      let sent = 0;
      const pump = (): void => {
        while (sent <= LIMIT) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    assert.equal(chunked.status, 413, chunked.body);
    assert.equal(JSON.parse(chunked.body).error, 'File too large (the upload limit is 50 MB)');

    assert.equal(readFileSync(join(space.path, 'big.bin'), 'utf8'), 'original');
    assert.ok(!namesIn(space.path).some((n) => n.includes('big.bin') && n !== 'big.bin'), 'temporary file left');

    const exactly = await upload('limit.bin', Buffer.alloc(LIMIT, 1));
    assert.equal(exactly.status, 200, 'exactly 50 MB is accepted');
    assert.equal(exactly.body.data.size, LIMIT);
  });

  it('refuses hostile and bad paths with a clear error and writes nothing', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'svc-upload-outside-'));
    symlinkSync(outside, join(space.path, 'escape'));
    const other = (await apiClient(server).post('/api/spaces', { name: 'Other' })).body.data as {
      path: string;
    };
    const before = namesIn(space.path);
    const cases: Array<[string, number, string | RegExp]> = [
      ['../up.bin', 403, /Access denied/],
      ['/etc/up.bin', 403, /Access denied/],
      [join(outside, 'up.bin'), 403, /Access denied/],
      ['escape/up.bin', 403, /Access denied/],
      [join(other.path, 'up.bin'), 403, /Access denied/],
      ['.svc/up.bin', 403, /reserved for the service/],
      ['no-such-folder/up.bin', 404, 'Folder not found'],
      ['docs', 409, 'A folder already exists at that path'],
      [space.path, 403, /Access denied/],
    ];
    for (const [path, status, error] of cases) {
      expectFailure(await upload(path, Buffer.from('x')), status, error);
    }
    expectFailure(
      await apiClient(server).put(`/api/spaces/${space.id}/artifacts/upload`, Buffer.from('x')),
      400,
      'path is required',
    );
    expectFailure(await upload('nul\u0000.bin', Buffer.from('x')), 400, /path/);
    expectFailure(await apiClient(server).put(uploadUrl('json.bin'), { content: 'x' }), 400, /raw bytes/);
    expectFailure(await upload('x.bin', Buffer.from('x'), '00000000-0000-4000-8000-000000000000'), 404);
    const unauthenticated = await request(server.url).put(uploadUrl('x.bin')).send(Buffer.from('x'));
    assert.equal(unauthenticated.status, 401);

    assert.deepEqual(namesIn(space.path), before, 'nothing written in the space');
    assert.deepEqual(readdirSync(outside), [], 'nothing written outside');
    assert.ok(!existsSync(join(other.path, 'up.bin')));
  });

  it('download answers 400, 403 and 404 like the content operation', async () => {
    expectFailure(await apiClient(server).get('/api/artifacts/download'), 400, 'Missing file path');
    expectFailure(await download(join(space.path, 'missing.bin')), 404, 'File not found');
    expectFailure(await download(join(space.path, 'docs')), 400, 'Path is a directory');
    expectFailure(await download('/etc/passwd'), 403, /Access denied/);
    expectFailure(await download(join(space.path, 'escape', 'x')), 403, /Access denied/);
  });
});
