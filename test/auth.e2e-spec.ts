import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

const login = (s: TestServer, token: unknown, ip?: string) => {
  const req = request(s.url).post('/api/remote/login').send({ token });
  return ip ? req.set('X-Forwarded-For', ip) : req;
};

describe('authentication', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { SVC_TRUST_PROXY: '1' } });
  });
  after(() => server.stop());

  it('accepts the bearer header with any scheme case', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'BeArEr']) {
      const res = await request(server.url)
        .get('/api/system/version')
        .set('Authorization', `${scheme} ${server.password}`);
      assert.equal(res.status, 200, scheme);
      assert.equal(res.body.success, true);
    }
  });

  it('accepts a URL-encoded ?token= query parameter', async () => {
    const res = await request(server.url).get(`/api/system/version?token=${encodeURIComponent(server.password)}`);
    assert.equal(res.status, 200);
  });

  it('answers 401 No authorization token without a token', async () => {
    for (const path of ['/api/system/version', '/api/spaces', '/api/anything/unknown']) {
      const res = await request(server.url).get(path);
      assert.equal(res.status, 401, path);
      assert.deepEqual(res.body, { success: false, error: 'No authorization token' });
    }
    const other = await request(server.url).get('/api/system/version').set('Authorization', 'Basic abc');
    assert.deepEqual(other.body, { success: false, error: 'No authorization token' });
  });

  it('answers 401 Invalid token for a wrong token, of any length', async () => {
    for (const token of ['x', `${server.password}x`, server.password.slice(0, -1), 'a'.repeat(500)]) {
      const res = await request(server.url).get('/api/system/version').set('Authorization', `Bearer ${token}`);
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { success: false, error: 'Invalid token' });
      const q = await request(server.url).get(`/api/system/version?token=${encodeURIComponent(token)}`);
      assert.deepEqual([q.status, q.body.error], [401, 'Invalid token']);
    }
  });

  it('serves exactly the three public endpoints without a token', async () => {
    const status = await request(server.url).get('/api/remote/status');
    assert.equal(status.status, 200);
    assert.equal(status.body.success, true);
    assert.equal(status.body.data.version, '1.0.0');
    assert.equal(status.body.data.active, true);
    assert.equal(typeof status.body.data.clients, 'number');
    const policy = await request(server.url).get('/api/security/policy');
    assert.equal(policy.status, 200);
    assert.deepEqual(Object.keys(policy.body.data).sort(), ['browserAllowlistEditable', 'tunnelSafe']);
    assert.equal(typeof policy.body.data.tunnelSafe, 'boolean');
    assert.equal((await login(server, server.password, '10.0.0.1')).status, 200);
  });

  it('login answers 200 {success:true} and 401 Invalid token', async () => {
    const ok = await login(server, server.password, '10.0.1.1');
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { success: true });
    const bad = await login(server, 'wrong-password', '10.0.1.2');
    assert.equal(bad.status, 401);
    assert.deepEqual(bad.body, { success: false, error: 'Invalid token' });
    const missing = await request(server.url).post('/api/remote/login').set('X-Forwarded-For', '10.0.1.3').send({});
    assert.equal(missing.status, 401);
  });

  it('locks one IP for 15 minutes after 5 failures within 5 minutes', async () => {
    const ip = '10.0.2.1';
    for (let i = 0; i < 5; i++) assert.equal((await login(server, 'nope', ip)).status, 401);
    const locked = await login(server, server.password, ip);
    assert.equal(locked.status, 429);
    assert.deepEqual(locked.body, {
      success: false,
      error: 'Too many failed attempts. Try again later.',
      code: 'LOCKED',
    });
    const retryAfter = Number(locked.headers['retry-after']);
    assert.ok(retryAfter > 890 && retryAfter <= 900, `Retry-After ${retryAfter}`);
    // Other addresses are not affected.
    assert.equal((await login(server, server.password, '10.0.2.2')).status, 200);
    // Header tokens are not throttled by the lock either.
    const header = await request(server.url)
      .get('/api/system/version')
      .set('X-Forwarded-For', ip)
      .set('Authorization', `Bearer ${server.password}`);
    assert.equal(header.status, 200);
  });

  it('does not throttle or count wrong header tokens', async () => {
    const ip = '10.0.3.1';
    for (let i = 0; i < 12; i++) {
      const res = await request(server.url)
        .get('/api/system/version')
        .set('X-Forwarded-For', ip)
        .set('Authorization', 'Bearer wrong-token');
      assert.equal(res.status, 401);
    }
    assert.equal((await login(server, server.password, ip)).status, 200);
  });
});

describe('WebSocket sign-in lockout', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { SVC_TRUST_PROXY: '1' } });
  });
  after(() => server.stop());

  it('counts WebSocket sign-in failures towards the same lockout', async () => {
    const ip = '10.0.4.1';
    for (let i = 0; i < 5; i++) {
      const ws = await WsTestClient.connect(server.wsUrl, { headers: { 'X-Forwarded-For': ip } });
      ws.send({ type: 'auth', payload: { token: 'bad' } });
      const reply = await ws.next((f) => f.type.startsWith('auth:'));
      assert.deepEqual(reply, { type: 'auth:failed', error: 'Invalid token' });
      await ws.closed;
    }
    assert.equal((await login(server, server.password, ip)).status, 429);
    const ws = await WsTestClient.connect(server.wsUrl, { headers: { 'X-Forwarded-For': ip } });
    ws.send({ type: 'auth', payload: { token: server.password } });
    const reply = await ws.next((f) => f.type.startsWith('auth:'));
    assert.deepEqual(
      { ...reply, retryAfterSeconds: undefined },
      { type: 'auth:failed', error: 'Too many failed attempts. Try again later.', retryAfterSeconds: undefined },
    );
    const retryAfter = (reply as { retryAfterSeconds?: number }).retryAfterSeconds ?? 0;
    assert.ok(retryAfter > 14 * 60 && retryAfter <= 15 * 60, `retry in ${retryAfter} s`);
    await ws.closed;
  });
});

describe('global lockout', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { SVC_TRUST_PROXY: '1' } });
  });
  after(() => server.stop());

  it('locks sign-in for everyone for 30 minutes after 10 failures in an hour', async () => {
    for (let i = 0; i < 10; i++) {
      // Two failures per address: no single address reaches its own limit of five.
      assert.equal((await login(server, 'bad', `192.0.2.${Math.floor(i / 2)}`)).status, 401);
    }
    const res = await login(server, server.password, '198.51.100.7');
    assert.equal(res.status, 429);
    assert.equal(res.body.code, 'LOCKED');
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(retryAfter > 1790 && retryAfter <= 1800, `Retry-After ${retryAfter}`);
    // Header tokens still work during a global lock.
    const header = await request(server.url)
      .get('/api/system/version')
      .set('Authorization', `Bearer ${server.password}`);
    assert.equal(header.status, 200);
  });
});

describe('client address without SVC_TRUST_PROXY', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.stop());

  it('ignores X-Forwarded-For, so forged addresses do not escape the per-IP lock', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await login(server, 'bad', `203.0.113.${i}`)).status, 401);
    assert.equal((await login(server, server.password, '203.0.113.200')).status, 429);
  });
});
