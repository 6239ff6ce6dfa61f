import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient } from '#testing/api-client.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { sleep, waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

describe('WebSocket gateway', () => {
  let server: TestServer;
  const publish = (channel: string, data: object) =>
    apiClient(server).post('/api/test/events', { channel, data }).expect(200);

  before(async () => {
    server = await startServer({ env: { SVC_WS_PING_INTERVAL_MS: '400' } });
  });
  after(() => server.stop());

  it('signs in with an auth frame', async () => {
    const ws = await WsTestClient.connect(server.wsUrl);
    ws.send({ type: 'auth', payload: { token: server.password } });
    assert.deepEqual(await ws.next(), { type: 'auth:success' });
    ws.close();
  });

  it('answers auth:failed and closes about 100 ms later', async () => {
    const ws = await WsTestClient.connect(server.wsUrl);
    ws.send({ type: 'auth', payload: { token: 'wrong' } });
    const failed = await ws.next();
    const at = Date.now();
    assert.deepEqual(failed, { type: 'auth:failed', error: 'Invalid token' });
    const closed = await ws.closed;
    const delay = closed.at - at;
    assert.ok(delay >= 50 && delay < 1000, `closed after ${delay} ms`);
  });

  it('refuses subscribe and terminal frames before auth with Not authenticated', async () => {
    const ws = await WsTestClient.connect(server.wsUrl);
    for (const type of [
      'subscribe',
      'unsubscribe',
      'terminal-input',
      'terminal-resize',
      'terminal-attach',
      'terminal-detach',
      'terminal-ack',
    ]) {
      ws.send({
        type,
        payload: { conversationId: 'c1', sessionId: 's1', data: 'x', cols: 80, rows: 24, charCount: 1 },
      });
      assert.deepEqual(await ws.next(), { type: 'error', error: 'Not authenticated' }, type);
    }
    ws.close();
  });

  it('answers terminal frames after auth: not available on this server', async () => {
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    ws.send({ type: 'terminal-input', payload: { sessionId: 's', data: 'ls\r' } });
    assert.deepEqual(await ws.next(), { type: 'error', error: 'Terminal is not available on this server' });
    ws.close();
  });

  it('answers ping with pong and ignores invalid JSON and unknown types', async () => {
    const ws = await WsTestClient.connect(server.wsUrl);
    ws.send('{not json');
    ws.send('42');
    ws.send({ type: 'no-such-type', payload: {} });
    ws.send({ payload: {} });
    ws.send({ type: 'ping' });
    assert.deepEqual(await ws.next(), { type: 'pong' });
    assert.equal(ws.frames.length, 0);
    assert.equal(ws.socket.readyState, ws.socket.OPEN);
    ws.close();
  });

  it('handles frames in order: subscribe right after auth works', async () => {
    const ws = await WsTestClient.connect(server.wsUrl);
    ws.send({ type: 'auth', payload: { token: server.password } });
    ws.send({ type: 'subscribe', payload: { conversationId: 'ordered' } });
    assert.deepEqual(await ws.next(), { type: 'auth:success' });
    await ws.roundTrip();
    assert.equal(ws.frames.length, 0, 'no Not authenticated error');
    await publish('agent:message', { spaceId: 's', conversationId: 'ordered', delta: 'hi' });
    assert.equal((await ws.event('agent:message')).data?.delta, 'hi');
    ws.close();
  });

  it('delivers conversation detail to subscribers, status and global events to everyone', async () => {
    const subscriber = await WsTestClient.signedIn(server.wsUrl, server.password);
    const other = await WsTestClient.signedIn(server.wsUrl, server.password);
    const anonymous = await WsTestClient.connect(server.wsUrl);
    subscriber.send({ type: 'subscribe', payload: { conversationId: 'conv-1' } });
    await subscriber.roundTrip();

    const detail = { spaceId: 'sp', conversationId: 'conv-1', delta: 'x', isStreaming: true, isComplete: false };
    await publish('agent:message', detail);
    const got = await subscriber.event('agent:message');
    assert.deepEqual(got, { type: 'event', channel: 'agent:message', data: detail });

    for (const channel of [
      'agent:turn-start',
      'agent:complete',
      'agent:error',
      'agent:ask-question',
      'agent:goal-updated',
    ]) {
      await publish(channel, { spaceId: 'sp', conversationId: 'conv-1' });
      await subscriber.event(channel);
      await other.event(channel);
    }
    await publish('app:list_changed', { appId: 'a1', change: 'installed' });
    await subscriber.event('app:list_changed');
    await other.event('app:list_changed');

    await other.roundTrip();
    assert.equal(other.frames.filter((f) => f.channel === 'agent:message').length, 0, 'non-subscriber got detail');
    await anonymous.roundTrip();
    assert.equal(anonymous.frames.length, 0, 'unauthenticated socket got events');

    subscriber.send({ type: 'unsubscribe', payload: { conversationId: 'conv-1' } });
    await subscriber.roundTrip();
    await publish('agent:thought', { spaceId: 'sp', conversationId: 'conv-1', thought: { id: 't' } });
    await publish('agent:complete', { spaceId: 'sp', conversationId: 'conv-1', duration: 1 });
    await subscriber.event('agent:complete');
    assert.equal(subscriber.frames.filter((f) => f.channel === 'agent:thought').length, 0);
    for (const ws of [subscriber, other, anonymous]) ws.close();
  });

  it('delivers each event once per connection, in publish order', async () => {
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    ws.send({ type: 'subscribe', payload: { conversationId: 'order' } });
    ws.send({ type: 'subscribe', payload: { conversationId: 'order' } });
    await ws.roundTrip();
    for (let i = 0; i < 30; i++)
      await publish('agent:message', { spaceId: 's', conversationId: 'order', delta: String(i) });
    await waitFor(() => ws.frames.filter((f) => f.channel === 'agent:message').length >= 30);
    await sleep(200);
    const deltas = ws.frames.filter((f) => f.channel === 'agent:message').map((f) => f.data?.delta);
    assert.deepEqual(
      deltas,
      Array.from({ length: 30 }, (_, i) => String(i)),
    );
    ws.close();
  });

  it('pings every interval and terminates clients that do not answer', async () => {
    const healthy = await WsTestClient.signedIn(server.wsUrl, server.password);
    let pings = 0;
    healthy.socket.on('ping', () => pings++);
    const silent = await WsTestClient.connect(server.wsUrl, { autoPong: false });
    const closed = await Promise.race([silent.closed, sleep(5000).then(() => null)]);
    assert.ok(closed, 'silent client was not terminated');
    assert.equal(closed.code, 1006);
    assert.ok(pings >= 1, 'healthy client received no protocol ping');
    assert.equal(healthy.socket.readyState, healthy.socket.OPEN);
    healthy.close();
  });

  it('subscriptions belong to the connection', async () => {
    const first = await WsTestClient.signedIn(server.wsUrl, server.password);
    first.send({ type: 'subscribe', payload: { conversationId: 'conn-owned' } });
    await first.roundTrip();
    first.close();
    await first.closed;
    const second = await WsTestClient.signedIn(server.wsUrl, server.password);
    await publish('agent:message', { spaceId: 's', conversationId: 'conn-owned', delta: 'z' });
    await second.roundTrip();
    await sleep(100);
    assert.equal(second.frames.length, 0);
    second.close();
  });
});
