import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgentHarness, toolResults } from '#testing/agent-harness.js';
import { textReply } from '#testing/scripted-model-server.js';

/**
 * What a turn can reach through the assistant's own API (the ServiceApi tool, relayed by the
 * assistant's listener): no space folder outside the operator's roots, no stored model key
 * sent to a new address, no internal service read through an inline MCP test, no space
 * nested inside another one's folder.
 */

const STORED_KEY = 'sk-stored-key-never-to-travel-8d1e';
const ADMIN_BODY = 'INTERNAL-ADMIN-REPLY-5a9c';

/** An HTTP service on loopback that records what reaches it and answers every request with `body`. */
class Recorder {
  readonly seen: Array<{ url: string; authorization: string | undefined; apiKey: string | undefined }> = [];
  private constructor(private readonly server: http.Server) {}

  static async start(status: number, body: string): Promise<Recorder> {
    const server = http.createServer();
    const recorder = new Recorder(server);
    server.on('request', (req, res) => {
      recorder.seen.push({
        url: req.url ?? '',
        authorization: req.headers.authorization,
        apiKey: req.headers['x-api-key'] as string | undefined,
      });
      req.resume();
      res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return recorder;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Whether the stored key reached it in any header. */
  get gotKey(): boolean {
    return this.seen.some((s) => `${s.authorization ?? ''} ${s.apiKey ?? ''}`.includes(STORED_KEY));
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}

const call = (method: string, path: string, body?: unknown) => ({
  steps: [{ toolCall: { name: 'ServiceApi', input: { method, path, ...(body === undefined ? {} : { body }) } } }],
});

describe("what a turn can reach through the assistant's API (no operator settings)", () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let space: { id: string; path: string };
  let outside: string;
  let admin: Recorder;
  let attacker: Recorder;
  let keyed: string;

  /** One turn of the assistant making `calls`, answering each call's tool result. */
  const relayed = async (...calls: Array<ReturnType<typeof call>>) => {
    h.model.enqueue(...calls, textReply('done'));
    return toolResults(await h.chat(space.id, 'operate the service'));
  };

  before(async () => {
    await h.start();
    okData(await api.post('/api/config', { assistant: { serviceApi: true } }));
    space = okData(await api.post('/api/spaces', { name: 'Turn Space' }));
    outside = mkdtempSync(join(tmpdir(), 'svc-reach-outside-'));
    writeFileSync(join(outside, 'private.txt'), 'not the turn space');
    admin = await Recorder.start(404, ADMIN_BODY);
    attacker = await Recorder.start(200, '{}');
    const legit = await Recorder.start(200, '{}');
    const legitUrl = legit.url;
    await legit.close(); // a stored address that is not the attacker's
    keyed = okData<{ sources: Array<{ id: string; name: string }> }>(
      await api.post('/api/ai-sources/sources', {
        name: 'Keyed',
        provider: 'openai',
        apiUrl: legitUrl,
        apiKey: STORED_KEY,
        model: 'gpt-test',
      }),
    ).sources.find((s) => s.name === 'Keyed')!.id;
  });
  after(async () => {
    await h.stop();
    await admin?.close();
    await attacker?.close();
    rmSync(outside, { recursive: true, force: true });
  });
  beforeEach(() => h.model.reset());

  it('a relayed POST /api/spaces {customPath} outside the data folder is refused with 403 naming the field', async () => {
    const [created] = await relayed(call('POST', '/api/spaces', { name: 'Escape', customPath: outside }));
    assert.equal(created!.isError, true, created!.result);
    assert.match(created!.result, /^HTTP 403\n/);
    assert.match(created!.result, /customPath/);
    assert.match(created!.result, /SVC_SPACE_ROOTS/);
    const names = okData<Array<{ name: string }>>(await api.get('/api/spaces')).map((s) => s.name);
    assert.ok(!names.includes('Escape'), 'no space was created');
  });

  it('a relayed PUT working-dir to a host folder is refused with 403 naming the field', async () => {
    const [moved] = await relayed(call('PUT', `/api/spaces/${space.id}/working-dir`, { workingDir: outside }));
    assert.equal(moved!.isError, true, moved!.result);
    assert.match(moved!.result, /^HTTP 403\n/);
    assert.match(moved!.result, /workingDir/);
    assert.equal(okData<{ path: string }>(await api.get(`/api/spaces/${space.id}`)).path, space.path);
  });

  it('a relayed import-dhpkg reads packages inside a space folder only', async () => {
    const spec = (name: string) =>
      `spec_version: "1"\nname: ${name}\nversion: "1.0.0"\nauthor: t\ndescription: d\ntype: automation\nsystem_prompt: Help.\n`;
    mkdirSync(join(outside, 'pkg'), { recursive: true });
    writeFileSync(join(outside, 'pkg', 'spec.yaml'), spec('host-package'));
    mkdirSync(join(space.path, 'pkg'), { recursive: true });
    writeFileSync(join(space.path, 'pkg', 'spec.yaml'), spec('space-package'));
    const [host, own] = await relayed(
      call('POST', '/api/store/import-dhpkg', { filePath: join(outside, 'pkg'), spaceId: space.id }),
      call('POST', '/api/store/import-dhpkg', { filePath: join(space.path, 'pkg'), spaceId: space.id }),
    );
    assert.match(host!.result, /^HTTP 403\n.*filePath/s, host!.result);
    assert.match(own!.result, /^HTTP 200\n/, own!.result);
    const names = okData<Array<{ spec: { name: string } }>>(await api.get('/api/apps')).map((a) => a.spec.name);
    assert.ok(!names.includes('host-package'), 'nothing was read from the host folder');
    assert.ok(names.includes('space-package'));
  });

  it('a direct call (the password holder) may still use a folder outside the data folder by default', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-reach-direct-'));
    try {
      const own = okData<{ id: string; path: string }>(
        await api.post('/api/spaces', { name: 'Direct', customPath: folder }),
      );
      okData(await api.delete(`/api/spaces/${own.id}`));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('test-model-source never sends a stored key to a new address; a new address needs the key again', async () => {
    const [tested] = await relayed(
      call('POST', '/api/agent/test-model-source', { modelSourceId: keyed, source: { apiUrl: attacker.url } }),
    );
    assert.equal(attacker.gotKey, false, 'the stored key reached the new address');
    assert.match(tested!.result, /^HTTP 400\n/, tested!.result);
    assert.match(tested!.result, /apiKey/);
    // The assistant tests stored sources at their stored addresses only: no address of its choosing, key or not.
    const [keyGiven, unsaved, storedOnly] = await relayed(
      call('POST', '/api/agent/test-model-source', {
        modelSourceId: keyed,
        source: { apiUrl: `${admin.url}/admin`, apiKey: 'sk-any' },
      }),
      call('POST', '/api/agent/test-model-source', {
        source: { provider: 'openai', apiUrl: `${admin.url}/admin`, apiKey: 'sk-any', model: 'm' },
      }),
      call('POST', '/api/agent/test-model-source', { modelSourceId: keyed }),
    );
    assert.match(keyGiven!.result, /^HTTP 403\n.*source\.apiUrl/s, keyGiven!.result);
    assert.match(unsaved!.result, /^HTTP 403\n/, unsaved!.result);
    assert.match(storedOnly!.result, /^HTTP 200\n/, storedOnly!.result);
    assert.equal(admin.seen.length, 0, 'nothing reached the internal service');
    // The same over the main API, and with "***" standing for the stored key.
    const direct = await api.post('/api/agent/test-model-source', {
      modelSourceId: keyed,
      source: { apiUrl: `${attacker.url}/v1`, apiKey: '***' },
    });
    assert.equal(direct.status, 400, JSON.stringify(direct.body));
    assert.match(direct.body.error, /source\.apiKey/);
    assert.equal(attacker.gotKey, false);
    // With the key sent again, the new address is tested with that key.
    const again = await api.post('/api/agent/test-model-source', {
      modelSourceId: keyed,
      source: { apiUrl: attacker.url, apiKey: 'sk-given-again' },
    });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.ok(attacker.seen.some((s) => `${s.authorization}`.includes('sk-given-again')));
    assert.equal(attacker.gotKey, false);
  });

  it('PUT /api/ai-sources/sources/:id and POST /api/config keep a stored key only at its address', async () => {
    const moved = await api.post('/api/config', {
      aiSources: { sources: [{ id: keyed, name: 'Keyed', provider: 'openai', apiUrl: attacker.url, model: 'm' }] },
    });
    assert.equal(moved.status, 400, JSON.stringify(moved.body));
    assert.match(moved.body.error, /aiSources\.sources\[0\]\.apiKey/);
    const put = await api.put(`/api/ai-sources/sources/${keyed}`, { apiUrl: attacker.url, apiKey: '***' });
    assert.equal(put.status, 400, JSON.stringify(put.body));
    assert.match(put.body.error, /apiKey/);
    // Changing other fields keeps the key.
    const renamed = await api.put(`/api/ai-sources/sources/${keyed}`, { name: 'Keyed again' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    // Nothing sent the key anywhere: a chat on it would go to the stored address.
    assert.equal(attacker.gotKey, false);
    // Any configured secret: an MCP server's header kept as "***" while its url changes.
    const mcp = { url: `${admin.url}/mcp`, headers: { Authorization: `Bearer ${STORED_KEY}` } };
    okData(await api.post('/api/config', { mcpServers: { remote: mcp } }));
    const repointed = await api.post('/api/config', {
      mcpServers: { remote: { url: `${attacker.url}/mcp`, headers: { Authorization: '***' } } },
    });
    assert.equal(repointed.status, 400, JSON.stringify(repointed.body));
    assert.match(
      repointed.body.error,
      /^mcpServers\.remote\.headers\.Authorization must be sent again: mcpServers\.remote\.url/,
    );
    // Sent back unchanged it is no change; with the secret sent again the new address is taken.
    okData(await api.post('/api/config', { mcpServers: { remote: { ...mcp, headers: { Authorization: '***' } } } }));
    okData(
      await api.post('/api/config', {
        mcpServers: { remote: { url: `${attacker.url}/mcp`, headers: { Authorization: 'Bearer new' } } },
      }),
    );
    okData(await api.post('/api/config', { mcpServers: null }));
  });

  it('test-mcp with an inline HTTP server on an internal address is refused and never echoes its body', async () => {
    const target = `${admin.url}/admin`;
    const [tested] = await relayed(
      call('POST', '/api/agent/test-mcp', { servers: { probe: { type: 'http', url: target } } }),
    );
    assert.ok(!tested!.result.includes(ADMIN_BODY), tested!.result);
    const direct = await api.post('/api/agent/test-mcp', { servers: { probe: { type: 'http', url: target } } });
    assert.ok(!JSON.stringify(direct.body).includes(ADMIN_BODY), JSON.stringify(direct.body));
    assert.equal(direct.status, 200, JSON.stringify(direct.body));
    const [probe] = direct.body.data as Array<{ name: string; status: string; error: string }>;
    assert.equal(probe!.status, 'failed');
    assert.match(probe!.error, /loopback, private or link-local/);
    assert.match(probe!.error, /SVC_MCP_ALLOW/);
    assert.equal(admin.seen.length, 0, 'nothing reached the internal service');
  });

  it('a customPath inside or containing another space folder is refused (deleting one would delete the other)', async () => {
    const base = mkdtempSync(join(tmpdir(), 'svc-reach-nested-'));
    try {
      const outer = okData<{ id: string; path: string }>(
        await api.post('/api/spaces', { name: 'Outer', customPath: join(base, 'outer') }),
      );
      const inner = await api.post('/api/spaces', { name: 'Inner', customPath: join(base, 'outer', 'inner') });
      assert.equal(inner.status, 409, JSON.stringify(inner.body));
      assert.match(inner.body.error, /^customPath: .*another space/);
      const around = await api.post('/api/spaces', { name: 'Around', customPath: base });
      assert.equal(around.status, 409, JSON.stringify(around.body));
      assert.match(around.body.error, /^customPath: /);
      mkdirSync(join(outer.path, 'sub'));
      const plain = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Plain' }));
      const moved = await api.put(`/api/spaces/${plain.id}/working-dir`, { workingDir: join(outer.path, 'sub') });
      assert.equal(moved.status, 409, JSON.stringify(moved.body));
      assert.match(moved.body.error, /^workingDir: /);
      const names = okData<Array<{ name: string }>>(await api.get('/api/spaces')).map((s) => s.name);
      assert.ok(!names.includes('Inner') && !names.includes('Around'));
      okData(await api.delete(`/api/spaces/${outer.id}`));
      assert.ok(!existsSync(outer.path));
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('what the operator widens: SVC_SPACE_ROOTS and SVC_MCP_ALLOW', () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let roots: string;
  let elsewhere: string;
  let admin: Recorder;
  let space: { id: string; path: string };

  before(async () => {
    roots = mkdtempSync(join(tmpdir(), 'svc-reach-roots-'));
    elsewhere = mkdtempSync(join(tmpdir(), 'svc-reach-elsewhere-'));
    admin = await Recorder.start(404, ADMIN_BODY);
    await h.start({ SVC_SPACE_ROOTS: roots, SVC_MCP_ALLOW: '127.0.0.1' });
    okData(await api.post('/api/config', { assistant: { serviceApi: true } }));
    space = okData(await api.post('/api/spaces', { name: 'Rooted' }));
  });
  after(async () => {
    await h.stop();
    await admin?.close();
    rmSync(roots, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it('customPath must lie under a root, for direct and relayed calls; inside a root both work', async () => {
    const direct = await api.post('/api/spaces', { name: 'Out', customPath: elsewhere });
    assert.equal(direct.status, 403, JSON.stringify(direct.body));
    assert.match(direct.body.error, /^customPath: .*SVC_SPACE_ROOTS/);
    okData(await api.post('/api/spaces', { name: 'In', customPath: join(roots, 'direct') }));
    h.model.enqueue(
      call('POST', '/api/spaces', { name: 'Relayed In', customPath: join(roots, 'relayed') }),
      call('POST', '/api/spaces', { name: 'Relayed Out', customPath: elsewhere }),
      textReply('done'),
    );
    const [inside, out] = toolResults(await h.chat(space.id, 'make spaces'));
    assert.match(inside!.result, /^HTTP 200\n/, inside!.result);
    assert.match(out!.result, /^HTTP 403\n/, out!.result);
  });

  it('an allowed address is tested, and a failure names the HTTP status, never the body', async () => {
    const res = await api.post('/api/agent/test-mcp', {
      servers: { probe: { type: 'http', url: `${admin.url}/admin` } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [probe] = res.body.data as Array<{ status: string; error: string }>;
    assert.equal(probe!.status, 'failed');
    assert.ok(admin.seen.length > 0, 'the allowed address was reached');
    assert.ok(!probe!.error.includes(ADMIN_BODY), probe!.error);
    assert.match(probe!.error, /404/);
  });
});
