import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient, okData } from '#testing/api-client.js';
import type { AISource, AISourcesConfig, AppConfiguration } from '#contracts/models.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

// The SVC_AI_* seed across restarts: test/model-sources-seed.e2e-spec.ts.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEYS = ['sk-ant-e2e-first-key', 'sk-e2e-second-key', 'ghp_e2e_token_value', 'sk-e2e-config-key'];

async function fails(
  res: request.Response | Promise<request.Response>,
  status: number,
  error: RegExp | string,
): Promise<void> {
  const r = await res;
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.success, false);
  if (typeof error === 'string') assert.deepEqual(r.body, { success: false, error });
  else assert.match(r.body.error, error);
}

/** No secret in clear anywhere in a body. */
function assertMasked(body: unknown): void {
  const text = JSON.stringify(body);
  for (const key of KEYS) assert.ok(!text.includes(key), `a secret leaked: ${key}`);
}

describe(`model sources over HTTP and WebSocket (${testMode()})`, () => {
  let server: TestServer;
  let socket: WsTestClient;
  const anthropic = {
    name: 'Claude',
    provider: 'anthropic',
    apiUrl: 'https://api.anthropic.com',
    apiKey: KEYS[0],
    model: 'claude-sonnet-4-5',
  };
  const openai = {
    name: 'Local',
    provider: 'openai',
    apiUrl: 'http://127.0.0.1:11434/v1',
    apiKey: KEYS[1],
    model: 'llama3',
  };

  before(async () => {
    // The config test stores a stdio entry of mcpServers, which needs the operator's allowance.
    server = await startServer({ env: { SVC_ALLOW_MCP_COMMANDS: '1' } });
    socket = await WsTestClient.signedIn(server.wsUrl, server.password);
  });
  /** Forgets every frame received so far, so the next `event()` is caused by what follows. */
  const drain = async (): Promise<void> => {
    await socket.roundTrip();
    socket.frames.length = 0;
  };
  after(async () => {
    socket?.close();
    await server?.stop();
  });

  it('starts with no sources; the routes need the access password', async () => {
    const config = okData<AppConfiguration>(await apiClient(server).get('/api/config'));
    assert.deepEqual(config.aiSources, { version: 2, currentId: null, sources: [] });
    assert.equal((await request(server.url).get('/api/config')).status, 401);
    assert.equal((await request(server.url).post('/api/ai-sources/sources').send(anthropic)).status, 401);
  });

  it('validates a new source, naming the field (400)', async () => {
    for (const field of ['name', 'provider', 'apiUrl', 'model']) {
      const body: Record<string, unknown> = { ...anthropic };
      delete body[field];
      await fails(apiClient(server).post('/api/ai-sources/sources', body), 400, new RegExp(`^${field} is required`));
    }
    await fails(
      apiClient(server).post('/api/ai-sources/sources', { ...anthropic, provider: 'gemini' }),
      400,
      /^provider must be one of/,
    );
    await fails(
      apiClient(server).post('/api/ai-sources/sources', { ...anthropic, apiUrl: 'file:///etc' }),
      400,
      /^apiUrl/,
    );
    await fails(
      apiClient(server).post('/api/ai-sources/sources', { ...anthropic, apiKey: 7 }),
      400,
      /^apiKey must be a string/,
    );
    await fails(
      apiClient(server).post('/api/ai-sources/sources', { ...anthropic, authType: 'oauth' }),
      400,
      /^authType/,
    );
    await fails(apiClient(server).post('/api/ai-sources/sources', [anthropic]), 400, /^body must be a JSON object/);
    assert.deepEqual(okData<AppConfiguration>(await apiClient(server).get('/api/config')).aiSources.sources, []);
  });

  let first: AISource;
  let second: AISource;

  it('adds sources: the first becomes current, keys are masked, a socket hears catalog-changed', async () => {
    const added = okData<AISourcesConfig>(await apiClient(server).post('/api/ai-sources/sources', anthropic));
    assertMasked(added);
    assert.equal(added.version, 2);
    assert.equal(added.sources.length, 1);
    first = added.sources[0]!;
    assert.match(first.id, UUID);
    assert.equal(added.currentId, first.id);
    assert.deepEqual(
      { ...first, createdAt: undefined, updatedAt: undefined },
      {
        id: first.id,
        name: 'Claude',
        provider: 'anthropic',
        authType: 'api-key',
        apiUrl: 'https://api.anthropic.com',
        apiKey: '***',
        model: 'claude-sonnet-4-5',
        availableModels: [{ id: 'claude-sonnet-4-5', name: 'claude-sonnet-4-5' }],
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.ok(!Number.isNaN(Date.parse(first.createdAt)));
    const event = await socket.event('ai-sources:catalog-changed');
    assert.deepEqual(event.data, { sourceIds: [first.id] });

    // A client-chosen id; the current source stays.
    const chosen = '6f1c1a38-3c1e-4c55-9d0e-0a4c6a1f0b01';
    const both = okData<AISourcesConfig>(
      await apiClient(server).post('/api/ai-sources/sources', {
        ...openai,
        id: chosen,
        availableModels: [{ id: 'llama3', name: 'Llama 3' }, { id: 'qwen' }],
      }),
    );
    assertMasked(both);
    second = both.sources[1]!;
    assert.equal(second.id, chosen);
    assert.equal(both.currentId, first.id);
    assert.deepEqual(second.availableModels, [
      { id: 'llama3', name: 'Llama 3' },
      { id: 'qwen', name: 'qwen' },
    ]);
    assert.deepEqual((await socket.event('ai-sources:catalog-changed')).data, { sourceIds: [chosen] });
    await fails(apiClient(server).post('/api/ai-sources/sources', { ...openai, id: chosen }), 409, /already exists/);
  });

  it('GET /api/config masks every key', async () => {
    const config = okData<AppConfiguration>(await apiClient(server).get('/api/config'));
    assertMasked(config);
    assert.deepEqual(
      config.aiSources.sources.map((s) => s.apiKey),
      ['***', '***'],
    );
  });

  it('PUT merges fields; an omitted or masked apiKey is kept, "" clears it; updatedAt is bumped', async () => {
    await drain();
    const updated = okData<AISourcesConfig>(
      await apiClient(server).put(`/api/ai-sources/sources/${first.id}`, {
        name: 'Claude (work)',
        model: 'claude-opus-4-1',
      }),
    );
    assertMasked(updated);
    const s = updated.sources.find((x) => x.id === first.id)!;
    assert.equal(s.name, 'Claude (work)');
    assert.equal(s.model, 'claude-opus-4-1');
    assert.equal(s.apiUrl, first.apiUrl);
    assert.equal(s.apiKey, '***', 'the omitted key is kept (a cleared one would read "")');
    assert.equal(s.createdAt, first.createdAt);
    assert.ok(Date.parse(s.updatedAt) > Date.parse(first.updatedAt));
    assert.deepEqual(
      s.availableModels.map((m) => m.id),
      ['claude-sonnet-4-5', 'claude-opus-4-1'],
    );
    assert.deepEqual((await socket.event('ai-sources:catalog-changed')).data, { sourceIds: [first.id] });

    const masked = okData<AISourcesConfig>(
      await apiClient(server).put(`/api/ai-sources/sources/${first.id}`, { apiKey: '***' }),
    );
    assert.equal(masked.sources.find((x) => x.id === first.id)!.apiKey, '***', 'sending "***" back keeps the key');
    const cleared = okData<AISourcesConfig>(
      await apiClient(server).put(`/api/ai-sources/sources/${second.id}`, { apiKey: '' }),
    );
    assert.equal(cleared.sources.find((x) => x.id === second.id)!.apiKey, '');
    const restored = okData<AISourcesConfig>(
      await apiClient(server).put(`/api/ai-sources/sources/${second.id}`, { apiKey: KEYS[1] }),
    );
    assert.equal(restored.sources.find((x) => x.id === second.id)!.apiKey, '***');

    await fails(apiClient(server).put(`/api/ai-sources/sources/${first.id}`, { provider: 'x' }), 400, /^provider/);
    await fails(apiClient(server).put(`/api/ai-sources/sources/${first.id}`, { model: '' }), 400, /^model/);
    await fails(
      apiClient(server).put('/api/ai-sources/sources/00000000-0000-4000-8000-000000000000', { name: 'x' }),
      404,
      'Source not found: 00000000-0000-4000-8000-000000000000',
    );
  });

  it('switch-source and set-model answer {currentId, currentModel}', async () => {
    assert.deepEqual(okData(await apiClient(server).post('/api/ai-sources/switch-source', { sourceId: second.id })), {
      currentId: second.id,
      currentModel: 'llama3',
    });
    assert.deepEqual(okData(await apiClient(server).post('/api/ai-sources/set-model', { modelId: 'qwen' })), {
      currentId: second.id,
      currentModel: 'qwen',
    });
    await drain();
    // A model not listed yet is added to the current source's list.
    assert.deepEqual(okData(await apiClient(server).post('/api/ai-sources/set-model', { modelId: 'mistral' })), {
      currentId: second.id,
      currentModel: 'mistral',
    });
    assert.deepEqual((await socket.event('ai-sources:catalog-changed')).data, { sourceIds: [second.id] });
    const config = okData<AppConfiguration>(await apiClient(server).get('/api/config'));
    const current = config.aiSources.sources.find((s) => s.id === second.id)!;
    assert.equal(config.aiSources.currentId, second.id);
    assert.equal(current.model, 'mistral');
    assert.deepEqual(
      current.availableModels.map((m) => m.id),
      ['llama3', 'qwen', 'mistral'],
    );

    await fails(
      apiClient(server).post('/api/ai-sources/switch-source', { sourceId: 'nope' }),
      404,
      'Source not found: nope',
    );
    await fails(apiClient(server).post('/api/ai-sources/switch-source', {}), 400, /^sourceId/);
    await fails(apiClient(server).post('/api/ai-sources/set-model', { modelId: 5 }), 400, /^modelId/);
  });

  it('POST /api/config merges branches, masks nested secrets, keeps "***" secrets, refuses the password', async () => {
    const merged = okData<AppConfiguration>(
      await apiClient(server).post('/api/config', {
        mcpServers: { github: { command: 'gh-mcp', env: { GITHUB_TOKEN: KEYS[2], LOG_LEVEL: 'info' } } },
        memory: { enabled: true, cadence: 'balanced' },
      }),
    );
    assertMasked(merged);
    assert.deepEqual(merged.mcpServers, {
      github: { command: 'gh-mcp', env: { GITHUB_TOKEN: '***', LOG_LEVEL: 'info' } },
    });
    assert.deepEqual(merged.memory, { enabled: true, cadence: 'balanced' });
    assert.equal(merged.aiSources.sources.length, 2, 'untouched branches stay');

    // Sending back what was read (masked) with one change keeps every secret.
    const echoed = okData<AppConfiguration>(
      await apiClient(server).post('/api/config', { ...merged, memory: { enabled: false } }),
    );
    assertMasked(echoed);
    assert.deepEqual(echoed.memory, { enabled: false });
    assert.equal((echoed.mcpServers as { github: { env: { GITHUB_TOKEN: string } } }).github.env.GITHUB_TOKEN, '***');
    assert.deepEqual(
      echoed.aiSources.sources.map((s) => s.apiKey),
      ['***', '***'],
      'the keys were kept, not cleared',
    );

    await fails(
      apiClient(server).post('/api/config', { remoteAccess: { password: 'An0ther-Password' } }),
      400,
      /^remoteAccess\.password/,
    );
    await fails(apiClient(server).post('/api/config', [1, 2]), 400, /^body must be a JSON object/);
    await fails(
      apiClient(server).post('/api/config', { memory: { enabled: true }, aiSources: { currentId: 'not-a-source' } }),
      400,
      /^aiSources\.currentId/,
    );
    await fails(
      apiClient(server).post('/api/config', {
        aiSources: { sources: [{ name: 'x', provider: 'openai', model: 'm' }] },
      }),
      400,
      /^aiSources\.sources\[0\]\.apiUrl is required/,
    );
    const unchanged = okData<AppConfiguration>(await apiClient(server).get('/api/config'));
    assert.deepEqual(unchanged.memory, { enabled: false }, 'a refused request changes nothing');
    assert.equal(unchanged.aiSources.sources.length, 2);
    assert.equal('remoteAccess' in unchanged, false);

    okData(await apiClient(server).post('/api/config', { memory: null }));
    assert.equal('memory' in okData<AppConfiguration>(await apiClient(server).get('/api/config')), false);
  });

  it('an aiSources branch replaces the sources; masked keys stay, new ones are stored', async () => {
    await drain();
    const config = okData<AppConfiguration>(await apiClient(server).get('/api/config'));
    const kept = config.aiSources.sources.find((s) => s.id === first.id)!;
    const replaced = okData<AppConfiguration>(
      await apiClient(server).post('/api/config', {
        aiSources: {
          version: 2,
          currentId: first.id,
          sources: [
            kept,
            { name: 'New', provider: 'openai', apiUrl: 'http://127.0.0.1:8000/v1', apiKey: KEYS[3], model: 'm' },
          ],
        },
      }),
    );
    assertMasked(replaced);
    assert.equal(replaced.aiSources.currentId, first.id);
    assert.deepEqual(
      replaced.aiSources.sources.map((s) => [s.name, s.apiKey]),
      [
        ['Claude (work)', '***'],
        ['New', '***'],
      ],
    );
    const added = replaced.aiSources.sources[1]!;
    assert.match(added.id, UUID);
    const event = await socket.event('ai-sources:catalog-changed');
    assert.deepEqual(((event.data as { sourceIds: string[] }).sourceIds ?? []).sort(), [added.id, second.id].sort());
    second = added;
  });

  it('DELETE removes a source; removing the current one makes the first remaining current', async () => {
    await drain();
    okData(await apiClient(server).post('/api/ai-sources/switch-source', { sourceId: second.id }));
    const left = okData<AISourcesConfig>(await apiClient(server).del(`/api/ai-sources/sources/${second.id}`));
    assertMasked(left);
    assert.deepEqual(
      left.sources.map((s) => s.id),
      [first.id],
    );
    assert.equal(left.currentId, first.id);
    assert.deepEqual((await socket.event('ai-sources:catalog-changed')).data, { sourceIds: [second.id] });
    await fails(apiClient(server).del(`/api/ai-sources/sources/${second.id}`), 404, `Source not found: ${second.id}`);
    const none = okData<AISourcesConfig>(await apiClient(server).del(`/api/ai-sources/sources/${first.id}`));
    assert.deepEqual(none, { version: 2, currentId: null, sources: [] });
    await fails(
      apiClient(server).post('/api/ai-sources/set-model', { modelId: 'm' }),
      404,
      /No model source is configured/,
    );
    await fails(apiClient(server).post('/api/ai-sources/switch-source', { sourceId: 'x' }), 404, 'Source not found: x');
  });

  it('never writes a key to the log', () => {
    for (const key of KEYS) assert.ok(!server.output().includes(key), `a secret in the log: ${key}`);
  });
});
