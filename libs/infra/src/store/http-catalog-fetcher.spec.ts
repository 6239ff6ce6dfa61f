import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HttpCatalogFetcher } from './http-catalog-fetcher.js';

describe('HttpCatalogFetcher', () => {
  let server: Server;
  let base: string;
  let port: number;

  before(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/index.json') {
        if (req.headers['if-none-match'] === '"v1"') return res.writeHead(304).end();
        return res.writeHead(200, { etag: '"v1"', 'last-modified': 'Tue, 01 Jan 2030 00:00:00 GMT' }).end('{"a":1}');
      }
      if (path === '/big') return res.writeHead(200, { 'content-length': 5000 }).end('x'.repeat(5000));
      if (path === '/endless') {
        res.writeHead(200);
        const timer = setInterval(() => res.write('x'.repeat(1024)), 1);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (path === '/hang') return; // never answers
      if (path === '/trickle') {
        // Never idle long enough for an idle timeout: one byte every 50 ms, forever.
        res.writeHead(200);
        const timer = setInterval(() => res.write('x'), 50);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (path === '/to-internal') return res.writeHead(302, { location: `http://127.0.0.2:${port}/index.json` }).end();
      if (path === '/to-same') return res.writeHead(301, { location: '/index.json' }).end();
      if (path === '/loop') return res.writeHead(302, { location: '/loop' }).end();
      if (path === '/boom') return res.writeHead(500).end();
      if (path === '/apps/x/installs' && req.method === 'POST') {
        let got = '';
        req.on('data', (c: Buffer) => (got += c.toString()));
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(got));
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const operator = new HttpCatalogFetcher({ timeoutMs: 2000 });
  /** A user-source policy that lets this test's own server (127.0.0.1) through, and nothing else internal. */
  const user = new HttpCatalogFetcher({ timeoutMs: 2000, isBlocked: (a) => a !== '127.0.0.1' });
  const get = (f: HttpCatalogFetcher, path: string, extra: object = {}) =>
    f.fetch({ url: base + path, maxBytes: 2048, publicOnly: f === user, ...extra });

  it('reads a file with its validators and answers 304 as not-modified, 404 as missing', async () => {
    const first = await get(operator, '/index.json');
    assert.equal(first.status, 'ok');
    if (first.status !== 'ok') return;
    assert.equal(Buffer.from(first.body).toString(), '{"a":1}');
    assert.deepEqual([first.etag, first.lastModified], ['"v1"', 'Tue, 01 Jan 2030 00:00:00 GMT']);
    assert.deepEqual(await get(operator, '/index.json', { etag: '"v1"' }), { status: 'not-modified' });
    assert.deepEqual(await get(operator, '/nothing'), { status: 'missing' });
    await assert.rejects(get(operator, '/boom'), /HTTP 500/);
  });

  it('posts a small JSON body (store-server calls)', async () => {
    const res = await get(operator, '/apps/x/installs', { postJson: { version: '1.2.0' } });
    assert.equal(res.status, 'ok');
    if (res.status === 'ok') assert.deepEqual(JSON.parse(Buffer.from(res.body).toString()), { version: '1.2.0' });
  });

  it('cuts off bodies past the size limit, declared or not', async () => {
    await assert.rejects(get(operator, '/big'), /larger than 2048 bytes/);
    await assert.rejects(get(operator, '/endless'), /larger than 2048 bytes/);
  });

  it('gives up on a host that does not answer in time', async () => {
    const quick = new HttpCatalogFetcher({ timeoutMs: 300 });
    await assert.rejects(quick.fetch({ url: `${base}/hang`, maxBytes: 100, publicOnly: false }), /timed out/);
  });

  it('gives up on a body that trickles in past the deadline (the deadline is total, not idle)', async () => {
    const quick = new HttpCatalogFetcher({ timeoutMs: 400 });
    const started = Date.now();
    await assert.rejects(quick.fetch({ url: `${base}/trickle`, maxBytes: 100_000, publicOnly: false }), /timed out/);
    assert.ok(Date.now() - started < 2000, `gave up after ${Date.now() - started} ms`);
  });

  it('follows redirects, checking every hop; refuses a redirect to an internal address', async () => {
    assert.equal((await get(user, '/to-same')).status, 'ok');
    await assert.rejects(get(user, '/to-internal'), /refused, 127\.0\.0\.2/);
    // Operator-set sources may be internal: the fetch goes on to 127.0.0.2 (where nothing listens).
    await assert.rejects(get(operator, '/to-internal'), (err: Error) => /ECONNREFUSED/.test(err.message));
    await assert.rejects(get(operator, '/loop'), /redirects/);
  });

  it('checks the address a name resolves to, on every fetch (the real rule)', async () => {
    const strict = new HttpCatalogFetcher({ timeoutMs: 2000 });
    await assert.rejects(
      strict.fetch({ url: `http://localhost:${port}/index.json`, maxBytes: 2048, publicOnly: true }),
      /refused, localhost resolves to/,
    );
    await assert.rejects(strict.fetch({ url: `${base}/index.json`, maxBytes: 2048, publicOnly: true }), /refused/);
    assert.ok(await strict.blockedAddressOf('localhost'));
    assert.equal(await strict.blockedAddressOf('8.8.8.8'), null);
    await assert.rejects(strict.fetch({ url: 'file:///etc/passwd', maxBytes: 10, publicOnly: true }), /only http/);
  });
});
