import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, okData } from '#testing/api-client.js';
import { CatalogServer, indexDocument, syntheticEntry, syntheticSpec } from '#testing/catalog-server.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

/**
 * Store events over WebSocket: an install is `app:list_changed` (docs/api/store-and-packages.md, Events; the item and each
 * requirement installed with it); every source read is `store:sync-status-changed`
 * `{registryId, status, changed, error?}`; check-now announces each update it leaves pending as
 * `store:upgrade-available` (the Store's own channels: docs/api/store-and-packages.md).
 */
describe(`store events over WebSocket (${testMode()})`, () => {
  let host: CatalogServer;
  let server: TestServer;
  let ws: WsTestClient;
  let api: ReturnType<typeof apiClient>;
  let registryId: string;
  let appId: string;
  const WAIT = 60_000;
  const event = (channel: string, match: (data: Record<string, unknown>) => boolean = () => true) =>
    ws.next(
      (f) => f.type === 'event' && f.channel === channel && match((f.data ?? {}) as Record<string, unknown>),
      WAIT,
    );

  before(async () => {
    host = await CatalogServer.start();
    host.set('index.json', indexDocument([syntheticEntry('evt', '1.0.0')]));
    host.set('items/evt/spec.yaml', syntheticSpec('evt', '1.0.0'));
    server = await startServer({ env: { SVC_STORE_SOURCES: host.url } });
    api = apiClient(server);
    ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    registryId = okData<Array<{ id: string }>>(await api.get('/api/store/registries'))[0]!.id;
  });
  after(async () => {
    ws?.close();
    await server?.stop();
    await host?.stop();
  });

  it('the first read and every revalidate announce the source status', async () => {
    okData(await api.post('/api/store/query', {}));
    const first = await event('store:sync-status-changed', (d) => d.registryId === registryId);
    assert.deepEqual(first.data, { registryId, status: 'ok', changed: true });
    okData(await api.post('/api/store/revalidate', {}));
    const again = await event('store:sync-status-changed', (d) => d.registryId === registryId);
    assert.deepEqual(again.data, { registryId, status: 'ok', changed: false });
  });

  it('a store install is app:list_changed installed', async () => {
    const { id: spaceId } = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Events' }));
    ({ appId } = okData<{ appId: string }>(await api.post('/api/store/install', { slug: 'evt', spaceId })));
    const listed = await event('app:list_changed', (d) => d.appId === appId);
    assert.deepEqual(listed.data, { appId, change: 'installed' });
  });

  it('a new version: the revalidate says changed, and check-now announces the pending update', async () => {
    host.set('index.json', indexDocument([syntheticEntry('evt', '1.1.0')]));
    host.set('items/evt/spec.yaml', syntheticSpec('evt', '1.1.0'));
    okData(await api.post('/api/store/revalidate', {}));
    const moved = await event('store:sync-status-changed', (d) => d.registryId === registryId && d.changed === true);
    assert.equal(moved.data!.status, 'ok');
    const pending = okData<Array<{ appId: string }>>(await api.post('/api/store/updates/check-now', {}));
    assert.deepEqual(
      pending.map((p) => p.appId),
      [appId],
    );
    const upgrade = await event('store:upgrade-available', (d) => d.appId === appId);
    assert.deepEqual(upgrade.data, {
      appId,
      currentVersion: '1.0.0',
      latestVersion: '1.1.0',
      severity: 'minor',
      strategy: 'notify',
    });
  });

  it('a failing source announces status error with the reason', async () => {
    host.remove('index.json');
    await api.post('/api/store/revalidate', {});
    const failed = await event('store:sync-status-changed', (d) => d.registryId === registryId && d.status === 'error');
    assert.equal(failed.data!.changed, false);
    assert.match(String(failed.data!.error), /index\.json/);
  });
});
