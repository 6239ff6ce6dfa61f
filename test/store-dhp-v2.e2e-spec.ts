import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, failure, okData } from '#testing/api-client.js';
import {
  CatalogServer,
  indexDocument,
  type StoreServerState,
  syntheticEntry,
  syntheticSpec,
} from '#testing/catalog-server.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';

interface Listing {
  slug: string;
}
interface Source {
  id: string;
  sourceType: string;
  isDefault: boolean;
}
interface Publication {
  slug: string;
  version: string;
  status: string;
  takedownBy?: string;
  installs?: number;
}

const SLUGS = ['alpha', 'beta', 'gamma'];

/** A dhp-v2 host: the static catalog of three synthetic entries plus the store-server endpoints given. */
async function storeHost(options: Parameters<CatalogServer['storeServer']>[0]) {
  const host = await CatalogServer.start();
  host.set('index.json', indexDocument(SLUGS.map((s) => syntheticEntry(s, '1.0.0'))));
  for (const s of SLUGS) host.set(`items/${s}/spec.yaml`, syntheticSpec(s, '1.0.0'));
  return { host, state: host.storeServer(options) };
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A built-in dhp-v2 source (`SVC_STORE_SOURCES=dhp-v2+<url>`): the capabilities handshake,
 * install counts, collections, category taxonomy, discover layout, the creator's publications and
 * unpublish — each used only where the server offers it.
 */
describe(`store dhp-v2 store server (${testMode()})`, () => {
  let host: CatalogServer;
  let state: StoreServerState;
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;
  let sourceId: string;

  before(async () => {
    ({ host, state } = await storeHost({
      capabilities: { catalog: true, installs: true, publish: true, reviewWorkflow: true, identity: 'github' },
      collections: [{ id: 'starter', title: 'Starter pack', slugs: ['alpha', 'gamma', 'not-listed'] }],
      taxonomy: {
        default: [{ id: 'data', label: 'Data', icon: '📊' }],
        skill: [{ id: 'writing', labelKey: 'category.writing' }],
      },
      layout: {
        version: 2,
        nodes: [
          { type: 'hero', title: 'Picks', subtitle: 'This week', entries: ['beta', 'alpha'] },
          { type: 'collections', title: 'Collections' },
        ],
      },
      token: 'creator-token',
      publications: [
        { slug: 'tester/alpha', version: '1.0.0', status: 'listed', installs: 3, name: 'Alpha' },
        { slug: 'tester/old', version: '0.1.0', status: 'rejected' },
      ],
    }));
    server = await startServer({ env: { SVC_STORE_SOURCES: `dhp-v2+${host.url}` } });
    api = apiClient(server);
    const sources = okData<Source[]>(await api.get('/api/store/registries'));
    assert.deepEqual(
      sources.map((s) => [s.sourceType, s.isDefault]),
      [['dhp-v2', true]],
    );
    sourceId = sources[0]!.id;
  });
  after(async () => {
    await server?.stop();
    await host?.stop();
  });

  it('capabilities come from the handshake; without a signed-in creator, publishing answers 403', async () => {
    assert.deepEqual(okData(await api.get('/api/store/capabilities')), {
      catalog: true,
      installs: true,
      publish: true,
      reviewWorkflow: true,
      identity: 'none',
    });
    failure(await api.get('/api/store/my-publications'), 403, /adapterConfig\.token/, 'PUBLISHING_UNAVAILABLE');
    failure(await api.post('/api/store/unpublish', { slug: 'tester/alpha' }), 403, /dhp-v2/, 'PUBLISHING_UNAVAILABLE');
  });

  it('category taxonomy and the discover layout (with collections) come from the store server', async () => {
    assert.deepEqual(okData(await api.get('/api/store/category-taxonomy')), {
      default: [{ id: 'data', label: 'Data', icon: '📊' }],
      skill: [{ id: 'writing', label: 'category.writing' }],
    });
    const page = okData<{
      version: number;
      nodes: Array<{
        type: string;
        title?: string;
        entries?: Listing[];
        collections?: Array<{ id: string; title?: string; entries: Listing[] }>;
      }>;
    }>(await api.get('/api/store/discover-page?pageSize=10'));
    assert.equal(page.version, 2);
    assert.deepEqual(
      page.nodes.map((n) => [n.type, n.title]),
      [
        ['hero', 'Picks'],
        ['collections', 'Collections'],
      ],
    );
    assert.deepEqual(
      page.nodes[0]!.entries!.map((e) => e.slug),
      ['beta', 'alpha'],
    );
    const starter = page.nodes[1]!.collections!;
    assert.deepEqual(
      starter.map((c) => [c.id, c.title, c.entries.map((e) => e.slug)]),
      [['starter', 'Starter pack', ['alpha', 'gamma']]],
      'unknown slugs are left out',
    );
  });

  it('an install is counted on the store server (POST /apps/{slug}/installs with the version)', async () => {
    const { id: spaceId } = okData<{ id: string }>(await api.post('/api/spaces', { name: 'dhp' }));
    okData(await api.post('/api/store/install', { slug: 'alpha', spaceId }));
    await waitFor(() => state.installs.length > 0, 'the install count');
    assert.deepEqual(state.installs, [{ slug: 'alpha', body: { version: '1.0.0' } }]);
  });

  it('signed in (adapterConfig.token): my publications, and unpublish takes a listing down', async () => {
    assert.deepEqual(
      (await api.patch(`/api/store/registries/${sourceId}/adapter-config`, { token: 'creator-token' })).body,
      {
        success: true,
      },
    );
    assert.equal(okData<{ identity: string }>(await api.get('/api/store/capabilities')).identity, 'github');
    const mine = okData<Publication[]>(await api.get('/api/store/my-publications'));
    assert.deepEqual(
      mine.map((p) => [p.slug, p.status, p.installs]),
      [
        ['tester/alpha', 'listed', 3],
        ['tester/old', 'rejected', undefined],
      ],
    );
    assert.equal(okData(await api.post('/api/store/unpublish', { slug: 'tester/alpha' })), null);
    assert.deepEqual(state.unpublished, ['tester/alpha']);
    const after = okData<Publication[]>(await api.get('/api/store/my-publications'));
    assert.deepEqual([after[0]!.status, after[0]!.takedownBy], ['hidden', 'creator']);
    failure(await api.post('/api/store/unpublish', { slug: 'tester/nothing' }), 404, /tester\/nothing/);
    failure(await api.post('/api/store/unpublish', { slug: 'Not A Slug' }), 400, /author/);
    failure(await api.post('/api/store/unpublish', {}), 400, /slug/);
  });

  it('app-document is the entry README; a malformed spec.yaml fails the install clearly, nothing written', async () => {
    host.set('items/beta/README.md', '# Beta\n\nWhat beta does.');
    assert.deepEqual(okData(await api.get('/api/store/app-document?slug=beta')), {
      content: '# Beta\n\nWhat beta does.',
    });
    assert.deepEqual(okData(await api.get('/api/store/app-document?slug=gamma')), { content: null });
    const before = okData<unknown[]>(await api.get('/api/apps')).length;
    host.set('items/gamma/spec.yaml', '- just\n- a list\n');
    failure(await api.post('/api/store/install', { slug: 'gamma' }), 400, /not a YAML mapping/);
    host.set('items/gamma/spec.yaml', 'name: [unclosed');
    const broken = await api.post('/api/store/install', { slug: 'gamma' });
    assert.deepEqual([broken.status, broken.body.success], [400, false]);
    host.set(
      'items/gamma/spec.yaml',
      JSON.stringify({ ...JSON.parse(syntheticSpec('gamma', '1.0.0')), subscriptions: 'x' }),
    );
    failure(await api.post('/api/store/install', { slug: 'gamma' }), 422, /subscriptions/, 'VALIDATION_FAILED');
    assert.equal(okData<unknown[]>(await api.get('/api/apps')).length, before);
    host.set('items/gamma/spec.yaml', syntheticSpec('gamma', '1.0.0'));
  });

  it('a token the store server refuses answers 403, not a crash', async () => {
    await api.patch(`/api/store/registries/${sourceId}/adapter-config`, { token: 'wrong' });
    failure(await api.get('/api/store/my-publications'), 403, /refused/, 'PUBLISHING_UNAVAILABLE');
    await api.patch(`/api/store/registries/${sourceId}/adapter-config`, { token: 'creator-token' });
  });
});

describe(`store dhp-v2 store server offering nothing optional (${testMode()})`, () => {
  let host: CatalogServer;
  let state: StoreServerState;
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;

  before(async () => {
    ({ host, state } = await storeHost({
      capabilities: { catalog: true, installs: false, publish: false },
      token: 'creator-token',
      publications: [{ slug: 'tester/alpha', version: '1.0.0', status: 'listed' }],
    }));
    server = await startServer({ env: { SVC_STORE_SOURCES: `dhp-v2+${host.url}` } });
    api = apiClient(server);
  });
  after(async () => {
    await server?.stop();
    await host?.stop();
  });

  it('no counts, the protocol taxonomy, one catalog node, and publishing refused even with a token', async () => {
    const [source] = okData<Source[]>(await api.get('/api/store/registries'));
    await api.patch(`/api/store/registries/${source!.id}/adapter-config`, { token: 'creator-token' });
    assert.deepEqual(okData(await api.get('/api/store/capabilities')), {
      catalog: true,
      installs: false,
      publish: false,
      reviewWorkflow: false,
      identity: 'none',
    });
    const taxonomy = okData<{ default: Array<{ id: string }> }>(await api.get('/api/store/category-taxonomy'));
    assert.ok(
      taxonomy.default.some((c) => c.id === 'productivity'),
      'the protocol categories',
    );
    const page = okData<{ nodes: Array<{ type: string; entries: Listing[] }> }>(
      await api.get('/api/store/discover-page?pageSize=2'),
    );
    assert.deepEqual(
      page.nodes.map((n) => [n.type, n.entries.length]),
      [['catalog', 2]],
    );
    const { id: spaceId } = okData<{ id: string }>(await api.post('/api/spaces', { name: 'bare' }));
    okData(await api.post('/api/store/install', { slug: 'beta', spaceId }));
    failure(await api.get('/api/store/my-publications'), 403, /dhp-v2/, 'PUBLISHING_UNAVAILABLE');
    failure(await api.post('/api/store/unpublish', { slug: 'tester/alpha' }), 403, /dhp-v2/, 'PUBLISHING_UNAVAILABLE');
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(state.installs, [], 'installs are not counted where the server does not offer it');
    assert.deepEqual(state.unpublished, []);
  });
});
