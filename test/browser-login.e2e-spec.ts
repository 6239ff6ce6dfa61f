import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserLoginSite } from '#contracts/browser.js';
import { apiClient, okData } from '#testing/api-client.js';
import { LoginSite, openLiveView, signInSpec } from '#testing/login-site.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import type { Frame } from '#testing/ws-client.js';

describe(`AI browser sign-in through the live view (${testMode()})`, () => {
  let site: LoginSite;
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;

  before(async () => {
    site = await LoginSite.start();
    // The operator allow-list lets the browser reach the test's loopback site.
    server = await startServer({ env: { SVC_BROWSER_ALLOW: '127.0.0.1' } });
    api = apiClient(server);
  });
  after(async () => {
    await server?.stop();
    await site?.close();
  });

  it('signs in with clicks and typing over the live view; the space profile keeps the cookie, another space’s does not', async () => {
    const spaceA = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Signed in' })).id;
    const spaceB = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Not signed in' })).id;
    const appA = okData<{ appId: string }>(
      await api.post('/api/apps/import-spec', { spaceId: spaceA, yamlContent: signInSpec(site.url, 'Site Helper') }),
    ).appId;
    const appB = okData<{ appId: string }>(
      await api.post('/api/apps/import-spec', { spaceId: spaceB, yamlContent: signInSpec(site.url, 'Site Helper') }),
    ).appId;

    const { viewId } = okData<{ viewId: string }>(
      await api.post('/api/browser/login-sessions', { spaceId: spaceA, url: site.url }),
    );
    const viewer = await openLiveView(server, viewId);
    const second = await openLiveView(server, viewId);
    const isFrame = (f: Frame) => f.type === 'frame';
    const frame = await viewer.next(isFrame, 30_000);
    assert.equal(typeof frame.data, 'string');
    assert.ok((frame.width as number) > 0 && (frame.height as number) > 0);
    assert.equal(typeof frame.seq, 'number');
    // Both viewers are served by the one screencast.
    await second.next(isFrame, 30_000);
    viewer.send({ type: 'ack', seq: frame.seq });
    second.socket.close();

    // Invalid input is answered and changes nothing.
    viewer.send({ type: 'mouse', event: 'tap', x: 1, y: 1 });
    assert.match((await viewer.next((f) => f.type === 'error')).error!, /^mouse: event/);

    const x = Math.round((frame.width as number) / 2);
    const y = Math.round((frame.height as number) * 0.2);
    viewer.send({ type: 'mouse', event: 'mousePressed', x, y, button: 'left', clickCount: 1 });
    viewer.send({ type: 'mouse', event: 'mouseReleased', x, y, button: 'left', clickCount: 1 });
    viewer.send({ type: 'text', text: 'alice' });
    viewer.send({ type: 'key', event: 'keyDown', key: 'Enter', text: '\r' });
    viewer.send({ type: 'key', event: 'keyUp', key: 'Enter' });
    await waitFor(() => site.submitted.includes('alice'), 15_000, 'the form submitted with the typed name');
    // As a person finishes once the site says they are in: the browser holds the cookie by then.
    await waitFor(() => site.welcomed.includes('alice'), 15_000, 'the welcome page came back with the session');

    const closed = viewer.closed;
    assert.deepEqual(okData(await api.post(`/api/browser/login-sessions/${viewId}/finish`)), { saved: true });
    assert.equal((await closed).code, 4000, 'the live view ends with the page');

    assert.deepEqual(okData<BrowserLoginSite[]>(await api.get(`/api/apps/${appA}/browser-login`)), [
      { url: site.url, label: 'Loopback site', signedIn: true },
    ]);
    assert.deepEqual(okData<BrowserLoginSite[]>(await api.get(`/api/apps/${appB}/browser-login`)), [
      { url: site.url, label: 'Loopback site', signedIn: false },
    ]);
  });
});
