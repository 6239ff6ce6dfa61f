import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, okData } from '#testing/api-client.js';
import { CatalogServer, indexDocument, syntheticEntry, syntheticSpec } from '#testing/catalog-server.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

interface Listing {
  slug: string;
  version: string;
}

/** Two replicas on one database agree on sources and on the cached catalog. */
describe('store across two replicas', { skip: testMode() === 'services' ? false : 'needs Postgres' }, () => {
  let services: SharedServices;
  let catalog: CatalogServer;
  let a: TestServer;
  let b: TestServer;

  const publish = (version: string) => {
    catalog.set('index.json', indexDocument([syntheticEntry('shared-one', version)]));
    catalog.set('items/shared-one/spec.yaml', syntheticSpec('shared-one', version));
  };
  const versionOn = async (server: TestServer) =>
    okData<{ items: Listing[] }>(await apiClient(server).post('/api/store/query', {})).items[0]?.version;

  before(async () => {
    services = await createSharedServices();
    catalog = await CatalogServer.start();
    publish('1.0.0');
    const env = { SVC_STORE_SOURCES: catalog.url };
    a = await startServer({ services, env });
    b = await startServer({ services, env });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await catalog?.stop();
    await services?.dispose();
  });

  it('a revalidation on one replica shows on the other; so does a source turned off', async () => {
    assert.equal(await versionOn(a), '1.0.0');
    assert.equal(await versionOn(b), '1.0.0');
    publish('1.1.0');
    assert.deepEqual(okData(await apiClient(a).post('/api/store/revalidate')), { changed: true });
    catalog.resetCounts();
    await waitFor(async () => (await versionOn(b)) === '1.1.0', 15_000, 'replica b sees 1.1.0');
    assert.deepEqual(catalog.requests, [], 'b read the new index from the database, not the host');
    const [source] = okData<Array<{ id: string }>>(await apiClient(b).get('/api/store/registries'));
    okData(await apiClient(b).post(`/api/store/registries/${source!.id}/toggle`, { enabled: false }));
    await waitFor(async () => (await versionOn(a)) === undefined, 15_000, 'replica a sees the source off');
    const listed = okData<Array<{ enabled: boolean }>>(await apiClient(a).get('/api/store/registries'));
    assert.equal(listed[0]!.enabled, false);
  });
});
