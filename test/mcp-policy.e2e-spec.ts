import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
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
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${server.password}`);
  const post = (p: string, body: object) => auth(request(server.url).post(p)).send(body);
  const stdio = { command: process.execPath, args: [MCP_STDIO_SERVER] };

  before(async () => {
    http = await HttpMcpServer.start();
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
    await http?.close();
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
    const apps = await auth(request(server.url).get('/api/apps'));
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
    const config = await auth(request(server.url).get('/api/config'));
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
});
