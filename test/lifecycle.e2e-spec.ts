import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';

describe('start-up configuration', () => {
  it('refuses to start with one message listing every bad variable', async () => {
    const server = await startServer({
      waitForListening: false,
      env: { PORT: 'eighty', SVC_REMOTE_PASSWORD: 'short', LOG_LEVEL: 'loud', SVC_TRUST_PROXY: 'maybe' },
    });
    const { code } = await server.exited;
    const out = server.output();
    await server.stop();
    assert.equal(code, 1);
    for (const name of ['PORT', 'SVC_REMOTE_PASSWORD', 'LOG_LEVEL', 'SVC_TRUST_PROXY'])
      assert.match(out, new RegExp(`${name}:`), name);
    assert.equal(out.match(/cannot start/g)?.length, 1, 'one message');
    assert.ok(!out.includes('short'), 'the rejected password value is not echoed');
  });

  it('refuses SVC_ROLE=worker without REDIS_URL', async () => {
    const server = await startServer({
      waitForListening: false,
      env: { SVC_ROLE: 'worker', REDIS_URL: undefined, DATABASE_URL: undefined },
    });
    const { code } = await server.exited;
    const out = server.output();
    await server.stop();
    assert.equal(code, 1);
    assert.match(out, /SVC_ROLE: "worker" .* needs REDIS_URL/);
  });
});

describe('generated access password', { skip: testMode() === 'services' ? 'embedded only' : false }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-pw-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is generated, kept in the data folder, printed once, and survives restarts', async () => {
    const first = await startServer({ dataDir, env: { SVC_REMOTE_PASSWORD: undefined } });
    const file = join(dataDir, 'access-password');
    const password = readFileSync(file, 'utf8').trim();
    assert.match(password, /^[A-HJ-NP-Za-km-np-z2-9]{12}$/);
    assert.ok(/[A-Z]/.test(password) && /[a-z]/.test(password) && /\d/.test(password));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(first.output().split(password).length - 1, 1, 'printed exactly once');
    assert.match(first.output(), /SVC_REMOTE_PASSWORD/);
    const ok = await apiClient(first, password).get('/api/system/version');
    assert.equal(ok.status, 200);
    await first.stop();

    const second = await startServer({ dataDir, env: { SVC_REMOTE_PASSWORD: undefined } });
    assert.ok(!second.output().includes(password), 'not printed again');
    const again = await apiClient(second, password).get('/api/system/version');
    assert.equal(again.status, 200);
    await second.stop();
  });
});

describe(
  'one process per data folder without Redis',
  { skip: testMode() === 'services' ? 'embedded only' : false },
  () => {
    let first: TestServer;
    after(() => first?.stop());

    it('a second process on the same folder refuses to start, saying why', async () => {
      first = await startServer();
      const second = await startServer({ dataDir: first.dataDir, waitForListening: false });
      const { code } = await second.exited;
      assert.equal(code, 1);
      assert.match(second.output(), /in use by another svc-server process/);
      assert.equal((await request(first.url).get('/healthz')).status, 200);
    });
  },
);

describe('SIGTERM', () => {
  it('drains and exits 0 within 10 s, closing sockets and keeping data', async () => {
    const server = await startServer();
    // An idle keep-alive connection is kept well past Node's 5 s (a client reusing it as the
    // server dropped it would get a reset), and does not hold up the stop.
    const agent = new Agent({ keepAlive: true });
    const res = await request(server.url).get('/healthz').agent(agent);
    assert.equal(res.status, 200);
    assert.equal(res.headers['keep-alive'], 'timeout=65');
    const started = Date.now();
    server.process.kill('SIGTERM');
    const { code, signal } = await server.exited;
    const elapsed = Date.now() - started;
    assert.equal(signal, null);
    assert.equal(code, 0);
    assert.ok(elapsed < 10_000, `took ${elapsed} ms`);
    assert.match(server.output(), /"msg":"stopped"/);
    agent.destroy();
    await server.stop();
  });

  it(
    'restarts cleanly on the same data folder after a SIGKILL',
    { skip: testMode() === 'services' ? 'embedded only' : false },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-kill-'));
      try {
        const first = await startServer({ dataDir });
        first.process.kill('SIGKILL');
        await first.exited;
        const second = await startServer({ dataDir });
        assert.equal((await request(second.url).get('/readyz')).status, 200);
        await second.stop();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});

describe('roles', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  it('api serves HTTP without consuming jobs; worker consumes and serves only probes', async () => {
    const services = await createSharedServices();
    const api = await startServer({ services, env: { SVC_ROLE: 'api' } });
    const worker = await startServer({ services, env: { SVC_ROLE: 'worker' } });
    try {
      const version = await apiClient(api).get('/api/system/version');
      assert.equal(version.status, 200);
      const apiReady = await request(api.url).get('/readyz');
      assert.equal(apiReady.status, 200);
      assert.equal(apiReady.body.checks.redis.ok, true);

      assert.equal((await request(worker.url).get('/healthz')).status, 200);
      const workerReady = await request(worker.url).get('/readyz');
      assert.equal(workerReady.status, 200);
      assert.equal(workerReady.body.checks.queue.ok, true);
      // The worker serves no API: /api is an unknown path there.
      const none = await request(worker.url).post('/api/remote/login').send({ token: 'x' });
      assert.equal(none.status, 404);
      // The heartbeat job is consumed by the worker and visible from the api process.
      const deadline = Date.now() + 15_000;
      while ((await request(api.url).get('/readyz')).body.lastHeartbeatAt === null) {
        assert.ok(Date.now() < deadline, 'no heartbeat recorded');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await api.stop();
      await worker.stop();
      await services.dispose();
    }
  });
});
