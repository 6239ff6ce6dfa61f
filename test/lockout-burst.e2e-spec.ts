import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import request from 'supertest';
import { startServer, type TestServer } from '#testing/test-server.js';

/**
 * The lockout under concurrency (docs/api.md, "Authentication"): a burst of sign-ins from one address lets at
 * most five guesses be compared, whatever the timing, in both modes (in process, and on
 * Redis, where replicas share the counters). Figures are printed for the closing note.
 */
const login = (s: TestServer, token: string, forwardedFor: string) =>
  request(s.url).post('/api/remote/login').set('X-Forwarded-For', forwardedFor).send({ token });

async function burst(server: TestServer, size: number, rightAt: number | null, ip: string) {
  const statuses = await Promise.all(
    Array.from({ length: size }, (_, i) => login(server, i === rightAt ? server.password : `wrong-${i}`, ip)),
  ).then((responses) => responses.map((r) => r.status));
  const count = (status: number) => statuses.filter((s) => s === status).length;
  return { statuses, compared: count(401) + count(200), ok: count(200), locked: count(429) };
}

describe('lockout: concurrent bursts', () => {
  const servers: TestServer[] = [];
  const fresh = async () => {
    const server = await startServer({ env: { SVC_TRUST_PROXY: '1' } });
    servers.push(server);
    return server;
  };
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('30 concurrent logins, the right password at #25: the lock holds (three runs)', async (t) => {
    for (let run = 1; run <= 3; run++) {
      const server = await fresh();
      const result = await burst(server, 30, 24, '192.0.2.30');
      t.diagnostic(`burst-30 run ${run}: compared ${result.compared}, 200 ${result.ok}, 429 ${result.locked}`);
      assert.ok(result.compared <= 5, `more than five guesses compared: ${result.statuses.join(',')}`);
      assert.equal(result.statuses[24], 429, `#25 got ${result.statuses[24]}: ${result.statuses.join(',')}`);
      assert.equal(result.locked, 30 - result.compared);
      // And the lock holds after the burst, for the right password too.
      assert.equal((await login(server, server.password, '192.0.2.30')).status, 429);
    }
  });

  it('a burst of 60 wrong guesses lets at most five through', async (t) => {
    const server = await fresh();
    const result = await burst(server, 60, null, '192.0.2.60');
    t.diagnostic(`burst-60: guesses compared ${result.compared}, 429 ${result.locked}`);
    assert.ok(result.compared <= 5, `${result.compared} guesses compared`);
    assert.equal(result.ok, 0);
  });

  it('60 concurrent guesses from 60 addresses: at most ten compared before everyone is locked', async (t) => {
    const server = await fresh();
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => login(server, `wrong-${i}`, `198.51.100.${i}`)),
    ).then((responses) => responses.map((r) => r.status));
    const compared = statuses.filter((s) => s === 401).length;
    t.diagnostic(`burst-60 from 60 addresses: guesses compared ${compared}`);
    assert.ok(compared <= 10, `${compared} guesses compared`);
  });

  it('SVC_TRUST_PROXY=1: rotating the forged part of X-Forwarded-For does not escape the per-IP lock', async () => {
    const server = await fresh();
    for (let i = 0; i < 5; i++) {
      assert.equal((await login(server, 'bad', `10.${i}.0.1, 203.0.113.9`)).status, 401);
    }
    assert.equal((await login(server, server.password, '10.99.0.1, 203.0.113.9')).status, 429);
    assert.equal((await login(server, server.password, '203.0.113.10')).status, 200, 'another client is not locked');
  });
});
