import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { apiClient } from '#testing/api-client.js';
import { AgentHarness, toolResults } from '#testing/agent-harness.js';
import { ScriptedModelServer, textReply } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

const SECRET_KEY = 'sk-live-assistant-must-not-see-1234567890';
const api = (method: string, path: string, extra: Record<string, unknown> = {}) => ({
  steps: [{ toolCall: { name: 'ServiceApi', input: { method, path, ...extra } } }],
});

describe("the assistant's own access to the API (svc-api-ref)", () => {
  const h = new AgentHarness();
  const { okData, turn, toolsOf } = h;
  const http = h.api;
  const results = toolResults;
  let model: ScriptedModelServer;
  let server: TestServer;
  let space: { id: string; path: string };
  let keyedAppId: string;
  const chat = (message: string) => h.chat(space.id, message);

  before(async () => {
    await h.start();
    ({ model, server } = h);
    space = okData(await http.post('/api/spaces', { name: 'Ledger Space' }));
    writeFileSync(join(space.path, 'ledger.txt'), 'LEDGER-CONTENT 42');
    keyedAppId = okData<{ appId: string }>(
      await http.post('/api/apps/install', {
        spec: {
          spec_version: '1',
          name: 'Keyed Helper',
          version: '1.0.0',
          author: 'tests',
          description: 'Has an API key in its settings.',
          type: 'automation',
          system_prompt: 'Help.',
          config_schema: [{ key: 'api_key', label: 'API key', type: 'text' }],
        },
        spaceId: space.id,
        userConfig: { api_key: SECRET_KEY },
      }),
    ).appId;
  });
  after(() => h.stop());
  beforeEach(() => model.reset());

  it('is off until the preference turns it on', async () => {
    model.enqueue(textReply('hi'));
    await chat('hello');
    assert.ok(!toolsOf(0).some((t) => t.name === 'ServiceApi'));
    okData(await http.post('/api/config', { assistant: { serviceApi: true } }));
  });

  it('lists spaces and reads a file through its own listener; the operations come from the Assistant mark', async () => {
    model.enqueue(
      api('GET', '/api/spaces'),
      api('GET', '/api/artifacts/content', { query: { path: join(space.path, 'ledger.txt') } }),
      textReply('done'),
    );
    const [spaces, file] = results(await chat('What spaces do I have?'));
    const tool = toolsOf(0).find((t) => t.name === 'ServiceApi')!;
    assert.match(tool.description, /- GET \/api\/spaces\n/);
    assert.match(tool.description, /- GET \/api\/artifacts\/content/);
    assert.match(tool.description, /- DELETE \/api\/spaces\/\{spaceId\}\n/, 'spec doc 2: every operation is Assistant');
    assert.match(tool.description, /- POST \/api\/agent\/message\n/);
    assert.ok(!tool.description.includes('DELETE /api/apps/{appId}'), 'only Assistant operations');
    assert.ok(!tool.description.includes('/api/config'));
    assert.ok(!tool.description.includes('/api/artifacts/download'), 'a binary download is not in doc 2');
    assert.equal(spaces!.isError, false);
    assert.match(spaces!.result, /^HTTP 200\n/);
    assert.ok(spaces!.result.includes('Ledger Space'));
    assert.equal(file!.isError, false);
    assert.ok(file!.result.includes('LEDGER-CONTENT 42'));
    const doc: unknown = (await http.get('/api/openapi.json')).body;
    const paths = (doc as { paths: Record<string, Record<string, Record<string, unknown>>> }).paths;
    assert.equal(paths['/api/spaces']!.get!['x-svc-assistant'], true, 'the mark is in the OpenAPI document');
    assert.equal(paths['/api/spaces/{spaceId}']!.delete!['x-svc-assistant'], true);
    assert.equal(paths['/api/apps/{appId}']!.delete!['x-svc-assistant'], undefined);
  });

  it('refuses operations not marked Assistant, changing nothing', async () => {
    model.enqueue(
      api('DELETE', `/api/apps/${keyedAppId}`),
      api('POST', '/api/config', { body: { assistant: { serviceApi: false } } }),
      textReply('could not'),
    );
    const [del, config] = results(await chat('Delete the helper'));
    assert.equal(del!.isError, true);
    assert.match(del!.result, /^HTTP 403\n.*not open to the assistant: DELETE \/api\/apps\//);
    assert.equal(config!.isError, true);
    assert.match(config!.result, /^HTTP 403/);
    assert.equal((await http.get(`/api/apps/${keyedAppId}`)).body.data.status, 'active', 'the app is still there');
    assert.deepEqual(okData<{ assistant: unknown }>(await http.get('/api/config')).assistant, { serviceApi: true });
  });

  it('masks secrets in what it reads: the key never reaches the model', async () => {
    model.enqueue(api('GET', `/api/apps/${keyedAppId}`), textReply('masked'));
    const [app] = results(await chat('Show the helper'));
    assert.equal(app!.isError, false);
    assert.ok(app!.result.includes('"api_key":"***"'), app!.result.slice(0, 400));
    for (const r of model.requests) {
      const body = JSON.stringify(r.body);
      assert.ok(!body.includes(SECRET_KEY), 'the key never reaches the model');
      assert.ok(!body.includes(server.password), 'nor the access password');
    }
    // Over the main API the key is still there for the user.
    assert.equal(
      okData<{ userConfig: { api_key: string } }>(await http.get(`/api/apps/${keyedAppId}`)).userConfig.api_key,
      SECRET_KEY,
    );
  });

  it('a digital human gets it with the svc-api-ref permission only', async () => {
    const chatOf = async (appId: string) => {
      model.reset();
      model.enqueue(textReply('ok'));
      await turn(`app-chat:${appId}`, () =>
        http.post(`/api/apps/${appId}/chat/send`, { spaceId: space.id, message: 'hi' }),
      );
      return toolsOf(0).some((t) => t.name === 'ServiceApi');
    };
    assert.equal(await chatOf(keyedAppId), false, 'off by default');
    okData(await http.post(`/api/apps/${keyedAppId}/permissions/grant`, { permission: 'svc-api-ref' }));
    assert.equal(await chatOf(keyedAppId), true);
    okData(await http.post(`/api/apps/${keyedAppId}/permissions/revoke`, { permission: 'svc-api-ref' }));
    assert.equal(await chatOf(keyedAppId), false);
  });
});

describe(
  'the ServiceApi tool in a turn a worker-only process runs',
  { skip: testMode() === 'services' ? false : 'needs Redis (a worker role)' },
  () => {
    it("works through the worker's own listener, whose relay opens only its Assistant calls", async () => {
      const services = await createSharedServices();
      const model = await ScriptedModelServer.start();
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-worker-api-'));
      const env = {
        SVC_AI_PROVIDER: 'anthropic',
        SVC_AI_API_URL: model.url,
        SVC_AI_API_KEY: 'sk-scripted',
        SVC_AI_MODEL: 'scripted-model',
      };
      const front = await startServer({ services, dataDir, env: { ...env, SVC_ROLE: 'api' } });
      const worker = await startServer({ services, dataDir, env: { ...env, SVC_ROLE: 'worker' } });
      try {
        const post = (p: string, body: object) => apiClient(front).post(p, body);
        assert.equal((await post('/api/config', { assistant: { serviceApi: true } })).status, 200);
        const space = (await post('/api/spaces', { name: 'Worker Ledger' })).body.data as { id: string };
        const conversationId = (
          (await post(`/api/spaces/${space.id}/conversations`, { title: 'w' })).body.data as {
            id: string;
          }
        ).id;
        model.enqueue(api('GET', '/api/spaces'), api('POST', '/api/config', { body: {} }), textReply('done'));
        const ws = await WsTestClient.signedIn(front.wsUrl, front.password);
        ws.send({ type: 'subscribe', payload: { conversationId } });
        await ws.roundTrip();
        assert.equal(
          (await post('/api/agent/message', { spaceId: space.id, conversationId, message: 'list' })).status,
          200,
        );
        await ws.event('agent:complete', 60_000);
        await ws.roundTrip();
        const results = ws.raw
          .map((r) => JSON.parse(r) as Frame)
          .filter((f) => f.type === 'event' && f.channel === 'agent:tool-result')
          .map((f) => f.data as { result: string; isError: boolean });
        ws.close();
        const tools = (model.requests[0]!.body as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
        assert.ok(tools.includes('ServiceApi'), 'the worker offers the tool');
        assert.equal(results[0]!.isError, false, results[0]!.result);
        assert.ok(results[0]!.result.includes('Worker Ledger'));
        assert.match(results[1]!.result, /^HTTP 403\n.*not open to the assistant/);
        // The worker's API stays closed to everyone else, the access password included.
        const direct = await apiClient(worker).get('/api/spaces');
        assert.equal(direct.status, 404);
        const forged = await apiClient(worker).get('/api/spaces').set('x-svc-assistant-relay', 'guess');
        assert.equal(forged.status, 404);
      } finally {
        await front.stop();
        await worker.stop();
        await model.close();
        await services.dispose();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  },
);
