import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient, binary, failure, okData } from '#testing/api-client.js';
import { CatalogServer, indexDocument, syntheticEntry, syntheticSpec, zipEntries } from '#testing/catalog-server.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';

interface AppRecord {
  id: string;
  spaceId: string | null;
  upgradeStrategy: string;
  spec: {
    version: string;
    description: string;
    system_prompt: string;
    subscriptions?: Array<{ id: string; source: { config: { every?: string } } }>;
  };
}
interface UpdateItem {
  appId: string;
  currentVersion: string;
  latestVersion: string;
  severity: string;
  strategy: string;
  entry: { slug: string };
}
interface Source {
  id: string;
  url: string;
  enabled: boolean;
  isDefault: boolean;
  sourceType?: string;
  adapterConfig?: Record<string, unknown>;
}

const SKILL_MD = '---\nname: tool-skill\ndescription: A tool.\n---\n\nUse the tool.\n';

/**
 * Sources, updates and the other Store operations over a synthetic catalog served with the
 * split index (digital-humans.json, skills.json, mcps.json) and ETags.
 */
describe(`store sources and updates (${testMode()})`, () => {
  let catalog: CatalogServer;
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;
  let spaceId: string;
  let spacePath: string;
  let appId: string;

  /** Publishes version `v` of the synthetic digital human (its entry and its spec). */
  const publishWatcher = (v: string, spec: Record<string, unknown> = {}) => {
    catalog.set('digital-humans.json', indexDocument([syntheticEntry('synth-watcher', v), ...extraHumans]));
    const requires = { skills: [{ id: 'watch-helper', bundled: true, files: ['SKILL.md'] }] };
    catalog.set('items/synth-watcher/spec.yaml', syntheticSpec('synth-watcher', v, { requires, ...spec }));
    catalog.set('items/synth-watcher/skills/watch-helper/SKILL.md', `# Helper ${v}`);
  };
  /** The bundled skill as installed into the space's skills folder. */
  const helperSkill = () => readFileSync(join(spacePath, '.claude', 'skills', 'watch-helper', 'SKILL.md'), 'utf8');
  const extraHumans = [
    syntheticEntry('mismatched', '1.0.0'),
    { ...syntheticEntry('bad', '1.0.0'), slug: 'Bad Slug' },
    { ...syntheticEntry('no-name', '1.0.0'), name: '' },
  ];

  before(async () => {
    catalog = await CatalogServer.start();
    publishWatcher('1.0.0');
    catalog.set('items/mismatched/spec.yaml', syntheticSpec('someone-else', '1.0.0'));
    catalog.set(
      'skills.json',
      indexDocument([{ ...syntheticEntry('tool-skill', '1.0.0'), type: 'skill', path: 'items/tool-skill' }]),
    );
    catalog.set(
      'items/tool-skill/spec.yaml',
      JSON.stringify({
        name: 'tool-skill',
        version: '1.0.0',
        description: 'A tool.',
        type: 'skill',
        system_prompt: 'Use the tool.',
        skill_files: ['SKILL.md'],
      }),
    );
    catalog.set('items/tool-skill/files/SKILL.md', SKILL_MD);
    catalog.set(
      'mcps.json',
      indexDocument([{ ...syntheticEntry('local-mcp', '1.0.0'), type: 'mcp', path: 'items/local-mcp' }]),
    );
    catalog.set(
      'items/local-mcp/spec.yaml',
      JSON.stringify({
        name: 'local-mcp',
        version: '1.0.0',
        author: 'tester',
        description: 'Runs a command.',
        type: 'mcp',
        mcp_server: { command: 'node', args: ['server.js'] },
      }),
    );
    server = await startServer({ env: { SVC_STORE_SOURCES: catalog.url } });
    api = apiClient(server);
    ({ id: spaceId, path: spacePath } = okData<{ id: string; path: string }>(
      await api.post('/api/spaces', { name: 'Updates' }),
    ));
  });
  after(async () => {
    await server?.stop();
    await catalog?.stop();
  });

  it('user sources: public http(s) only (also after DNS resolution), unique, adapterConfig write-only', async () => {
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost:8080',
      'http://10.0.0.5/catalog',
      'http://[::1]/',
      'http://169.254.169.254/latest',
      'ftp://example.com/',
      'http://localtest.me/',
    ]) {
      const res = await api.post('/api/store/registries', { name: 'Mine', url });
      if (url === 'http://localtest.me/' && res.status === 200) {
        // Without DNS (an offline build machine) the name cannot be resolved: nothing to check here.
        await api.del(`/api/store/registries/${res.body.data.id}`);
        continue;
      }
      failure(res, 400, /url must/);
    }
    failure(await api.post('/api/store/registries', { url: 'https://example.com' }), 400, /name/);
    const added = okData<Source>(
      await api.post('/api/store/registries', {
        name: 'Mine',
        url: 'https://example.com/store/',
        adapterConfig: { a: 1 },
      }),
    );
    assert.deepEqual([added.isDefault, added.url, added.sourceType], [false, 'https://example.com/store', 'svc']);
    assert.deepEqual((await api.post(`/api/store/registries/${added.id}/toggle`, { enabled: false })).body, {
      success: true,
    });
    failure(
      await api.post('/api/store/registries', { name: 'Again', url: 'https://example.com/store' }),
      409,
      /exists/,
    );
    assert.deepEqual((await api.patch(`/api/store/registries/${added.id}/adapter-config`, { apiKey: 'k-1' })).body, {
      success: true,
    });
    failure(await api.patch(`/api/store/registries/${added.id}/adapter-config`, [1]), 400, /plain JSON object/);
    failure(await api.patch(`/api/store/registries/${added.id}/adapter-config`, { nested: { x: 1 } }), 400, /nested/);
    failure(await api.post(`/api/store/registries/${added.id}/toggle`, {}), 400, /enabled/);
    const listed = okData<Source[]>(await api.get('/api/store/registries'));
    assert.deepEqual(
      listed.map((s) => [s.isDefault, s.enabled]),
      [
        [true, true],
        [false, false],
      ],
    );
    assert.deepEqual(listed[1]!.adapterConfig, { a: 1, apiKey: 'k-1' });
    assert.deepEqual((await api.del(`/api/store/registries/${added.id}`)).body, { success: true });
    failure(await api.del(`/api/store/registries/${added.id}`), 404, /not found/);
    const builtin = listed[0]!;
    assert.deepEqual((await api.post(`/api/store/registries/${builtin.id}/toggle`, { enabled: false })).body, {
      success: true,
    });
    assert.equal(okData<{ total: number }>(await api.post('/api/store/query', {})).total, 0);
    await api.post(`/api/store/registries/${builtin.id}/toggle`, { enabled: true });
  });

  it('reads the split index; bad entries are skipped and counted', async () => {
    const result = okData<{
      items: Array<{ slug: string }>;
      groups: Array<{ type: string; count: number }>;
      sources: Array<{ status: string; skipped?: number }>;
    }>(await api.post('/api/store/query', {}));
    assert.deepEqual(result.items.map((i) => i.slug).sort(), [
      'local-mcp',
      'mismatched',
      'synth-watcher',
      'tool-skill',
    ]);
    assert.deepEqual(
      result.sources.map((s) => [s.status, s.skipped]),
      [['ok', 2]],
    );
    assert.deepEqual(
      result.groups.map((g) => [g.type, g.count]),
      [
        ['automation', 2],
        ['skill', 1],
        ['mcp', 1],
      ],
    );
    catalog.resetCounts();
    assert.deepEqual(okData(await api.post('/api/store/revalidate')), { changed: false });
    assert.deepEqual(catalog.requests.map((r) => [r.path, r.conditional, r.status]).sort(), [
      ['digital-humans.json', true, 304],
      ['mcps.json', true, 304],
      ['skills.json', true, 304],
    ]);
  });

  it('install checks the spec against its entry; MCP servers that run a command are blocked', async () => {
    failure(await api.post('/api/store/install', { slug: 'mismatched', spaceId }), 400, /store\.slug/);
    failure(await api.post('/api/store/install', { slug: 'local-mcp', spaceId }), 403, /MCP/, 'MCP_COMMAND_BLOCKED');
    failure(await api.post('/api/store/install', { slug: 'no-such', spaceId }), 404, /no-such/);
    const skill = okData<{ appId: string }>(
      await api.post('/api/store/install', { slug: 'tool-skill', spaceId: null }),
    );
    assert.equal(okData<AppRecord>(await api.get(`/api/apps/${skill.appId}`)).spaceId, null);
    const zip = await api.get(`/api/apps/${skill.appId}/export`).buffer(true).parse(binary);
    assert.equal(zip.headers['content-disposition'], 'attachment; filename="tool-skill-1.0.0.zip"');
    assert.equal((await zipEntries(zip.body as Buffer)).get('SKILL.md')?.toString(), SKILL_MD);
  });

  it('an update keeps the user edits field by field and lists them in kept', async () => {
    appId = okData<{ appId: string }>(await api.post('/api/store/install', { slug: 'synth-watcher', spaceId })).appId;
    assert.deepEqual(okData(await api.get('/api/store/updates')), []);
    assert.equal(helperSkill(), '# Helper 1.0.0', 'the bundled skill is installed with it');
    okData(await api.patch(`/api/apps/${appId}/spec`, { system_prompt: 'My own prompt.' }));
    publishWatcher('1.1.0', {
      subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '2h' } } }],
    });
    assert.deepEqual(okData(await api.post('/api/store/revalidate')), { changed: true });
    const updates = okData<UpdateItem[]>(await api.get('/api/store/updates'));
    assert.deepEqual(
      updates.map((u) => [u.appId, u.currentVersion, u.latestVersion, u.severity, u.strategy, u.entry.slug]),
      [[appId, '1.0.0', '1.1.0', 'minor', 'notify', 'synth-watcher']],
    );
    const applied = okData(await api.post(`/api/store/updates/${appId}/apply`, { mode: 'patch_minor' }));
    assert.deepEqual(applied, {
      appId,
      from: '1.0.0',
      to: '1.1.0',
      severity: 'minor',
      kept: ['system_prompt'],
      editsKnown: true,
    });
    const app = okData<AppRecord>(await api.get(`/api/apps/${appId}`));
    assert.deepEqual(
      [
        app.spec.version,
        app.spec.description,
        app.spec.system_prompt,
        app.spec.subscriptions?.[0]?.source.config.every,
      ],
      ['1.1.0', 'Synthetic entry synth-watcher at 1.1.0', 'My own prompt.', '2h'],
    );
    assert.equal(helperSkill(), '# Helper 1.1.0', 'the update brings its skill files');
    assert.deepEqual(okData(await api.get('/api/store/updates')), []);
    failure(await api.post(`/api/store/updates/${appId}/apply`, {}), 409, /No update/);
  });

  it('a major update needs mode major or force; an ignored version hides until a newer one', async () => {
    publishWatcher('2.0.0');
    await api.post('/api/store/revalidate');
    failure(await api.post(`/api/store/updates/${appId}/apply`, { mode: 'patch_minor' }), 409, /major/);
    failure(await api.post(`/api/store/updates/${appId}/apply`, { mode: 'sideways' }), 400, /mode/);
    failure(await api.post('/api/store/ignore-version', { appId: 'nope', version: '2.0.0' }), 400, /appId/);
    assert.deepEqual((await api.post('/api/store/ignore-version', { appId, version: '2.0.0' })).body, {
      success: true,
      data: null,
    });
    assert.deepEqual(okData(await api.get('/api/store/updates')), []);
    publishWatcher('2.0.1');
    await api.post('/api/store/revalidate');
    const again = okData<UpdateItem[]>(await api.get('/api/store/updates'));
    assert.deepEqual(
      again.map((u) => [u.latestVersion, u.severity]),
      [['2.0.1', 'major']],
    );
  });

  it('check-now applies patch and minor updates silently for apps set to auto', async () => {
    okData(await api.post(`/api/apps/${appId}/upgrade-strategy`, { strategy: 'auto' }));
    const pending = okData<UpdateItem[]>(await api.post('/api/store/updates/check-now'));
    assert.deepEqual(
      pending.map((u) => [u.latestVersion, u.strategy]),
      [['2.0.1', 'auto']],
      'a major one waits',
    );
    okData(await api.post(`/api/store/updates/${appId}/apply`, { mode: 'major' }));
    publishWatcher('2.0.2');
    assert.deepEqual(okData(await api.post('/api/store/updates/check-now')), []);
    const app = okData<AppRecord>(await api.get(`/api/apps/${appId}`));
    assert.deepEqual([app.spec.version, app.spec.system_prompt], ['2.0.2', 'My own prompt.']);
  });

  it('capabilities, taxonomy, command names and publishing without a dhp-v2 source', async () => {
    assert.deepEqual(okData(await api.get('/api/store/capabilities')), {
      catalog: true,
      installs: false,
      publish: false,
      reviewWorkflow: false,
      identity: 'none',
    });
    const taxonomy = okData<{ default: Array<{ id: string }> }>(await api.get('/api/store/category-taxonomy'));
    assert.ok(taxonomy.default.some((c) => c.id === 'other'));
    assert.equal(okData(await api.get('/api/skills/command-name?name=Daily%20Report%21')), 'daily-report');
    assert.equal(okData(await api.get('/api/skills/command-name')), '');
    failure(await api.get('/api/store/my-publications'), 403, /dhp-v2/, 'PUBLISHING_UNAVAILABLE');
    failure(await api.post('/api/store/unpublish', { slug: 'tester/x' }), 403, /dhp-v2/, 'PUBLISHING_UNAVAILABLE');
    assert.deepEqual(okData(await api.post('/api/store/publish/preview', { appId, name: 'Price Pal' })), {
      slug: 'tester/price-pal',
      localVersion: '2.0.2',
      storeVersion: null,
    });
    assert.deepEqual(okData(await api.post('/api/store/publish/find-app', { slug: 'synth-watcher' })), { appId });
    assert.deepEqual(okData(await api.post('/api/store/publish/find-app', { slug: 'nobody/none' })), { appId: null });
  });
});
