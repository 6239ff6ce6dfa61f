import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiClient, failure, okData } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

/** A digital human as a client would send it (the catalog's shape, trimmed). */
const watcherSpec = (name = 'Price Watcher') => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: 'Watches a product price.',
  type: 'automation',
  system_prompt: 'Check the price, then report.',
  config_schema: [
    { key: 'product_url', label: 'Product', type: 'url', required: true },
    { key: 'max', label: 'Max price', type: 'number', default: 100 },
    {
      key: 'lang',
      label: 'Language',
      type: 'select',
      default: 'en',
      options: [
        { label: 'English', value: 'en' },
        { label: 'Chinese', value: 'zh' },
      ],
    },
  ],
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1h' } }, frequency: { default: '1h' } }],
  unknown_field: 'dropped',
});

const skillSpec = {
  name: 'Summarize',
  version: '1.0',
  description: 'Summarizes a text.',
  type: 'skill',
  system_prompt: 'Summarize what you are given.',
};

describe('digital humans (apps)', () => {
  let server: TestServer;
  let ws: WsTestClient;
  let spaceA: { id: string; path: string };
  let spaceB: { id: string; path: string };
  let tempPath: string;
  let appId: string;

  let api: ReturnType<typeof apiClient>;
  const appEvent = (channel: string, id: string, match: (f: Frame) => boolean = () => true) =>
    ws.next((f) => f.type === 'event' && f.channel === channel && f.data?.appId === id && match(f));
  const listIds = async (query = ''): Promise<string[]> =>
    okData<Array<{ id: string }>>(await api.get(`/api/apps${query}`)).map((a) => a.id);
  const install = async (body: object): Promise<string> =>
    okData<{ appId: string }>(await api.post('/api/apps/install', body)).appId;

  before(async () => {
    server = await startServer();
    api = apiClient(server);
    ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    spaceA = okData(await api.post('/api/spaces', { name: 'Apps A' }));
    spaceB = okData(await api.post('/api/spaces', { name: 'Apps B' }));
    tempPath = okData<{ path: string }>(await api.get('/api/spaces/svc')).path;
  });
  after(async () => {
    ws?.close();
    await server?.stop();
  });

  it('installs an automation app: {appId}, list and status events, activated with a next run', async () => {
    appId = await install({
      spec: watcherSpec(),
      spaceId: spaceA.id,
      userConfig: { product_url: 'https://shop.example/p/1' },
    });
    assert.match(appId, /^[0-9a-f-]{36}$/);
    const listed = await appEvent('app:list_changed', appId);
    assert.deepEqual(listed.data, { appId, change: 'installed' });
    const status = await appEvent('app:status_changed', appId);
    const state = status.data!.state as Record<string, unknown>;
    assert.equal(state.status, 'idle');
    assert.equal(state.runningCount, 0);
    assert.equal(state.automaticEnabled, true);
    assert.equal(typeof state.nextRunAtMs, 'number');
    assert.ok((state.nextRunAtMs as number) > Date.now());
    for (const key of ['lastError', 'lastRunAtMs']) assert.equal(state[key], null);

    const app = okData<Record<string, unknown>>(await api.get(`/api/apps/${appId}`));
    assert.equal(app.id, appId);
    assert.equal(app.spaceId, spaceA.id);
    assert.equal(app.status, 'active');
    assert.deepEqual(app.userConfig, { product_url: 'https://shop.example/p/1', max: 100, lang: 'en' });
    assert.deepEqual(app.permissions, { granted: [], denied: [] });
    assert.equal(app.upgradeStrategy, 'notify');
    const spec = app.spec as Record<string, unknown>;
    assert.equal('unknown_field' in spec, false, 'unknown spec fields are dropped');
    assert.equal(spec.name, 'Price Watcher');
    assert.deepEqual(okData(await api.get(`/api/apps/${appId}/state`)), state);
  });

  it('refuses a second install of the same digital human in the same place (409), allows it elsewhere', async () => {
    const again = await api.post('/api/apps/install', {
      spec: watcherSpec(),
      spaceId: spaceA.id,
      userConfig: { product_url: 'https://shop.example/p/2' },
    });
    failure(again, 409, /already installed/, 'ALREADY_INSTALLED');
    const globalId = await install({ spec: skillSpec, spaceId: null });
    const app = okData<{ spaceId: unknown; status: string }>(await api.get(`/api/apps/${globalId}`));
    assert.equal(app.spaceId, null);
    assert.equal(app.status, 'active');
    // Only automation apps are activated: a skill gets no status event.
    await appEvent('app:list_changed', globalId);
    await ws.roundTrip();
    assert.equal(
      ws.frames.some((f) => f.channel === 'app:status_changed' && f.data?.appId === globalId),
      false,
    );
    failure(await api.post('/api/apps/install', { spec: skillSpec }), 409, /already installed/, 'ALREADY_INSTALLED');
  });

  it('bad installs name the field and write nothing', async () => {
    const before = await listIds('?status=active');
    failure(await api.post('/api/apps/install', {}), 400, /spec/);
    failure(await api.post('/api/apps/install', { spec: 'name: x' }), 400, /spec must be an object/);
    failure(await api.post('/api/apps/install', { spec: watcherSpec(), spaceId: 5 }), 400, /spaceId/);
    failure(await api.post('/api/apps/install', { spec: watcherSpec(), userConfig: [] }), 400, /userConfig/);
    const noPrompt = { ...watcherSpec('Other'), system_prompt: undefined };
    failure(
      await api.post('/api/apps/install', { spec: noPrompt }),
      422,
      /^system_prompt is required/,
      'VALIDATION_FAILED',
    );
    const badCron = {
      ...watcherSpec('Other'),
      subscriptions: [{ source: { type: 'schedule', config: { cron: '0 0 31 4 *' } } }],
    };
    failure(await api.post('/api/apps/install', { spec: badCron }), 422, /^subscriptions\[0\]\.source\.config\.cron/);
    failure(
      await api.post('/api/apps/install', { spec: watcherSpec('Other'), userConfig: { product_url: 'x', nope: 1 } }),
      422,
      /^userConfig\.(product_url|nope)/,
      'VALIDATION_FAILED',
    );
    failure(
      await api.post('/api/apps/install', { spec: watcherSpec('Other') }),
      422,
      /^userConfig\.product_url is required/,
    );
    failure(
      await api.post('/api/apps/install', {
        spec: watcherSpec('Other'),
        spaceId: '3f1e0e52-0000-4000-8000-000000000000',
        userConfig: { product_url: 'https://x.example' },
      }),
      404,
      /Space not found/,
    );
    const mcp = {
      name: 'Local MCP',
      version: '1',
      author: 'a',
      description: 'd',
      type: 'mcp',
      mcp_server: { command: 'npx' },
    };
    failure(await api.post('/api/apps/install', { spec: mcp, spaceId: null }), 403, /blocked/, 'MCP_COMMAND_BLOCKED');
    assert.deepEqual(await listIds('?status=active'), before);
  });

  it('lists with spaceId and status filters; unknown ids are 404', async () => {
    assert.ok((await listIds()).includes(appId));
    assert.deepEqual(await listIds(`?spaceId=${spaceA.id}`), [appId]);
    assert.deepEqual(await listIds(`?spaceId=${spaceB.id}`), []);
    assert.deepEqual(await listIds('?status=paused'), []);
    failure(await api.get('/api/apps?status=sleeping'), 400, /^status must be one of/);
    failure(await api.get('/api/apps/3f1e0e52-0000-4000-8000-000000000000'), 404, /App not found/);
    failure(await api.get('/api/apps/not-a-uuid/state'), 404, /App not found: not-a-uuid/);
  });

  it('config is a full replacement with defaults filled; bad values name the key', async () => {
    const stored = okData(
      await api.post(`/api/apps/${appId}/config`, { product_url: 'https://shop.example/p/9', lang: 'zh' }),
    );
    assert.deepEqual(stored, { product_url: 'https://shop.example/p/9', lang: 'zh', max: 100 });
    failure(
      await api.post(`/api/apps/${appId}/config`, { product_url: 'https://a.example', max: 'ten' }),
      422,
      /^config\.max must be a number/,
    );
    failure(
      await api.post(`/api/apps/${appId}/config`, { product_url: 'https://a.example', lang: 'fr' }),
      422,
      /^config\.lang/,
    );
    failure(
      await api.post(`/api/apps/${appId}/config`, { product_url: 'https://a.example', extra: 1 }),
      422,
      /^config\.extra/,
    );
    failure(await api.post(`/api/apps/${appId}/config`, { max: 5 }), 422, /^config\.product_url is required/);
    assert.deepEqual(okData<{ userConfig: unknown }>(await api.get(`/api/apps/${appId}`)).userConfig, stored);
  });

  it('pause and resume change the status and announce the state', async () => {
    const paused = okData<{ status: string }>(await api.post(`/api/apps/${appId}/pause`, {}));
    assert.equal(paused.status, 'paused');
    const pausedEvent = await appEvent(
      'app:status_changed',
      appId,
      (f) => (f.data!.state as { status: string }).status === 'paused',
    );
    assert.equal((pausedEvent.data!.state as { nextRunAtMs: unknown }).nextRunAtMs, null);
    assert.deepEqual(await listIds('?status=paused'), [appId]);
    assert.equal(okData<{ status: string }>(await api.get(`/api/apps/${appId}/state`)).status, 'paused');
    const resumed = okData<{ status: string }>(await api.post(`/api/apps/${appId}/resume`, {}));
    assert.equal(resumed.status, 'active');
    const resumedEvent = await appEvent(
      'app:status_changed',
      appId,
      (f) => (f.data!.state as { status: string }).status === 'idle',
    );
    assert.equal(typeof (resumedEvent.data!.state as { nextRunAtMs: unknown }).nextRunAtMs, 'number');
    failure(await api.post(`/api/apps/${appId}/resume`, {}), 409, /not paused/);
  });

  it('frequency rewrites the subscription in the stored spec', async () => {
    const hourly = okData<{ spec: { subscriptions: Array<Record<string, unknown>> } }>(
      await api.post(`/api/apps/${appId}/frequency`, { subscriptionId: 'tick', frequency: '2h' }),
    );
    assert.deepEqual(hourly.spec.subscriptions[0], {
      id: 'tick',
      source: { type: 'schedule', config: { every: '2h' } },
      frequency: { default: '2h' },
    });
    const cron = okData<{ spec: { subscriptions: Array<{ source: { config: unknown } }> } }>(
      await api.post(`/api/apps/${appId}/frequency`, { subscriptionId: 'tick', frequency: '0 9 * * 1-5' }),
    );
    assert.deepEqual(cron.spec.subscriptions[0]!.source.config, { cron: '0 9 * * 1-5' });
    failure(
      await api.post(`/api/apps/${appId}/frequency`, { subscriptionId: 'tick', frequency: 'often' }),
      422,
      /^frequency/,
    );
    failure(
      await api.post(`/api/apps/${appId}/frequency`, { subscriptionId: 'nope', frequency: '1h' }),
      422,
      /^subscriptionId/,
    );
    failure(await api.post(`/api/apps/${appId}/frequency`, { frequency: '1h' }), 400, /subscriptionId/);
  });

  it('PATCH spec and overrides are JSON Merge Patches; an invalid result writes nothing', async () => {
    const patched = okData<{ spec: Record<string, unknown> }>(
      await api.patch(`/api/apps/${appId}/spec`, { description: 'Now cheaper.', icon: '🛒', store: { tags: ['a'] } }),
    );
    assert.equal(patched.spec.description, 'Now cheaper.');
    assert.equal(patched.spec.icon, '🛒');
    const removed = okData<{ spec: Record<string, unknown> }>(
      await api.patch(`/api/apps/${appId}/spec`, { icon: null }),
    );
    assert.equal('icon' in removed.spec, false);
    failure(
      await api.patch(`/api/apps/${appId}/spec`, { name: '' }),
      422,
      /^name must not be empty/,
      'VALIDATION_FAILED',
    );
    failure(await api.patch(`/api/apps/${appId}/spec`, { type: 'skill' }), 422, /^type cannot change/);
    failure(await api.patch(`/api/apps/${appId}/spec`, { system_prompt: null }), 422, /^system_prompt is required/);
    assert.equal(okData<{ spec: { name: string } }>(await api.get(`/api/apps/${appId}`)).spec.name, 'Price Watcher');

    const first = okData<{ userOverrides: unknown }>(
      await api.patch(`/api/apps/${appId}/overrides`, {
        modelId: 'fast-model',
        notificationLevel: 'none',
        memory: { enabled: true },
      }),
    );
    assert.deepEqual(first.userOverrides, {
      modelId: 'fast-model',
      notificationLevel: 'none',
      memory: { enabled: true },
    });
    const second = okData<{ userOverrides: unknown }>(
      await api.patch(`/api/apps/${appId}/overrides`, { modelId: null, memory: { cadence: 'daily' } }),
    );
    assert.deepEqual(second.userOverrides, { notificationLevel: 'none', memory: { enabled: true, cadence: 'daily' } });
    failure(await api.patch(`/api/apps/${appId}/overrides`, { notificationLevel: 'loud' }), 422, /^notificationLevel/);
    failure(await api.patch(`/api/apps/${appId}/overrides`, { colour: 'red' }), 422, /^colour is not an override/);
    failure(await api.patch(`/api/apps/${appId}/overrides`, { memory: { enabled: 'yes' } }), 422, /^memory\.enabled/);
  });

  it('grants and revokes permissions; sets the upgrade strategy', async () => {
    const granted = okData<{ permissions: unknown }>(
      await api.post(`/api/apps/${appId}/permissions/grant`, { permission: 'ai-browser' }),
    );
    assert.deepEqual(granted.permissions, { granted: ['ai-browser'], denied: [] });
    const revoked = okData<{ permissions: unknown }>(
      await api.post(`/api/apps/${appId}/permissions/revoke`, { permission: 'ai-browser' }),
    );
    assert.deepEqual(revoked.permissions, { granted: [], denied: ['ai-browser'] });
    failure(await api.post(`/api/apps/${appId}/permissions/grant`, { permission: 'Bad Name!' }), 422, /^permission/);
    failure(await api.post(`/api/apps/${appId}/permissions/grant`, {}), 400, /permission/);
    assert.equal(
      okData<{ upgradeStrategy: string }>(await api.post(`/api/apps/${appId}/upgrade-strategy`, { strategy: 'auto' }))
        .upgradeStrategy,
      'auto',
    );
    failure(await api.post(`/api/apps/${appId}/upgrade-strategy`, { strategy: 'sometimes' }), 400, /strategy/);
  });

  it('exports the spec as YAML and imports it into another space', async () => {
    const yaml = okData<string>(await api.get(`/api/apps/${appId}/export-spec`));
    assert.match(yaml, /^spec_version: "1"/m);
    assert.match(yaml, /name: Price Watcher/);
    const imported = okData<{ appId: string }>(
      await api.post('/api/apps/import-spec', {
        spaceId: spaceB.id,
        yamlContent: yaml,
        userConfig: { product_url: 'https://b.example' },
      }),
    ).appId;
    const copy = okData<{ spaceId: string; spec: unknown }>(await api.get(`/api/apps/${imported}`));
    assert.equal(copy.spaceId, spaceB.id);
    assert.deepEqual(copy.spec, okData<{ spec: unknown }>(await api.get(`/api/apps/${appId}`)).spec);
    failure(
      await api.post('/api/apps/import-spec', { spaceId: spaceB.id, yamlContent: 'name: [unclosed' }),
      400,
      /not valid YAML/,
      'INVALID_YAML',
    );
    failure(
      await api.post('/api/apps/import-spec', { spaceId: spaceB.id, yamlContent: 'name: X\ntype: automation\n' }),
      422,
      /^version is required/,
      'VALIDATION_FAILED',
    );
    failure(await api.post('/api/apps/import-spec', { spaceId: spaceB.id }), 400, /yamlContent/);
    // The same digital human is now in space B: moving the original there is refused.
    failure(
      await api.post(`/api/apps/${appId}/move-space`, { spaceId: spaceB.id }),
      409,
      /already installed/,
      'ALREADY_INSTALLED',
    );
  });

  it('move-space carries the data folder; clear-memory deletes only the memory', async () => {
    const dataA = join(spaceA.path, '.svc', 'apps', appId);
    mkdirSync(join(dataA, 'memory'), { recursive: true });
    writeFileSync(join(dataA, 'memory.md'), '# remembered');
    writeFileSync(join(dataA, 'memory', 'run.md'), 'run notes');
    writeFileSync(join(dataA, 'notes.txt'), 'kept');
    failure(await api.post(`/api/apps/${appId}/move-space`, {}), 400, /spaceId/);
    const moved = okData<{ spaceId: unknown }>(await api.post(`/api/apps/${appId}/move-space`, { spaceId: null }));
    assert.equal(moved.spaceId, null);
    const dataGlobal = join(tempPath, '.svc', 'apps', appId);
    assert.equal(existsSync(dataA), false);
    assert.ok(existsSync(join(dataGlobal, 'memory.md')));
    assert.deepEqual(okData(await api.post(`/api/apps/${appId}/clear-memory`, {})), null);
    assert.equal(existsSync(join(dataGlobal, 'memory.md')), false);
    assert.equal(existsSync(join(dataGlobal, 'memory')), false);
    assert.ok(existsSync(join(dataGlobal, 'notes.txt')));
    const back = okData<{ spaceId: unknown }>(await api.post(`/api/apps/${appId}/move-space`, { spaceId: spaceA.id }));
    assert.equal(back.spaceId, spaceA.id);
    assert.ok(existsSync(join(dataA, 'notes.txt')));
  });

  it('activity is an empty page until runs add entries; limit and before are checked', async () => {
    assert.deepEqual(okData(await api.get(`/api/apps/${appId}/activity?limit=10&before=${Date.now()}`)), []);
    failure(await api.get(`/api/apps/${appId}/activity?limit=zero`), 400, /^limit/);
    failure(await api.get(`/api/apps/${appId}/activity?limit=0`), 400, /^limit/);
  });

  it('a run with no model configured ends as run_error with the reason and lastError, never stuck running', async () => {
    const noModelId = await install({
      spec: watcherSpec('No Model Runner'),
      spaceId: spaceA.id,
      userConfig: { product_url: 'https://shop.example/p/9' },
    });
    const failed = appEvent(
      'app:activity_entry:new',
      noModelId,
      (f) => (f.data!.entry as { type: string }).type === 'run_error',
    );
    const started = okData<{ outcome: string; runId: string }>(await api.post(`/api/apps/${noModelId}/trigger`, {}));
    assert.equal(started.outcome, 'started');
    const entry = (await failed).data!.entry as { runId: string; content: { error: string } };
    assert.equal(entry.runId, started.runId);
    assert.match(entry.content.error, /model/i);
    await waitFor(
      async () => okData<{ runningCount: number }>(await api.get(`/api/apps/${noModelId}/state`)).runningCount === 0,
      10_000,
      'the run is not counted as running',
    );
    const state = okData<{ lastStatus: string; lastError: string }>(await api.get(`/api/apps/${noModelId}/state`));
    assert.equal(state.lastStatus, 'error');
    assert.equal(state.lastError, entry.content.error);
    okData(await api.del(`/api/apps/${noModelId}/permanent`));
  });

  it('soft delete, reinstall, purge and permanent delete', async () => {
    okData(await api.del(`/api/apps/${appId}`));
    assert.deepEqual((await appEvent('app:list_changed', appId, (f) => f.data!.change === 'uninstalled')).data, {
      appId,
      change: 'uninstalled',
    });
    assert.equal((await listIds()).includes(appId), false);
    assert.ok((await listIds('?status=uninstalled')).includes(appId));
    const gone = okData<{ status: string; uninstalledAt: number }>(await api.get(`/api/apps/${appId}`));
    assert.equal(gone.status, 'uninstalled');
    assert.equal(typeof gone.uninstalledAt, 'number');
    failure(await api.post(`/api/apps/${appId}/pause`, {}), 409, /uninstalled/);

    const back = okData<{ status: string }>(await api.post(`/api/apps/${appId}/reinstall`, {}));
    assert.equal(back.status, 'active');
    await appEvent('app:list_changed', appId, (f) => f.data!.change === 'installed');
    assert.ok((await listIds()).includes(appId));

    const dataA = join(spaceA.path, '.svc', 'apps', appId);
    assert.ok(existsSync(dataA));
    okData(await api.del(`/api/apps/${appId}?purge=true`));
    assert.equal(existsSync(dataA), false, 'purge deletes the data folder');

    okData(await api.del(`/api/apps/${appId}/permanent`));
    assert.deepEqual((await appEvent('app:deleted', appId)).data, { appId });
    failure(await api.get(`/api/apps/${appId}`), 404, /App not found/);
    failure(await api.del(`/api/apps/${appId}/permanent`), 404, /App not found/);
  });

  it('deleting a space deletes its apps', async () => {
    const space = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Short-lived' }));
    const id = await install({ spec: skillSpec, spaceId: space.id });
    okData(await api.del(`/api/spaces/${space.id}`).then((r) => r));
    assert.deepEqual((await appEvent('app:deleted', id)).data, { appId: id });
    failure(await api.get(`/api/apps/${id}`), 404, /App not found/);
    assert.equal((await listIds('?status=uninstalled')).includes(id), false);
  });
});

describe('digital humans across two replicas', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let services: SharedServices;
  let a: TestServer;
  let b: TestServer;
  let wsA: WsTestClient;
  let wsB: WsTestClient;

  before(async () => {
    services = await createSharedServices();
    [a, b] = await Promise.all([startServer({ services }), startServer({ services })]);
    [wsA, wsB] = await Promise.all([
      WsTestClient.signedIn(a.wsUrl, a.password),
      WsTestClient.signedIn(b.wsUrl, b.password),
    ]);
  });
  after(async () => {
    wsA?.close();
    wsB?.close();
    await Promise.all([a?.stop(), b?.stop()]);
    await services?.dispose();
  });

  const call = (server: TestServer, method: 'get' | 'post', path: string, body?: object) =>
    method === 'get' ? apiClient(server).get(path) : apiClient(server).post(path, body);

  it('installed on one replica, paused on the other: both answer alike and every socket hears it', async () => {
    const res = await call(a, 'post', '/api/apps/install', {
      spec: { ...watcherSpec(), config_schema: [] },
      spaceId: null,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const appId = res.body.data.appId as string;
    await wsB.next((f) => f.channel === 'app:list_changed' && f.data?.appId === appId);
    assert.equal((await call(b, 'get', `/api/apps/${appId}`)).body.data.status, 'active');

    assert.equal((await call(b, 'post', `/api/apps/${appId}/pause`)).status, 200);
    const heard = await wsA.next(
      (f) =>
        f.channel === 'app:status_changed' &&
        f.data?.appId === appId &&
        (f.data.state as { status: string }).status === 'paused',
    );
    assert.equal((heard.data!.state as { nextRunAtMs: unknown }).nextRunAtMs, null);
    assert.equal((await call(a, 'get', `/api/apps/${appId}/state`)).body.data.status, 'paused');
  });
});
