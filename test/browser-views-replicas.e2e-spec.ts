import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserLoginSite } from '#contracts/browser.js';
import { apiClient, failure, okData } from '#testing/api-client.js';
import { LoginSite, openLiveView, signInSpec } from '#testing/login-site.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import { testMode } from '#testing/test-env.js';
import { waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

describe('AI browser views across two replicas', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let site: LoginSite;
  let replicas: Replicas;

  before(async () => {
    site = await LoginSite.start();
    replicas = await startReplicas({ env: { SVC_BROWSER_ALLOW: '127.0.0.1' } });
  });
  after(async () => {
    await replicas?.stop();
    await site?.close();
  });

  it('a sign-in page on one replica is watched, driven and finished from the other', async () => {
    const a = apiClient(replicas.a);
    const b = apiClient(replicas.b);
    const spaceId = okData<{ id: string }>(await a.post('/api/spaces', { name: 'Replica sign-in' })).id;
    const appId = okData<{ appId: string }>(
      await a.post('/api/apps/import-spec', { spaceId, yamlContent: signInSpec(site.url, 'Replica Site Helper') }),
    ).appId;
    const { viewId } = okData<{ viewId: string }>(
      await a.post('/api/browser/login-sessions', { spaceId, url: site.url }),
    );

    // The live view through replica b: frames relayed from a, input relayed to it.
    const viewer = await openLiveView(replicas.b, viewId);
    const frame = await viewer.next((f: Frame) => f.type === 'frame', 30_000);
    viewer.send({ type: 'ack', seq: frame.seq });
    const x = Math.round((frame.width as number) / 2);
    const y = Math.round((frame.height as number) * 0.2);
    viewer.send({ type: 'mouse', event: 'mousePressed', x, y, button: 'left', clickCount: 1 });
    viewer.send({ type: 'mouse', event: 'mouseReleased', x, y, button: 'left', clickCount: 1 });
    viewer.send({ type: 'text', text: 'bob' });
    viewer.send({ type: 'key', event: 'keyDown', key: 'Enter', text: '\r' });
    viewer.send({ type: 'key', event: 'keyUp', key: 'Enter' });
    await waitFor(() => site.submitted.includes('bob'), 15_000, 'the form submitted through the relayed view');
    await waitFor(() => site.welcomed.includes('bob'), 15_000, 'the welcome page came back with the session');

    // Finished from b: a saves the profile and closes the page; the relayed view ends too.
    const closed = viewer.closed;
    assert.deepEqual(okData(await b.post(`/api/browser/login-sessions/${viewId}/finish`)), { saved: true });
    assert.equal((await closed).code, 4000);
    assert.deepEqual(okData<BrowserLoginSite[]>(await b.get(`/api/apps/${appId}/browser-login`)), [
      { url: site.url, label: 'Loopback site', signedIn: true },
    ]);
    failure(await b.post(`/api/browser/login-sessions/${viewId}/finish`), 404, /not found|No such/i);
  });

  it("a chat's page lives on the replica that ran its turn: listed from both, stopped from either", async () => {
    const a = apiClient(replicas.a);
    const b = apiClient(replicas.b);
    const spaceId = okData<{ id: string }>(await a.post('/api/spaces', { name: 'Replica chat' })).id;
    const conversationId = okData<{ id: string }>(
      await a.post(`/api/spaces/${spaceId}/conversations`, { title: 'x' }),
    ).id;
    replicas.model.enqueue(
      { steps: [{ toolCall: { name: 'mcp__ai-browser__browser_navigate', input: { url: site.url } } }] },
      { steps: [{ text: 'Opened it.' }] },
    );
    const watcher = await WsTestClient.signedIn(replicas.b.wsUrl, replicas.b.password);
    watcher.send({ type: 'subscribe', payload: { conversationId } });
    await watcher.roundTrip();
    okData(
      await b.post('/api/agent/message', { spaceId, conversationId, message: 'Open the site', aiBrowserEnabled: true }),
    );
    const active = await watcher.event('ai-browser:active-view-changed', 30_000);
    assert.equal(active.data!.conversationId, conversationId);
    await watcher.event('agent:complete', 30_000);
    const viewId = active.data!.viewId as string;
    // Whichever replica ran the turn holds the page; both list it once the holder announced it.
    for (const replica of [a, b]) {
      await waitFor(
        async () =>
          okData<Array<{ viewId: string }>>(await replica.get(`/api/browser/pages?conversationId=${conversationId}`))
            .length === 1,
        15_000,
        'the page is listed',
      );
      const [page] = okData<Array<{ viewId: string; owned: boolean; active: boolean }>>(
        await replica.get(`/api/browser/pages?conversationId=${conversationId}`),
      );
      assert.deepEqual([page!.viewId, page!.owned, page!.active], [viewId, true, true]);
    }
    // The live view opens through either replica (relayed to the holder).
    const viewer = await openLiveView(replicas.a, viewId);
    await viewer.next((f: Frame) => f.type === 'frame', 30_000);
    viewer.close();
    // Another conversation may not stop it; its own may, from either replica.
    assert.deepEqual(okData(await a.post(`/api/browser/pages/${viewId}/stop`, { conversationId: 'someone-else' })), {
      stopped: false,
      reason: 'not-owned',
    });
    const gone = watcher.event('ai-browser:view-gone', 15_000);
    assert.deepEqual(okData(await a.post(`/api/browser/pages/${viewId}/stop`, { conversationId })), { stopped: true });
    assert.equal((await gone).data!.viewId, viewId);
    await waitFor(
      async () => okData<unknown[]>(await b.get(`/api/browser/pages?conversationId=${conversationId}`)).length === 0,
      15_000,
      'the stopped page is gone from the list',
    );
    watcher.close();
  });

  it('the ai-browser events reach every replica’s sockets; the internal commands reach none', async () => {
    const watcher = await WsTestClient.signedIn(replicas.b.wsUrl, replicas.b.password);
    const a = apiClient(replicas.a);
    const payloads = {
      'ai-browser:active-view-changed': {
        conversationId: 'c-1',
        spaceId: 's-1',
        viewId: 'v-1',
        owned: true,
        url: 'https://example.com/',
        title: 'Example',
      },
      'ai-browser:view-gone': { viewId: 'v-1' },
      'ai-browser:conversation-released': { conversationId: 'c-1' },
    };
    for (const [channel, data] of Object.entries(payloads)) {
      okData(await a.post('/api/test/events', { channel, data }));
      assert.deepEqual((await watcher.event(channel)).data, data);
    }
    okData(
      await a.post('/api/test/events', { channel: 'internal:browser-reply', data: { requestId: 'x', replica: 'y' } }),
    );
    await watcher.roundTrip();
    assert.equal(watcher.frames.filter((f) => f.channel === 'internal:browser-reply').length, 0);
    watcher.close();
  });

  it('a replica that dies: its pages drop out once its lease lapses', async () => {
    const a = apiClient(replicas.a);
    const b = apiClient(replicas.b);
    const spaceId = okData<{ id: string }>(await a.post('/api/spaces', { name: 'Dying replica' })).id;
    const { viewId } = okData<{ viewId: string }>(
      await a.post('/api/browser/login-sessions', { spaceId, url: site.url }),
    );
    // b reaches it while a lives: the live view opens (it would close with 4004 otherwise).
    const viewer = await openLiveView(replicas.b, viewId);
    await viewer.next((f: Frame) => f.type === 'frame', 30_000);
    replicas.a.process.kill('SIGKILL');
    await replicas.a.exited;
    // b notices the holder is gone at its next beat after the lease lapses, and ends the view.
    assert.equal((await viewer.closed).code, 4000);
    failure(await b.post(`/api/browser/login-sessions/${viewId}/finish`), 404, /not found/i);
    await replicas.replace(replicas.a);
  });
});
