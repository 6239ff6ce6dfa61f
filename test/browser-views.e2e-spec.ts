import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { BrowserLoginSite } from '#contracts/browser.js';
import { apiClient, failure, okData } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

const SPEC = `spec_version: "1"
name: Signed In Helper
version: "1.0.0"
author: t
description: d
type: automation
system_prompt: Help.
browser_login:
  - url: https://shop.example.com/login
    label: Shop
  - url: https://mail.example.org/
    label: Mail
`;

describe(`AI browser views: routes and live-view socket (${testMode()})`, () => {
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;
  let spaceId: string;
  const viewUrl = (viewId: string) => `${server.wsUrl}/browser/${encodeURIComponent(viewId)}`;

  before(async () => {
    server = await startServer();
    api = apiClient(server);
    spaceId = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Browser views' })).id;
  });
  after(async () => {
    await server?.stop();
  });

  it('needs the access token like every route', async () => {
    const res = await request(server.url).get('/api/browser/pages');
    assert.equal(res.status, 401);
    assert.equal(res.body.success, false);
    assert.equal((await request(server.url).post('/api/browser/login-sessions').send({})).status, 401);
  });

  it('lists live pages (none yet), filtered by space and conversation', async () => {
    assert.deepEqual(okData(await api.get('/api/browser/pages')), []);
    assert.deepEqual(okData(await api.get(`/api/browser/pages?spaceId=${spaceId}&conversationId=c-1`)), []);
  });

  it('stop of a page no conversation owns is refused as in the original', async () => {
    assert.deepEqual(okData(await api.post('/api/browser/pages/nope/stop', { conversationId: 'c-1' })), {
      stopped: false,
      reason: 'not-owned',
    });
    failure(await api.post('/api/browser/pages/nope/stop', { conversationId: 5 }), 400, /^conversationId/);
  });

  it('checks a sign-in session’s body: fields named, unknown space 404, unknown session 404', async () => {
    failure(await api.post('/api/browser/login-sessions', { url: 'https://x.example/' }), 400, /^spaceId is required/);
    failure(
      await api.post('/api/browser/login-sessions', { spaceId, url: 'file:///etc/passwd' }),
      400,
      /^url must be an http\(s\) URL/,
    );
    failure(await api.post('/api/browser/login-sessions', { spaceId, url: 'not a url' }), 400, /^url/);
    failure(
      await api.post('/api/browser/login-sessions', { spaceId: 'no-such-space', url: 'https://x.example/' }),
      404,
      /not found/i,
    );
    failure(await api.post('/api/browser/login-sessions/no-such-view/finish'), 404, /not found|No such/i);
  });

  it('lists a digital human’s browser_login sites with a signed-in hint', async () => {
    const appId = okData<{ appId: string }>(
      await api.post('/api/apps/import-spec', { spaceId, yamlContent: SPEC }),
    ).appId;
    assert.deepEqual(okData<BrowserLoginSite[]>(await api.get(`/api/apps/${appId}/browser-login`)), [
      { url: 'https://shop.example.com/login', label: 'Shop', signedIn: false },
      { url: 'https://mail.example.org/', label: 'Mail', signedIn: false },
    ]);
    failure(await api.get('/api/apps/no-such-app/browser-login'), 404, /not found/i);
  });

  it('live view: sign-in first, invalid frames answered and ignored, an unknown page closes with a reason', async () => {
    const client = await WsTestClient.connect(viewUrl('no-such-view'));
    client.send('not json');
    assert.match((await client.next((f) => f.type === 'error')).error!, /JSON object with a type/);
    client.send({ type: 'mouse', event: 'mousePressed', x: 1, y: 1 });
    assert.equal((await client.next((f) => f.type === 'error')).error, 'Not authenticated');
    client.send({ type: 'auth', token: server.password });
    await client.next((f) => f.type === 'auth:success');
    const closed = await new Promise<{ code: number; reason: string }>((resolve) =>
      client.socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    assert.deepEqual(closed, { code: 4004, reason: 'Browser page not found' });
  });

  it('live view: a wrong token is refused and closed, as on /ws', async () => {
    const client = await WsTestClient.connect(viewUrl('any'));
    client.send({ type: 'auth', payload: { token: 'wrong-password' } });
    assert.equal((await client.next((f) => f.type === 'auth:failed')).error, 'Invalid token');
    assert.equal((await client.closed).code, 4001);
  });

  it('/ws keeps working beside the live-view path', async () => {
    const client = await WsTestClient.signedIn(server.wsUrl, server.password);
    client.send({ type: 'ping' });
    await client.next((f) => f.type === 'pong');
    client.socket.close();
  });
});

describe(`AI browser live view under SVC_BASE_PATH (${testMode()})`, () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ env: { SVC_BASE_PATH: '/svc' } });
  });
  after(async () => {
    await server?.stop();
  });

  it('routes <base>/ws/browser/<viewId> to the live view, and <base>/ws still works', async () => {
    const base = server.wsUrl.replace(/\/ws$/, '/svc/ws');
    const client = await WsTestClient.connect(`${base}/browser/no-such-view`);
    client.send({ type: 'auth', token: server.password });
    await client.next((f) => f.type === 'auth:success');
    assert.equal((await client.closed).code, 4004);
    const events = await WsTestClient.signedIn(base, server.password);
    await events.roundTrip();
    events.close();
  });
});
