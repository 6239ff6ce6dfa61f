import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, okData } from '#testing/api-client.js';
import { CatalogServer, indexDocument, largeIndex, syntheticEntry, syntheticSpec } from '#testing/catalog-server.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';

interface QueryResult {
  items: Array<{ slug: string; name: string }>;
  total: number;
  hasMore: boolean;
  sources: Array<{ registryId: string; status: string; error?: string }>;
}

/**
 * Hostile built-in sources beside good ones: invalid JSON, the wrong shape, an endless body,
 * a host that never answers, a redirect, and 10,000 entries. Each failing source is reported
 * in `sources` with its error; the others list and install as usual.
 */
describe(`store with hostile catalogs (${testMode()})`, () => {
  let catalog: CatalogServer;
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;
  const names = ['good', 'bad-json', 'bad-shape', 'endless', 'silent', 'trickle', 'moved', 'large'] as const;
  const url = (name: string) => `${catalog.url}/${name}`;

  before(async () => {
    catalog = await CatalogServer.start();
    catalog.set('good/index.json', indexDocument([syntheticEntry('good-one', '1.0.0')]));
    catalog.set('good/items/good-one/spec.yaml', syntheticSpec('good-one', '1.0.0'));
    catalog.set('bad-json/index.json', '{"version": 1, "apps": [');
    catalog.set('bad-shape/index.json', { version: 2, apps: {} });
    catalog.route('endless/index.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (res.write(chunk)) {
          /* fill the socket */
        }
      };
      res.on('drain', pump);
      pump();
    });
    catalog.route('silent/index.json', () => {
      /* never answers */
    });
    catalog.route('trickle/index.json', (_req, res) => {
      // Never idle: a byte every half second, forever.
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 500);
      res.on('close', () => clearInterval(timer));
    });
    catalog.route('moved/index.json', (_req, res) => res.writeHead(302, { location: '/elsewhere/index.json' }).end());
    catalog.set('elsewhere/index.json', indexDocument([syntheticEntry('moved-one', '1.0.0')]));
    catalog.set('large/index.json', largeIndex(10_000));
    server = await startServer({ env: { SVC_STORE_SOURCES: names.map(url).join(',') } });
    api = apiClient(server);
  });
  after(async () => {
    await server?.stop();
    await catalog?.stop();
  });

  it('reports each failing source and serves the others', async () => {
    const result = okData<QueryResult>(await api.post('/api/store/query', { pageSize: 5 }));
    const sources = okData<Array<{ id: string; url: string }>>(await api.get('/api/store/registries'));
    const statusOf = (name: string) => {
      const id = sources.find((s) => s.url === url(name))!.id;
      return result.sources.find((s) => s.registryId === id)!;
    };
    assert.equal(statusOf('good').status, 'ok');
    assert.equal(statusOf('moved').status, 'ok');
    assert.equal(statusOf('large').status, 'ok');
    assert.match(statusOf('bad-json').error!, /not valid JSON/);
    assert.match(statusOf('bad-shape').error!, /not an index/);
    assert.match(statusOf('endless').error!, /larger than/);
    assert.equal(statusOf('silent').status, 'error');
    assert.equal(statusOf('trickle').status, 'error');
    assert.equal(result.total, 10_002);
    // The first query waited for the sources never read; the next ones do not wait for them again.
    const started = Date.now();
    okData<QueryResult>(await api.post('/api/store/query', { pageSize: 5 }));
    assert.ok(Date.now() - started < 5000, `a later query took ${Date.now() - started} ms`);
  });

  it('pages and searches 10,000 entries', async () => {
    const full = okData<QueryResult>(await api.post('/api/store/query', { page: 100, pageSize: 100 }));
    assert.deepEqual([full.items.length, full.hasMore], [100, true]);
    const last = okData<QueryResult>(await api.post('/api/store/query', { page: 101, pageSize: 100 }));
    assert.deepEqual([last.items.length, last.hasMore], [2, false]);
    const found = okData<QueryResult>(
      await api.post('/api/store/query', { search: 'entry 9999', locale: 'zh-CN', pageSize: 3 }),
    );
    assert.equal(found.items[0]!.slug, 'entry-9999');
    assert.equal(found.items[0]!.name, '条目 9999');
  });

  it('installs from a good source while others fail; the server stays up', async () => {
    const space = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Hostile' })).id;
    okData(await api.post('/api/store/install', { slug: 'good-one', spaceId: space }));
    assert.equal(okData<{ changed: boolean }>(await api.post('/api/store/revalidate')).changed, false);
    assert.equal(okData<{ catalog: boolean }>(await api.get('/api/store/capabilities')).catalog, true);
  });
});
