import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { REPO_ROOT, startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

const packageVersion = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;

describe('conventions, errors, limits, versioning', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.stop());

  it('GET /api/system/version returns the package version in the envelope', async () => {
    const res = await apiClient(server).get('/api/system/version');
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type'], /application\/json/);
    assert.deepEqual(res.body, { success: true, data: packageVersion });
  });

  it('GET /api/remote/status keeps the protocol version at 1.0.0 and counts signed-in sockets', async () => {
    const before = (await request(server.url).get('/api/remote/status')).body.data.clients as number;
    const a = await WsTestClient.signedIn(server.wsUrl, server.password);
    const b = await WsTestClient.signedIn(server.wsUrl, server.password);
    const during = (await request(server.url).get('/api/remote/status')).body;
    assert.deepEqual(during, {
      success: true,
      data: { active: true, clients: before + 2, version: '1.0.0', serverVersion: packageVersion },
    });
    a.close();
    b.close();
    await Promise.all([a.closed, b.closed]);
    await waitFor(async () => (await request(server.url).get('/api/remote/status')).body.data.clients === before);
  });

  it('answers 413 with the envelope for JSON bodies over 100 KB and changes nothing', async () => {
    const big = { token: 'x'.repeat(101 * 1024) };
    const res = await request(server.url).post('/api/remote/login').send(big);
    assert.equal(res.status, 413);
    assert.equal(res.body.success, false);
    assert.equal(typeof res.body.error, 'string');
    const authed = await apiClient(server).post('/api/test/events', {
      channel: 'x',
      data: { pad: 'y'.repeat(102_400) },
    });
    assert.equal(authed.status, 413);
    // Just under the limit is parsed normally.
    const ok = await request(server.url)
      .post('/api/remote/login')
      .send({ token: 'y'.repeat(99 * 1024) });
    assert.equal(ok.status, 401);
  });

  it('answers 400 with the envelope for malformed JSON', async () => {
    const res = await request(server.url)
      .post('/api/remote/login')
      .set('Content-Type', 'application/json')
      .send('{"token":');
    assert.equal(res.status, 400);
    assert.equal(res.body.success, false);
  });

  it('validation errors name the field', async () => {
    const res = await apiClient(server).post('/api/test/events', { channel: 5, data: {} });
    assert.equal(res.status, 400);
    assert.equal(res.body.success, false);
    assert.match(res.body.error, /channel/);
  });

  it('unknown GET paths answer the web app page with 200', async () => {
    for (const path of ['/', '/spaces/abc', '/some/deep/page?x=1']) {
      const res = await request(server.url).get(path);
      assert.equal(res.status, 200, path);
      assert.match(res.headers['content-type'], /text\/html/);
      assert.match(res.text, /<div id="app">/);
      assert.match(res.text, /<script type="module" crossorigin src="\.\/assets\/[^"]+\.js">/);
    }
    // An authenticated but unknown /api GET is still not JSON.
    const api = await apiClient(server).get('/api/nope/nothing');
    assert.equal(api.status, 200);
    assert.match(api.headers['content-type'], /text\/html/);
  });

  it('unknown paths with other methods answer a plain 404', async () => {
    for (const method of ['post', 'put', 'delete', 'patch'] as const) {
      const res = await request(server.url)[method]('/no/such/thing');
      assert.equal(res.status, 404, method);
      assert.match(res.headers['content-type'], /text\/plain/);
      assert.equal(res.text, 'Not Found');
    }
    const api = await apiClient(server).post('/api/nope', {});
    assert.equal(api.status, 404);
    assert.match(api.headers['content-type'], /text\/plain/);
  });

  it('allows cross-origin GET, POST, PUT, DELETE from any origin, never PATCH', async () => {
    const pre = await request(server.url)
      .options('/api/system/version')
      .set('Origin', 'https://elsewhere.example')
      .set('Access-Control-Request-Method', 'PUT')
      .set('Access-Control-Request-Headers', 'authorization,content-type');
    assert.equal(pre.status, 200);
    assert.equal(pre.headers['access-control-allow-origin'], '*');
    const methods = String(pre.headers['access-control-allow-methods'])
      .split(',')
      .map((m) => m.trim());
    for (const m of ['GET', 'POST', 'PUT', 'DELETE']) assert.ok(methods.includes(m), m);
    assert.ok(!methods.includes('PATCH'));
    assert.match(String(pre.headers['access-control-allow-headers']), /Authorization/i);
    const get = await request(server.url).get('/api/remote/status').set('Origin', 'https://elsewhere.example');
    assert.equal(get.headers['access-control-allow-origin'], '*');
  });

  it('gives every response a request id, reusing a sane incoming one', async () => {
    const res = await request(server.url).get('/healthz');
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const mine = await request(server.url).get('/healthz').set('X-Request-Id', 'trace-123');
    assert.equal(mine.headers['x-request-id'], 'trace-123');
  });

  it('serves /healthz and /readyz outside /api without a token', async () => {
    const health = await request(server.url).get('/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'ok' });
    const ready = await request(server.url).get('/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.ready, true);
    assert.equal(ready.body.checks.database.ok, true);
    assert.equal(ready.body.checks.queue.ok, true);
    if (process.env.SVC_TEST_MODE === 'services') assert.equal(ready.body.checks.redis.ok, true);
    else assert.equal(ready.body.checks.redis, undefined);
  });

  it('records a queue heartbeat, proving the queue is consumed', async () => {
    await waitFor(async () => (await request(server.url).get('/readyz')).body.lastHeartbeatAt !== null, 15_000);
  });

  it('never writes the password or a query token into its logs', async () => {
    await request(server.url).get(`/api/system/version?token=${encodeURIComponent(server.password)}`);
    await request(server.url).post('/api/remote/login').send({ token: server.password });
    await apiClient(server).get('/api/system/version');
    assert.ok(!server.output().includes(server.password), 'password found in server output');
  });
});

describe('SVC_BASE_PATH', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { SVC_BASE_PATH: '/svc' } });
  });
  after(() => server.stop());

  it('serves the API, the page and the socket under the prefix', async () => {
    const res = await apiClient(server).get('/svc/api/system/version');
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.equal((await request(server.url).get('/svc/api/system/version')).status, 401);
    const page = await request(server.url).get('/svc/');
    assert.equal(page.status, 200);
    assert.match(page.text, /<base href="\.\/">/, 'the app root is the prefix itself');
    assert.match((await request(server.url).get('/svc/spaces/x')).text, /<base href="\.\.\/">/);
    const ws = await WsTestClient.signedIn(`ws://127.0.0.1:${server.port}/svc/ws`, server.password);
    await ws.roundTrip();
    ws.close();
    assert.equal((await request(server.url).get('/healthz')).status, 200);
    assert.equal((await request(server.url).get('/svc/healthz')).status, 200);
  });

  it("names the prefix as the OpenAPI document's server, so a generated client calls it there", async () => {
    const doc = await apiClient(server).get('/svc/api/openapi.json');
    assert.equal(doc.status, 200);
    assert.deepEqual(
      (doc.body.servers as Array<{ url: string }>).map((s) => s.url),
      ['/svc'],
    );
    assert.ok(doc.body.paths['/api/spaces'], 'paths stay relative to the prefix');
  });
});
