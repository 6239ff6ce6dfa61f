import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient, failure, okData } from '#testing/api-client.js';
import { CatalogServer } from '#testing/catalog-server.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import {
  CLAUDE_SKILLS_MANIFEST,
  CLAUDE_SKILLS_SHARD_0,
  CSV_CLEANER_SKILL_MD,
} from './fixtures/public-catalogs/claude-skills.js';
import { MCP_REGISTRY_PAGE_1, MCP_REGISTRY_PAGE_2 } from './fixtures/public-catalogs/mcp-registry.js';
import { SKILLHUB_PAGE_1, SKILLHUB_PAGE_2, WEEKLY_REPORT_SKILL_MD } from './fixtures/public-catalogs/skillhub.js';
import { SMITHERY_PAGE_1 } from './fixtures/public-catalogs/smithery.js';

interface Listing {
  slug: string;
  name: string;
  version: string;
  type: string;
  author: string;
  registryId: string;
  tags: string[];
}
interface QueryResult {
  items: Listing[];
  total: number;
  sources: Array<{ registryId: string; status: string; error?: string; skipped?: number }>;
}
interface Source {
  id: string;
  url: string;
  isDefault: boolean;
  enabled: boolean;
  sourceType: string;
}
interface AppRecord {
  id: string;
  spaceId: string | null;
  spec: { type: string; name: string; version: string; system_prompt?: string; mcp_server?: Record<string, unknown> };
}

/**
 * The built-in public catalogs (`mcp-registry`, `smithery`, `claude-skills`, `skillhub`), each
 * served on loopback from answers recorded in the services' real formats
 * (test/fixtures/public-catalogs): their listings become Store entries on read, and an entry
 * installs an `mcp` app (HTTP endpoint, or a local command under the MCP policy) or a `skill`.
 */
describe(`store public catalogs (${testMode()})`, () => {
  let host: CatalogServer;
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;
  let spaceId: string;
  let spacePath: string;
  const authorizations: Array<string | undefined> = [];

  const query = async (body: Record<string, unknown>) =>
    okData<QueryResult>(await api.post('/api/store/query', { pageSize: 100, ...body }));

  before(async () => {
    host = await CatalogServer.start();
    host.route('mcp/v0/servers', (req, res) => {
      const cursor = new URL(req.url ?? '/', 'http://x').searchParams.get('cursor');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          cursor === 'io.github.example-org/sqlite-tools:0.4.2' ? MCP_REGISTRY_PAGE_2 : MCP_REGISTRY_PAGE_1,
        ),
      );
    });
    host.route('smithery/servers', (req, res) => {
      authorizations.push(req.headers.authorization);
      if (req.headers.authorization !== 'Bearer test-smithery-key') {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"Unauthorized"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SMITHERY_PAGE_1));
    });
    host.set('cs/search-index-manifest.json', CLAUDE_SKILLS_MANIFEST);
    host.set('cs/search-shards/part-000.json', CLAUDE_SKILLS_SHARD_0);
    host.set('raw/example/agent-skills/HEAD/skills/csv-cleaner/SKILL.md', CSV_CLEANER_SKILL_MD);
    host.route('skillhub/api/v1/skills', (req, res) => {
      const cursor = new URL(req.url ?? '/', 'http://x').searchParams.get('cursor');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(cursor === 'cursor-2' ? SKILLHUB_PAGE_2 : SKILLHUB_PAGE_1));
    });
    host.route('skillhub/api/v1/skills/weekly-report/file', (req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').searchParams.get('path');
      if (path !== 'SKILL.md') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/markdown' }).end(WEEKLY_REPORT_SKILL_MD);
    });
    server = await startServer({
      env: {
        SVC_STORE_CATALOGS: [
          `mcp-registry=${host.url}/mcp`,
          `smithery=${host.url}/smithery`,
          `claude-skills=${host.url}/cs`,
          `skillhub=${host.url}/skillhub`,
        ].join(','),
      },
    });
    api = apiClient(server);
    ({ id: spaceId, path: spacePath } = okData<{ id: string; path: string }>(
      await api.post('/api/spaces', { name: 'Public catalogs' }),
    ));
  });
  after(async () => {
    await server?.stop();
    await host?.stop();
  });

  it('seeds the four public catalogs as built-in sources of their protocol, togglable, not deletable', async () => {
    const sources = okData<Source[]>(await api.get('/api/store/registries'));
    for (const protocol of ['mcp-registry', 'smithery', 'claude-skills', 'skillhub']) {
      const s = sources.find((x) => x.id === protocol);
      assert.ok(s, protocol);
      assert.deepEqual([s.sourceType, s.isDefault, s.enabled], [protocol, true, true]);
    }
    const del = await api.del('/api/store/registries/mcp-registry');
    assert.deepEqual([del.status, del.body.success], [200, false]);
  });

  it('mcp-registry: the latest version of each server, over every page; servers with nothing to run are skipped', async () => {
    const result = await query({ type: 'mcp' });
    const mine = result.items.filter((i) => i.registryId === 'mcp-registry');
    assert.deepEqual(mine.map((i) => i.slug).sort(), [
      'com-example/weather',
      'io-github-example-org/sqlite-tools',
      'io-github-example/pdf-reader',
    ]);
    const sqlite = mine.find((i) => i.slug === 'io-github-example-org/sqlite-tools')!;
    assert.deepEqual([sqlite.version, sqlite.type, sqlite.author], ['0.4.2', 'mcp', 'io.github.example-org']);
    const status = result.sources.find((s) => s.registryId === 'mcp-registry')!;
    assert.deepEqual([status.status, status.skipped], ['ok', 1], 'the SSE-only server is skipped and counted');
    const weather = okData<{ entry: Listing; spec: AppRecord['spec'] & { config_schema: Array<{ key: string }> } }>(
      await api.get(`/api/store/apps/${encodeURIComponent('com-example/weather')}`),
    );
    assert.deepEqual(weather.spec.mcp_server, {
      type: 'http',
      url: 'https://mcp.weather.example.com/mcp',
      headers: { 'X-API-Key': '{{config.x_api_key}}' },
    });
    assert.deepEqual(
      weather.spec.config_schema.map((f) => f.key),
      ['x_api_key'],
    );
    assert.deepEqual(okData(await api.get('/api/store/app-document?slug=com-example/weather')), { content: null });
  });

  it('installs an HTTP MCP server as an mcp app; a local command is refused by the MCP policy, nothing written', async () => {
    const { appId } = okData<{ appId: string }>(
      await api.post('/api/store/install', {
        slug: 'com-example/weather',
        spaceId,
        userConfig: { x_api_key: 'k-123' },
      }),
    );
    const app = okData<AppRecord>(await api.get(`/api/apps/${appId}`));
    assert.deepEqual(
      [app.spec.type, app.spec.name, app.spec.mcp_server?.url],
      ['mcp', 'Weather', 'https://mcp.weather.example.com/mcp'],
    );
    const before = okData<AppRecord[]>(await api.get('/api/apps')).length;
    failure(
      await api.post('/api/store/install', { slug: 'io-github-example-org/sqlite-tools', spaceId }),
      403,
      /command/i,
      'MCP_COMMAND_BLOCKED',
    );
    failure(await api.post('/api/store/install', { slug: 'io-github-example/pdf-reader', spaceId }), 403, /command/i);
    assert.equal(okData<AppRecord[]>(await api.get('/api/apps')).length, before);
    const detail = okData<{ spec: AppRecord['spec'] }>(
      await api.get(`/api/store/apps/${encodeURIComponent('io-github-example-org/sqlite-tools')}`),
    );
    assert.deepEqual(detail.spec.mcp_server, {
      command: 'npx',
      args: ['-y', '@example-org/sqlite-tools-mcp@0.4.2'],
      env: { SQLITE_DB_PATH: '{{config.sqlite_db_path}}' },
    });
  });

  it('smithery: without an API key the source fails alone; with one (write-only) it lists and installs', async () => {
    let result = await query({});
    const failing = result.sources.find((s) => s.registryId === 'smithery')!;
    assert.equal(failing.status, 'error');
    assert.match(failing.error ?? '', /API key/);
    assert.ok(
      result.items.some((i) => i.registryId === 'mcp-registry'),
      'other sources unaffected',
    );
    const patch = await api.patch('/api/store/registries/smithery/adapter-config', { apiKey: 'test-smithery-key' });
    assert.deepEqual(patch.body, { success: true });
    await api.post('/api/store/refresh', {});
    result = await query({ search: 'web search' });
    const web = result.items.find((i) => i.registryId === 'smithery' && i.slug === 'example/web-search');
    assert.ok(web, JSON.stringify(result.items.map((i) => i.slug)));
    assert.ok(web.tags.includes('verified'));
    assert.ok(authorizations.includes('Bearer test-smithery-key'), 'the key travels as a bearer token');
    const listed = okData<Array<Source & { adapterConfig?: unknown }>>(await api.get('/api/store/registries'));
    assert.ok(listed.find((s) => s.id === 'smithery'));
    const { appId } = okData<{ appId: string }>(
      await api.post('/api/store/install', {
        slug: 'example/web-search',
        spaceId: null,
        userConfig: { smithery_api_key: 'user-key' },
      }),
    );
    const app = okData<AppRecord>(await api.get(`/api/apps/${appId}`));
    assert.deepEqual(app.spec.mcp_server, {
      type: 'http',
      url: 'https://server.smithery.ai/@example/web-search/mcp?api_key={{config.smithery_api_key}}',
    });
    assert.equal(app.spaceId, null, 'a deliberate global install of an MCP app');
    failure(await api.post('/api/store/install', { slug: 'notes-local', spaceId }), 403, /command/i);
  });

  it('claude-skills: index shards become skill entries; install writes the SKILL.md read from the repository', async () => {
    const result = await query({ type: 'skill' });
    const mine = result.items.filter((i) => i.registryId === 'claude-skills');
    assert.deepEqual(mine.map((i) => i.slug).sort(), ['example/csv-cleaner', 'example/release-notes']);
    assert.equal(result.sources.find((s) => s.registryId === 'claude-skills')!.skipped, 1);
    // Content from another address must be public; the catalog's own origin (operator-set) may be internal.
    await api.patch('/api/store/registries/claude-skills/adapter-config', { contentBase: `${host.url}/raw` });
    const { appId } = okData<{ appId: string }>(
      await api.post('/api/store/install', { slug: 'example/csv-cleaner', spaceId }),
    );
    const app = okData<AppRecord>(await api.get(`/api/apps/${appId}`));
    assert.deepEqual([app.spec.type, app.spec.name], ['skill', 'csv-cleaner']);
    assert.match(app.spec.system_prompt ?? '', /Trim whitespace/);
    const file = join(spacePath, '.claude', 'skills', 'csv-cleaner', 'SKILL.md');
    assert.ok(existsSync(file));
    assert.equal(readFileSync(file, 'utf8'), CSV_CLEANER_SKILL_MD);
    // A missing SKILL.md fails the install clearly, nothing written.
    const before = okData<AppRecord[]>(await api.get('/api/apps')).length;
    const missing = await api.post('/api/store/install', { slug: 'example/release-notes', spaceId });
    assert.equal(missing.body.success, false);
    assert.match(missing.body.error, /SKILL\.md/);
    assert.equal(okData<AppRecord[]>(await api.get('/api/apps')).length, before);
  });

  it('claude-skills: a content address on a private network is refused (SSRF), even for a built-in catalog', async () => {
    await api.patch('/api/store/registries/claude-skills/adapter-config', { contentBase: 'http://10.0.0.1/raw' });
    const res = await api.post('/api/store/install', { slug: 'example/release-notes', spaceId });
    assert.equal(res.body.success, false);
    assert.match(res.body.error, /refused|private|loopback/);
    await api.patch('/api/store/registries/claude-skills/adapter-config', { contentBase: null });
  });

  it('skillhub: every page of the skill list; install reads SKILL.md through the file API', async () => {
    const result = await query({ type: 'skill', search: 'report' });
    const weekly = result.items.find((i) => i.registryId === 'skillhub' && i.slug === 'weekly-report');
    assert.ok(weekly);
    assert.equal(weekly.version, '1.3.0');
    const all = await query({ type: 'skill' });
    assert.ok(
      all.items.some((i) => i.slug === 'meeting-minutes'),
      'the second page is read',
    );
    const { appId } = okData<{ appId: string }>(
      await api.post('/api/store/install', { slug: 'weekly-report', spaceId }),
    );
    const app = okData<AppRecord>(await api.get(`/api/apps/${appId}`));
    assert.equal(app.spec.type, 'skill');
    assert.match(app.spec.system_prompt ?? '', /Done, Next and Risks/);
  });

  it('a public catalog turned off leaves the query; turned on, it comes back', async () => {
    assert.deepEqual((await api.post('/api/store/registries/skillhub/toggle', { enabled: false })).body, {
      success: true,
    });
    let all = await query({ type: 'skill' });
    assert.ok(!all.items.some((i) => i.registryId === 'skillhub'));
    await api.post('/api/store/registries/skillhub/toggle', { enabled: true });
    all = await query({ type: 'skill' });
    assert.ok(all.items.some((i) => i.registryId === 'skillhub'));
  });
});
