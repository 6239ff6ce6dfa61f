import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { sleep, waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

describe('two replicas on one Postgres and Redis', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let services: SharedServices;
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    services = await createSharedServices();
    a = await startServer({ services, env: { SVC_TRUST_PROXY: '1' } });
    b = await startServer({ services, env: { SVC_TRUST_PROXY: '1' } });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await services?.dispose();
  });

  it('an event published on one replica reaches sockets on both, once each', async () => {
    const onA = await WsTestClient.signedIn(a.wsUrl, a.password);
    const onB = await WsTestClient.signedIn(b.wsUrl, b.password);
    onB.send({ type: 'subscribe', payload: { conversationId: 'x-conv' } });
    await onB.roundTrip();
    await apiClient(a)
      .post('/api/test/events', {
        channel: 'agent:message',
        data: { spaceId: 's', conversationId: 'x-conv', delta: 'from-a' },
      })
      .expect(200);
    await apiClient(a)
      .post('/api/test/events', {
        channel: 'agent:complete',
        data: { spaceId: 's', conversationId: 'x-conv', duration: 5 },
      })
      .expect(200);
    assert.equal((await onB.event('agent:message')).data?.delta, 'from-a');
    await onB.event('agent:complete');
    await onA.event('agent:complete');
    await sleep(300);
    await onA.roundTrip();
    await onB.roundTrip();
    assert.equal(onA.frames.filter((f) => f.type === 'event').length, 0, 'unsubscribed detail or duplicates on A');
    assert.equal(onB.frames.filter((f) => f.type === 'event').length, 0, 'duplicates on B');
    onA.close();
    onB.close();
  });

  it('a lockout caused on one replica is enforced by the other', async () => {
    const ip = '172.31.9.9';
    for (let i = 0; i < 5; i++) {
      const res = await request(a.url).post('/api/remote/login').set('X-Forwarded-For', ip).send({ token: 'bad' });
      assert.equal(res.status, 401);
    }
    const onB = await request(b.url).post('/api/remote/login').set('X-Forwarded-For', ip).send({ token: b.password });
    assert.equal(onB.status, 429);
    assert.equal(onB.body.code, 'LOCKED');
    assert.ok(Number(onB.headers['retry-after']) > 0);
  });

  it('remote status counts the sockets of every replica', async () => {
    const base = (await request(a.url).get('/api/remote/status')).body.data.clients as number;
    const sockets = [
      await WsTestClient.signedIn(a.wsUrl, a.password),
      await WsTestClient.signedIn(b.wsUrl, b.password),
      await WsTestClient.signedIn(b.wsUrl, b.password),
    ];
    await waitFor(
      async () => (await request(a.url).get('/api/remote/status')).body.data.clients === base + 3,
      5000,
      'count on A',
    );
    assert.equal((await request(b.url).get('/api/remote/status')).body.data.clients, base + 3);
    for (const s of sockets) s.close();
    await waitFor(
      async () => (await request(b.url).get('/api/remote/status')).body.data.clients === base,
      5000,
      'count after close',
    );
  });
});
