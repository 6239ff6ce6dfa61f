import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient, binary, failure, okData } from '#testing/api-client.js';
import { CatalogServer, REFERENCE_CATALOG, referenceCatalogSkip, zipEntries } from '#testing/catalog-server.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';

interface Listing {
  slug: string;
  name: string;
  version: string;
  type: string;
  category: string;
  registryId: string;
  requires_skills?: string[];
  i18n?: Record<string, { name?: string }>;
}
interface QueryResult {
  items: Listing[];
  total: number;
  hasMore: boolean;
  groups: Array<{ type: string; count: number; hasMore: boolean }>;
  sources: Array<{ registryId: string; status: string; error?: string }>;
}
interface ConfigField {
  key: string;
  type: string;
  required?: boolean;
  default?: unknown;
  options?: Array<{ value: unknown }>;
}
interface AppRecord {
  id: string;
  spaceId: string | null;
  spec: Record<string, unknown> & { version: string; name: string; requires?: { skills?: Array<{ id: string }> } };
}

/**
 * The Store over the real reference catalog, served as the built-in source is served (a static
 * host with ETags): every entry lists, shows, installs and exports; revalidation is one
 * conditional request per index file; the cached index survives a restart with the host gone.
 */
describe(`store over the reference catalog (${testMode()})`, { skip: referenceCatalogSkip() }, () => {
  let catalog: CatalogServer;
  let server: TestServer;
  let services: SharedServices | undefined;
  let dataDir: string;
  let api: ReturnType<typeof apiClient>;
  let index: Listing[];
  let spaceId: string;
  let spacePath: string;
  const installed = new Map<string, string>();

  /** Values for the settings an entry requires without a default, as a client's form would fill them. */
  const settingsFor = async (slug: string): Promise<Record<string, unknown>> => {
    const { spec } = okData<{ spec: { config_schema?: ConfigField[]; inputs?: ConfigField[] } }>(
      await api.get(`/api/store/apps/${encodeURIComponent(slug)}`),
    );
    const values: Record<string, unknown> = {};
    for (const f of spec.config_schema ?? spec.inputs ?? []) {
      if (!f.required || f.default !== undefined) continue;
      values[f.key] =
        f.type === 'number'
          ? 1
          : f.type === 'boolean'
            ? true
            : f.type === 'select'
              ? f.options![0]!.value
              : f.type === 'url'
                ? 'https://example.com/'
                : f.type === 'email'
                  ? 'someone@example.com'
                  : 'value';
    }
    return values;
  };
  const all = async (): Promise<QueryResult> =>
    okData<QueryResult>(await api.post('/api/store/query', { pageSize: 100 }));

  before(async () => {
    catalog = await CatalogServer.start(REFERENCE_CATALOG);
    index = (JSON.parse((await request(catalog.url).get('/index.json')).text) as { apps: Listing[] }).apps;
    services = testMode() === 'services' ? await createSharedServices() : undefined;
    dataDir = mkdtempSync(join(tmpdir(), 'svc-store-'));
    server = await startServer({ dataDir, services, env: { SVC_STORE_SOURCES: catalog.url } });
    api = apiClient(server);
    ({ id: spaceId, path: spacePath } = okData<{ id: string; path: string }>(
      await api.post('/api/spaces', { name: 'Store' }),
    ));
  });
  after(async () => {
    await server?.stop();
    await catalog?.stop();
    await services?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists the built-in source from SVC_STORE_SOURCES, which cannot be removed', async () => {
    const sources = okData<Array<{ id: string; url: string; isDefault: boolean; enabled: boolean }>>(
      await api.get('/api/store/registries'),
    );
    assert.equal(sources.length, 1);
    assert.deepEqual([sources[0]!.url, sources[0]!.isDefault, sources[0]!.enabled], [catalog.url, true, true]);
    const del = await api.del(`/api/store/registries/${sources[0]!.id}`);
    assert.deepEqual([del.status, del.body.success], [200, false]);
    assert.match(del.body.error, /Built-in/);
  });

  it('query lists every entry of the catalog, with total, groups and source status', async () => {
    const result = await all();
    assert.equal(result.total, index.length);
    assert.deepEqual(result.items.map((i) => i.slug).sort(), index.map((i) => i.slug).sort());
    assert.deepEqual(result.groups, [{ type: 'automation', count: index.length, hasMore: false }]);
    assert.deepEqual(
      result.sources.map((s) => s.status),
      ['ok'],
    );
    const page2 = okData<QueryResult>(await api.post('/api/store/query', { page: 2, pageSize: 10 }));
    assert.deepEqual(
      page2.items.map((i) => i.slug),
      result.items.slice(10, 20).map((i) => i.slug),
    );
    assert.equal(page2.hasMore, index.length > 20);
    failure(await api.post('/api/store/query', { pageSize: 0 }), 400, /pageSize/);
    failure(await api.post('/api/store/query', { type: 'robot' }), 400, /type/);
  });

  it('search covers names, descriptions, tags and i18n names; locale resolves exact, then language', async () => {
    const news = okData<QueryResult>(await api.post('/api/store/query', { search: 'daily news digest' }));
    assert.equal(news.items[0]!.slug, 'ai-daily-news', 'a name match ranks first');
    assert.ok(news.items.every((i) => JSON.stringify(i).toLowerCase().includes('digest')));
    const tagged = okData<QueryResult>(await api.post('/api/store/query', { search: '早报' }));
    assert.ok(tagged.items.some((i) => i.slug === 'ai-daily-news'));
    const canonical = news.items[0]!.name;
    assert.equal(canonical, index.find((i) => i.slug === 'ai-daily-news')!.name);
    for (const locale of ['en-US', 'en', 'en-GB']) {
      const res = okData<QueryResult>(await api.post('/api/store/query', { search: 'daily news digest', locale }));
      assert.equal(res.items[0]!.name, 'AI Daily News Digest', locale);
    }
    const fr = okData<QueryResult>(await api.post('/api/store/query', { search: 'daily news digest', locale: 'fr' }));
    assert.equal(fr.items[0]!.name, canonical);
    const social = okData<QueryResult>(await api.post('/api/store/query', { category: 'social', pageSize: 100 }));
    assert.ok(social.total > 0 && social.items.every((i) => i.category === 'social'));
    const legacy = okData<Listing[]>(await api.get('/api/store/apps?tags=AI,news&locale=en'));
    assert.ok(legacy.some((i) => i.slug === 'ai-daily-news' && i.name === 'AI Daily News Digest'));
    const page = okData<{ nodes: Array<{ type: string; entries: Listing[]; hasMore: boolean }> }>(
      await api.get('/api/store/discover-page?pageSize=5'),
    );
    assert.deepEqual([page.nodes.length, page.nodes[0]!.entries.length, page.nodes[0]!.hasMore], [1, 5, true]);
  });

  it('shows every entry with its full spec, and no document where the source has none', async () => {
    for (const entry of index) {
      const detail = okData<{ entry: Listing; spec: Record<string, unknown>; registryId: string }>(
        await api.get(`/api/store/apps/${encodeURIComponent(entry.slug)}`),
      );
      assert.equal(detail.entry.slug, entry.slug);
      assert.equal(detail.spec.type, entry.type);
      assert.equal(detail.spec.version, entry.version, entry.slug);
      assert.ok(detail.registryId);
    }
    assert.deepEqual(okData(await api.get('/api/store/app-document?slug=ai-daily-news')), { content: null });
    failure(await api.get('/api/store/apps/no-such-item'), 404, /no-such-item/);
  });

  it('installs every entry, bundled skills included; the install routes and spaceId rules', async () => {
    for (const entry of index) {
      const res = await api.post('/api/store/install', {
        slug: entry.slug,
        spaceId,
        userConfig: await settingsFor(entry.slug),
      });
      installed.set(entry.slug, okData<{ appId: string }>(res).appId);
    }
    const apps = okData<AppRecord[]>(await api.get(`/api/apps?spaceId=${spaceId}`));
    assert.equal(apps.length, index.length);
    for (const skill of index.flatMap((e) => e.requires_skills ?? [])) {
      assert.ok(existsSync(join(spacePath, '.claude', 'skills', skill)), `bundled skill ${skill} installed`);
    }
    failure(await api.post('/api/store/install', { spaceId }), 400, /slug/);
    failure(await api.post('/api/store/install', { slug: 'ai-daily-news', spaceId }), 409, /already installed/);
    failure(await api.post('/api/store/apps/ai-daily-news/install', { spaceId: null }), 400, /spaceId null/);
    const userConfig = await settingsFor('ai-daily-news');
    const global = okData<{ appId: string }>(await api.post('/api/store/apps/ai-daily-news/install', { userConfig }));
    assert.equal(okData<AppRecord>(await api.get(`/api/apps/${global.appId}`)).spaceId, null);
  });

  it('exports every installed entry as <slug>-<version>.dhpkg with its bundled skills', async () => {
    for (const entry of index) {
      const res = await api
        .get(`/api/apps/${installed.get(entry.slug)}/export`)
        .buffer(true)
        .parse(binary);
      assert.equal(res.status, 200, entry.slug);
      assert.equal(res.headers['content-disposition'], `attachment; filename="${entry.slug}-${entry.version}.dhpkg"`);
      const files = await zipEntries(res.body as Buffer);
      assert.ok(files.has('spec.yaml'));
      for (const skill of entry.requires_skills ?? []) {
        assert.ok(
          [...files.keys()].some((f) => f.startsWith(`skills/${skill}/`)),
          `${entry.slug}: ${skill}`,
        );
      }
    }
  });

  it('an exported package imports on a fresh server as the same app (round trip)', async () => {
    const slug = index.find((e) => (e.requires_skills?.length ?? 0) > 1)!.slug;
    const exported = await api
      .get(`/api/apps/${installed.get(slug)}/export`)
      .buffer(true)
      .parse(binary);
    const file = join(dataDir, 'roundtrip.dhpkg');
    writeFileSync(file, exported.body as Buffer);
    const original = okData<AppRecord>(await api.get(`/api/apps/${installed.get(slug)}`));
    const fresh = await startServer({ env: { SVC_STORE_SOURCES: catalog.url } });
    try {
      const other = apiClient(fresh);
      const space = okData<{ id: string }>(await other.post('/api/spaces', { name: 'Fresh' })).id;
      const { appId } = okData<{ appId: string }>(
        await other.post('/api/store/import-dhpkg', { filePath: file, spaceId: space }),
      );
      const copy = okData<AppRecord>(await other.get(`/api/apps/${appId}`));
      assert.deepEqual(copy.spec, original.spec);
      const again = await other.get(`/api/apps/${appId}/export`).buffer(true).parse(binary);
      const a = await zipEntries(exported.body as Buffer);
      const b = await zipEntries(again.body as Buffer);
      assert.deepEqual([...b.keys()].sort(), [...a.keys()].sort());
      for (const [name, data] of a) assert.ok(data.equals(b.get(name)!), name);
    } finally {
      await fresh.stop();
    }
  });

  it('revalidate of an unchanged catalog is one conditional request per index file; refresh reads again', async () => {
    catalog.resetCounts();
    assert.deepEqual(okData(await api.post('/api/store/revalidate')), { changed: false });
    assert.deepEqual(catalog.requests, [{ path: 'index.json', conditional: true, status: 304 }]);
    catalog.resetCounts();
    assert.deepEqual((await api.post('/api/store/refresh')).body, { success: true });
    assert.ok(catalog.requests.some((r) => r.path === 'index.json' && !r.conditional && r.status === 200));
    assert.equal((await all()).total, index.length);
  });

  it('the cached index lives in the database: a restart lists the catalog with its host gone', async () => {
    await server.stop();
    await catalog.stop();
    server = await startServer({ dataDir, services, env: { SVC_STORE_SOURCES: catalog.url } });
    api = apiClient(server);
    const result = await all();
    assert.equal(result.total, index.length);
  });
});
