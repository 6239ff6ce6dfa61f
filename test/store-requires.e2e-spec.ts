import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient, failure, okData } from '#testing/api-client.js';
import { CatalogServer, indexDocument, syntheticEntry, syntheticSpec } from '#testing/catalog-server.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';

interface AppRecord {
  id: string;
  spaceId: string | null;
  spec: { name: string; type: string; store?: { slug?: string } };
}

const tool = (slug: string, mcp_server: Record<string, unknown>) => ({
  entry: syntheticEntry(slug, '1.0.0', { type: 'mcp' }),
  spec: JSON.stringify({
    spec_version: '1',
    name: slug,
    version: '1.0.0',
    author: 'tester',
    description: `The ${slug} server`,
    type: 'mcp',
    mcp_server,
    store: { slug },
  }),
});

/**
 * Installing an entry whose `requires.skills` / `requires.mcps` are not bundled: they are
 * fetched from the enabled sources and installed with it, in the same scope; one found nowhere,
 * or refused by the MCP policy, fails the install naming it, with nothing written.
 */
describe(`store requirements installed with an item (${testMode()})`, () => {
  let host: CatalogServer;
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;
  let spaceId: string;
  let spacePath: string;
  const apps = async () => okData<AppRecord[]>(await api.get('/api/apps'));

  before(async () => {
    host = await CatalogServer.start();
    const helper = {
      entry: syntheticEntry('helper-skill', '1.0.0', { type: 'skill' }),
      spec: JSON.stringify({
        spec_version: '1',
        name: 'helper-skill',
        version: '1.0.0',
        author: 'tester',
        description: 'Helps.',
        type: 'skill',
        system_prompt: 'Help with the work.',
        skill_files: ['SKILL.md', 'notes.txt'],
        store: { slug: 'helper-skill' },
      }),
    };
    const httpTool = tool('http-tool', { type: 'http', url: 'https://mcp.example.com/mcp' });
    const localTool = tool('local-tool', { command: 'npx', args: ['-y', 'local-tool-mcp'] });
    const needing = (slug: string, requires: Record<string, unknown>) => ({
      entry: syntheticEntry(slug, '1.0.0'),
      spec: syntheticSpec(slug, '1.0.0', { requires }),
    });
    const items = {
      'helper-skill': helper,
      'http-tool': httpTool,
      'local-tool': localTool,
      'needs-skill': needing('needs-skill', { skills: [{ id: 'helper-skill', reason: 'writes notes' }] }),
      'needs-mcp': needing('needs-mcp', { mcps: [{ id: 'http-tool' }, { id: 'ai-browser' }] }),
      'needs-skill-too': needing('needs-skill-too', { skills: ['helper-skill'] }),
      'needs-missing': needing('needs-missing', { skills: ['helper-skill', 'nowhere-skill'] }),
      'needs-local': needing('needs-local', { skills: ['helper-skill'], mcps: [{ id: 'local-tool' }] }),
    };
    host.set('index.json', indexDocument(Object.values(items).map((i) => i.entry)));
    for (const [slug, item] of Object.entries(items)) host.set(`items/${slug}/spec.yaml`, item.spec);
    host.set('items/helper-skill/files/SKILL.md', '---\nname: helper-skill\ndescription: Helps.\n---\n\nHelp.\n');
    host.set('items/helper-skill/files/notes.txt', 'notes');
    server = await startServer({ env: { SVC_STORE_SOURCES: host.url } });
    api = apiClient(server);
    ({ id: spaceId, path: spacePath } = okData<{ id: string; path: string }>(
      await api.post('/api/spaces', { name: 'Requires' }),
    ));
  });
  after(async () => {
    await server?.stop();
    await host?.stop();
  });

  it('a required skill found nowhere fails the install naming it; nothing is written', async () => {
    failure(
      await api.post('/api/store/install', { slug: 'needs-missing', spaceId }),
      404,
      /skill "nowhere-skill".*nothing was installed/,
    );
    assert.deepEqual(await apps(), []);
    assert.ok(!existsSync(join(spacePath, '.claude', 'skills', 'helper-skill')));
  });

  it('a required MCP server the MCP policy refuses fails the install; the skill installed for it goes again', async () => {
    failure(
      await api.post('/api/store/install', { slug: 'needs-local', spaceId }),
      403,
      /command/i,
      'MCP_COMMAND_BLOCKED',
    );
    assert.deepEqual(await apps(), []);
    assert.ok(!existsSync(join(spacePath, '.claude', 'skills', 'helper-skill')));
  });

  it('a required skill comes from the source and installs with the item, in the same workspace', async () => {
    const { appId } = okData<{ appId: string }>(await api.post('/api/store/install', { slug: 'needs-skill', spaceId }));
    const all = await apps();
    assert.deepEqual(all.map((a) => a.spec.store?.slug).sort(), ['helper-skill', 'needs-skill']);
    assert.ok(all.every((a) => a.spaceId === spaceId));
    assert.ok(all.some((a) => a.id === appId));
    assert.equal(readFileSync(join(spacePath, '.claude', 'skills', 'helper-skill', 'notes.txt'), 'utf8'), 'notes');
    // Already there: installing another item that needs it installs no second copy.
    okData(await api.post('/api/store/install', { slug: 'needs-skill-too', spaceId }));
    assert.equal((await apps()).filter((a) => a.spec.store?.slug === 'helper-skill').length, 1);
  });

  it('a required MCP server comes from the source; a built-in one (ai-browser) needs nothing', async () => {
    okData(await api.post('/api/store/install', { slug: 'needs-mcp', spaceId }));
    const all = await apps();
    const tools = all.filter((a) => a.spec.type === 'mcp');
    assert.deepEqual(
      tools.map((a) => a.spec.store?.slug),
      ['http-tool'],
    );
    // A second item needing the same server finds it installed.
    const before = all.length;
    failure(await api.post('/api/store/install', { slug: 'needs-mcp', spaceId }), 409, /already installed/i);
    assert.equal((await apps()).length, before);
  });
});
