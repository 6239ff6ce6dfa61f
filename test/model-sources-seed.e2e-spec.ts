import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient, okData } from '#testing/api-client.js';
import type { AISource, AppConfiguration } from '#contracts/models.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';

// The SVC_AI_* seed across restarts (docs/api.md, "Model sources"): a file of its own, as it starts the server five times.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
describe(`model source seeded from SVC_AI_* (${testMode()})`, () => {
  const services = testMode() === 'services';
  const seedEnv = {
    SVC_AI_PROVIDER: 'openai',
    SVC_AI_API_URL: 'http://127.0.0.1:9/v1',
    SVC_AI_API_KEY: 'sk-test',
    SVC_AI_MODEL: 'm1',
  };
  let shared: SharedServices | undefined;
  let dataDir: string | undefined;
  const running: TestServer[] = [];

  before(async () => {
    if (services) shared = await createSharedServices();
    else dataDir = mkdtempSync(join(tmpdir(), 'svc-e2e-models-'));
  });
  after(async () => {
    await Promise.all(running.map((s) => s.stop()));
    await shared?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Embedded: the same data folder; services: the same database and Redis prefix. */
  async function start(env: Record<string, string | undefined> = {}): Promise<TestServer> {
    const server = await startServer({ ...(shared ? { services: shared } : { dataDir }), env });
    running.push(server);
    return server;
  }
  async function stop(server: TestServer): Promise<void> {
    await server.stop();
    running.splice(running.indexOf(server), 1);
  }
  const sourcesOf = async (server: TestServer) =>
    okData<AppConfiguration>(await apiClient(server).get('/api/config')).aiSources;

  let seeded: AISource;

  it('a start with SVC_AI_* adds one current, masked source and keeps those added over the API', async () => {
    const plain = await start();
    okData(
      await apiClient(plain).post('/api/ai-sources/sources', {
        name: 'Old',
        provider: 'anthropic',
        apiUrl: 'https://a.example',
        model: 'x',
      }),
    );
    await stop(plain);

    const server = await start(seedEnv);
    const aiSources = await sourcesOf(server);
    assert.deepEqual(
      aiSources.sources.map((s) => s.name),
      ['Old', 'openai (env)'],
    );
    seeded = aiSources.sources[1]!;
    assert.equal(aiSources.currentId, seeded.id);
    assert.match(seeded.id, UUID);
    assert.deepEqual(
      { ...seeded, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        name: 'openai (env)',
        provider: 'openai',
        authType: 'api-key',
        apiUrl: 'http://127.0.0.1:9/v1',
        apiKey: '***',
        model: 'm1',
        availableModels: [{ id: 'm1', name: 'm1' }],
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.ok(!server.output().includes('sk-test'), 'the key is not logged');
    await stop(server);
  });

  it('a restart with the same variables keeps that source, current again, and the others', async () => {
    const server = await start(seedEnv);
    const aiSources = await sourcesOf(server);
    assert.deepEqual(aiSources.sources[1], seeded);
    assert.equal(aiSources.currentId, seeded.id);
    assert.equal(aiSources.sources.length, 2);
    // Add another source, then restart without SVC_AI_*: the stored sources stay.
    okData(
      await apiClient(server).post('/api/ai-sources/sources', {
        name: 'Extra',
        provider: 'anthropic',
        apiUrl: 'https://a.example',
        model: 'x',
      }),
    );
    await stop(server);

    const plain = await start();
    const kept = await sourcesOf(plain);
    assert.deepEqual(
      kept.sources.map((s) => s.name),
      ['Old', 'openai (env)', 'Extra'],
    );
    assert.equal(kept.currentId, seeded.id);
    // Switched to another source over the API: a start with SVC_AI_* makes its own current again.
    okData(await apiClient(plain).post('/api/ai-sources/switch-source', { sourceId: kept.sources[0]!.id }));
    await stop(plain);
  });

  it(
    services
      ? 'replicas starting together end with exactly one env source, current'
      : 'restarting with SVC_AI_* again leaves one env source, current',
    async () => {
      const servers = services
        ? await Promise.all([start(seedEnv), start(seedEnv), start(seedEnv)])
        : [await start(seedEnv)];
      for (const server of servers) {
        const aiSources = await sourcesOf(server);
        assert.deepEqual(
          aiSources.sources.map((s) => s.name),
          ['Old', 'openai (env)', 'Extra'],
        );
        assert.equal(aiSources.sources[1]!.id, seeded.id);
        assert.equal(aiSources.currentId, seeded.id);
        assert.equal(aiSources.sources[1]!.apiKey, '***');
        assert.equal(aiSources.sources[1]!.createdAt, seeded.createdAt);
      }
      await Promise.all(servers.map((s) => stop(s)));
    },
  );
});
