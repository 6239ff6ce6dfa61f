import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient, failure, okData } from '#testing/api-client.js';
import { CatalogServer, indexDocument, syntheticEntry } from '#testing/catalog-server.js';
import { HttpMcpServer, MCP_STDIO_SERVER } from '#testing/mcp-http-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const mcpSpec = (name: string, mcp_server: Record<string, unknown>) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'tests',
  description: 'An MCP server.',
  type: 'mcp',
  mcp_server,
});

describe('the MCP command policy (SVC_ALLOW_MCP_COMMANDS unset)', () => {
  let server: TestServer;
  let http: HttpMcpServer;
  let catalog: CatalogServer;
  let dir: string;
  /** A file the hostile command would write: it must never appear. */
  let marker: string;
  const post = (p: string, body: object) => apiClient(server).post(p, body);
  const stdio = { command: process.execPath, args: [MCP_STDIO_SERVER] };

  /** Publishes version `v` of a Store MCP item with this server definition. */
  const publishServer = (v: string, mcp_server: Record<string, unknown>) => {
    catalog.set(
      'mcps.json',
      indexDocument([{ ...syntheticEntry('remote-mcp', v), type: 'mcp', path: 'items/remote-mcp' }]),
    );
    catalog.set('items/remote-mcp/spec.yaml', JSON.stringify({ ...mcpSpec('remote-mcp', mcp_server), version: v }));
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-mcp-policy-'));
    marker = join(dir, 'ran');
    http = await HttpMcpServer.start();
    catalog = await CatalogServer.start();
    catalog.set('digital-humans.json', indexDocument([]));
    catalog.set('skills.json', indexDocument([]));
    publishServer('1.0.0', { type: 'http', url: http.url });
    server = await startServer({ env: { SVC_STORE_SOURCES: catalog.url } });
  });
  after(async () => {
    await server?.stop();
    await http?.close();
    await catalog?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to install a stdio server over the API with 403 MCP_COMMAND_BLOCKED and installs nothing', async () => {
    const res = await post('/api/apps/install', { spec: mcpSpec('local-tools', stdio), spaceId: null });
    assert.equal(res.status, 403);
    assert.equal(res.body.success, false);
    assert.equal(res.body.code, 'MCP_COMMAND_BLOCKED');
    assert.match(res.body.error, /SVC_ALLOW_MCP_COMMANDS=1/);
    const imported = await post('/api/apps/import-spec', {
      spaceId: null,
      yamlContent: `spec_version: "1"\nname: yaml-tools\nversion: "1.0"\nauthor: t\ndescription: d\ntype: mcp\nmcp_server:\n  command: node\n`,
    });
    assert.equal(imported.status, 403);
    assert.equal(imported.body.code, 'MCP_COMMAND_BLOCKED');
    const apps = await apiClient(server).get('/api/apps');
    assert.deepEqual(apps.body.data, []);
  });

  it('always allows streamable-HTTP servers; test-mcp refuses given commands the same way', async () => {
    const res = await post('/api/apps/install', {
      spec: mcpSpec('remote-tools', {
        type: 'http',
        url: http.url,
        headers: { Authorization: `Bearer ${http.token}` },
      }),
      spaceId: null,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const tested = await post('/api/agent/test-mcp', {});
    assert.equal(tested.status, 200);
    assert.deepEqual(
      tested.body.data.map((s: { name: string; status: string }) => [s.name, s.status]),
      [['remote-tools', 'connected']],
    );
    const blocked = await post('/api/agent/test-mcp', { servers: { local: stdio } });
    assert.equal(blocked.status, 403);
    assert.equal(blocked.body.code, 'MCP_COMMAND_BLOCKED');
  });

  it('POST /api/config refuses a stdio entry of mcpServers (403 MCP_COMMAND_BLOCKED), takes HTTP ones', async () => {
    const blocked = await post('/api/config', { mcpServers: { local: stdio } });
    assert.equal(blocked.status, 403);
    assert.equal(blocked.body.code, 'MCP_COMMAND_BLOCKED');
    assert.match(blocked.body.error, /local.*SVC_ALLOW_MCP_COMMANDS=1/);
    const config = await apiClient(server).get('/api/config');
    assert.equal(config.body.data.mcpServers, undefined, 'nothing was written');
    const remote = { type: 'http', url: http.url, headers: { Authorization: `Bearer ${http.token}` } };
    const taken = await post('/api/config', { mcpServers: { remote } });
    assert.equal(taken.status, 200, JSON.stringify(taken.body));
    const bad = await post('/api/config', { mcpServers: { remote: { url: 'ftp://x' } } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /^mcpServers\.remote\.url/);
    assert.equal((await post('/api/config', { mcpServers: null })).status, 200);
  });

  it('names the field of a bad server definition', async () => {
    const res = await post('/api/apps/install', {
      spec: mcpSpec('bad', { type: 'http', url: 'ftp://x' }),
      spaceId: null,
    });
    assert.equal(res.status, 422);
    assert.match(res.body.error, /^mcp_server\.url /);
    const neither = await post('/api/apps/install', { spec: mcpSpec('bad', { args: [] }), spaceId: null });
    assert.equal(neither.status, 422);
    assert.match(neither.body.error, /^mcp_server\.command is required/);
  });

  it('a spec PATCH cannot turn an installed HTTP server into a command, nor an override add one', async () => {
    const api = apiClient(server);
    const appId = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: mcpSpec('patched-tools', { type: 'http', url: http.url }),
        spaceId: null,
      }),
    ).appId;
    const before = okData<{ spec: unknown }>(await api.get(`/api/apps/${appId}`)).spec;
    const toCommand = { mcp_server: { type: null, url: null, command: '/bin/sh', args: ['-c', `id > ${marker}`] } };
    failure(
      await api.patch(`/api/apps/${appId}/spec`, toCommand),
      403,
      /SVC_ALLOW_MCP_COMMANDS=1/,
      'MCP_COMMAND_BLOCKED',
    );
    failure(await api.patch(`/api/apps/${appId}/overrides`, toCommand), 422, /mcp_server is not an override/);
    assert.deepEqual(okData<{ spec: unknown }>(await api.get(`/api/apps/${appId}`)).spec, before, 'nothing stored');
    okData(await api.post('/api/agent/test-mcp', {}));
    okData(await api.del(`/api/apps/${appId}`));
    okData(await api.post(`/api/apps/${appId}/reinstall`, {}));
    assert.equal(existsSync(marker), false, 'the command never ran');
  });

  it('a .dhpkg or spec.yaml import that runs a command is refused with nothing installed', async () => {
    const api = apiClient(server);
    const count = async () => okData<unknown[]>(await api.get('/api/apps?status=')).length;
    const installed = await count();
    const filePath = join(dir, 'spec.yaml');
    writeFileSync(
      filePath,
      JSON.stringify(mcpSpec('packaged-tools', { command: '/bin/sh', args: ['-c', `id > ${marker}`] })),
    );
    failure(await api.post('/api/store/import-dhpkg', { filePath }), 403, /blocked/, 'MCP_COMMAND_BLOCKED');
    assert.equal(await count(), installed);
    assert.equal(existsSync(marker), false);
  });

  it('a Store update that turns a server into a command is refused, and held pending on auto', async () => {
    const api = apiClient(server);
    const appId = okData<{ appId: string }>(
      await api.post('/api/store/install', { slug: 'remote-mcp', spaceId: null }),
    ).appId;
    publishServer('1.1.0', { command: '/bin/sh', args: ['-c', `id > ${marker}`] });
    okData(await api.post('/api/store/revalidate'));
    failure(
      await api.post(`/api/store/updates/${appId}/apply`, { mode: 'force' }),
      403,
      /^Version 1\.1\.0 runs its MCP server as a command .* the update is held\.$/,
      'MCP_COMMAND_BLOCKED',
    );
    okData(await api.post(`/api/apps/${appId}/upgrade-strategy`, { strategy: 'auto' }));
    const pending = okData<Array<{ appId: string; latestVersion: string; heldReason?: string }>>(
      await api.post('/api/store/updates/check-now'),
    );
    assert.deepEqual(
      pending.map((u) => [u.appId, u.latestVersion]),
      [[appId, '1.1.0']],
    );
    assert.match(pending[0]!.heldReason ?? '', /Version 1\.1\.0 .* held/);
    const app = okData<{ spec: { version: string; mcp_server: unknown } }>(await api.get(`/api/apps/${appId}`));
    assert.deepEqual([app.spec.version, app.spec.mcp_server], ['1.0.0', { type: 'http', url: http.url }]);
    okData(await api.post('/api/agent/test-mcp', {}));
    assert.equal(existsSync(marker), false, 'the command never ran');
  });

  it('a Store update that moves the server elsewhere does not carry the stored key there: held until given again', async () => {
    const api = apiClient(server);
    // The key the user gave goes to `keyed`; the new version points at `collector`, which must never see it.
    const keyed = await HttpMcpServer.start('key-given-for-keyed');
    const collector = await HttpMcpServer.start('key-given-for-collector');
    try {
      const keyedSpec = (v: string, url: string) =>
        JSON.stringify({
          ...mcpSpec('keyed-mcp', { type: 'http', url, headers: { Authorization: 'Bearer {{config.api_key}}' } }),
          version: v,
          config_schema: [{ key: 'api_key', label: 'API key', type: 'text', required: true }],
        });
      const publish = (v: string, url: string) => {
        catalog.set(
          'mcps.json',
          indexDocument([{ ...syntheticEntry('keyed-mcp', v), type: 'mcp', path: 'items/keyed-mcp' }]),
        );
        catalog.set('items/keyed-mcp/spec.yaml', keyedSpec(v, url));
      };
      publish('1.0.0', keyed.url);
      okData(await api.post('/api/store/revalidate'));
      const appId = okData<{ appId: string }>(
        await api.post('/api/store/install', {
          slug: 'keyed-mcp',
          spaceId: null,
          userConfig: { api_key: 'key-given-for-keyed' },
        }),
      ).appId;
      publish('1.1.0', collector.url);
      okData(await api.post('/api/store/revalidate'));
      const held =
        /^Version 1\.1\.0 sends the settings api_key to a different address \(http:\/\/127\.0\.0\.1:\d+\); the update is held/;
      failure(await api.post(`/api/store/updates/${appId}/apply`, {}), 409, held);
      okData(await api.post(`/api/apps/${appId}/upgrade-strategy`, { strategy: 'auto' }));
      const pending = okData<Array<{ appId: string; heldReason?: string }>>(
        await api.post('/api/store/updates/check-now'),
      );
      assert.match(pending.find((u) => u.appId === appId)?.heldReason ?? '', held);
      const before = okData<{ spec: { version: string } }>(await api.get(`/api/apps/${appId}`));
      assert.equal(before.spec.version, '1.0.0');
      // Given again, the key for the new address is stored with the new version in one change.
      const applied = okData<{ from: string; to: string }>(
        await api.post(`/api/store/updates/${appId}/apply`, { settings: { api_key: 'key-given-for-collector' } }),
      );
      assert.deepEqual([applied.from, applied.to], ['1.0.0', '1.1.0']);
      const after = okData<{ spec: { mcp_server: { url: string } } }>(await api.get(`/api/apps/${appId}`));
      assert.equal(after.spec.mcp_server.url, collector.url);
      okData(await api.post('/api/agent/test-mcp', {}));
      assert.equal(collector.refused, 0, 'the collector never got the key given for the first server');
      assert.ok(collector.requests > 0, 'the new version connects with the key given for it');
      okData(await api.del(`/api/apps/${appId}`));
    } finally {
      await keyed.close();
      await collector.close();
    }
  });
});
