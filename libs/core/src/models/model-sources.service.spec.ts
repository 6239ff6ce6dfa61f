import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { AI_SOURCES_CATALOG_CHANGED, type AISourcesConfig } from '#contracts/models.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeSettingsRepository } from '#testing/fake-settings.js';
import { FakeClock } from '#testing/fakes.js';
import type { AppConfig, ModelSourceSeed } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { checkMcpServersBranch, MCP_SERVERS_BRANCH } from '../mcp/mcp-rules.js';
import { SettingsRepository } from '../ports/settings.repository.port.js';
import { seedSourceId } from './model-source-rules.js';
import { AI_SOURCES_KEY, ModelSourcesService } from './model-sources.service.js';

const config = (modelSeed: ModelSourceSeed | null = null, allowMcpCommands = true): AppConfig =>
  ({ modelSeed, allowMcpCommands }) as AppConfig;

const SOURCE = { name: 'Main', provider: 'anthropic', apiUrl: 'https://api.anthropic.com', model: 'claude-x' };

async function rejects(promise: Promise<unknown>, kind: string, message: RegExp | string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.kind, kind);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

describe('ModelSourcesService', () => {
  let settings: FakeSettingsRepository;
  let bus: RecordingEventBus;
  let clock: FakeClock;
  let service: ModelSourcesService;
  const make = (seed: ModelSourceSeed | null = null, store: SettingsRepository = settings) =>
    new ModelSourcesService(store, bus, clock, config(seed));

  beforeEach(() => {
    settings = new FakeSettingsRepository();
    bus = new RecordingEventBus();
    clock = new FakeClock();
    service = make();
  });

  const catalogEvents = () => bus.published.filter((e) => e.channel === AI_SOURCES_CATALOG_CHANGED).map((e) => e.data);

  describe('sources', () => {
    it('adds sources (first becomes current), masks keys, refuses a duplicate id with 409', async () => {
      const first = await service.addSource({ ...SOURCE, id: 'a', apiKey: 'sk-secret-a' });
      assert.equal(first.currentId, 'a');
      assert.equal(first.sources[0]!.apiKey, '***');
      const second = await service.addSource({ ...SOURCE, name: 'Second', apiKey: 'sk-secret-b' });
      assert.equal(second.currentId, 'a', 'the first stays current');
      assert.match(second.sources[1]!.id, /^[0-9a-f-]{36}$/, 'a generated UUID');
      assert.ok(!JSON.stringify(second).includes('sk-secret'));
      await rejects(service.addSource({ ...SOURCE, id: 'a' }), 'conflict', /already exists/);
      await rejects(service.addSource({ ...SOURCE, provider: 'x' }), 'invalid', /^provider/);
      assert.deepEqual(catalogEvents(), [{ sourceIds: ['a'] }, { sourceIds: [second.sources[1]!.id] }]);
    });

    it('an update that omits apiKey (or sends "***") keeps the stored key; updatedAt is bumped', async () => {
      await service.addSource({ ...SOURCE, id: 'a', apiKey: 'sk-keep-me' });
      clock.advance(1000);
      const updated = await service.updateSource('a', { name: 'Renamed', model: 'claude-y' });
      assert.equal(updated.sources[0]!.name, 'Renamed');
      assert.equal(updated.sources[0]!.apiKey, '***');
      assert.deepEqual(
        updated.sources[0]!.availableModels.map((m) => m.id),
        ['claude-x', 'claude-y'],
      );
      assert.ok(updated.sources[0]!.updatedAt > updated.sources[0]!.createdAt);
      await service.updateSource('a', { apiKey: '***' });
      const resolved = await service.resolveForConversation({ modelSourceId: 'a', modelId: null });
      assert.equal(resolved!.source.apiKey, 'sk-keep-me');
      assert.deepEqual(resolved!.endpoint, {
        provider: 'anthropic',
        apiUrl: 'https://api.anthropic.com',
        apiKey: 'sk-keep-me',
        source: { id: 'a', name: 'Renamed' },
      });
      await service.updateSource('a', { apiKey: 'sk-new' });
      assert.equal((await service.current())!.source.apiKey, 'sk-new');
      // Even a no-op update bumps updatedAt.
      const before = (await service.sourcesConfig()).sources[0]!.updatedAt;
      const after = (await service.updateSource('a', {})).sources[0]!.updatedAt;
      assert.ok(after > before);
    });

    it('unknown sources answer 404 "Source not found: <id>" everywhere', async () => {
      await service.addSource({ ...SOURCE, id: 'a' });
      await rejects(service.updateSource('nope', { name: 'x' }), 'not_found', 'Source not found: nope');
      await rejects(service.removeSource('nope'), 'not_found', 'Source not found: nope');
      await rejects(service.switchSource('nope'), 'not_found', 'Source not found: nope');
      await rejects(service.switchSource(undefined), 'invalid', /^sourceId/);
      await rejects(service.updateSource('a', { id: 'b' }), 'invalid', /^id cannot be changed/);
    });

    it('removing the current source makes the first remaining one current, or none', async () => {
      await service.addSource({ ...SOURCE, id: 'a' });
      await service.addSource({ ...SOURCE, id: 'b' });
      await service.addSource({ ...SOURCE, id: 'c' });
      await service.switchSource('c');
      let left = await service.removeSource('c');
      assert.equal(left.currentId, 'a');
      left = await service.removeSource('b');
      assert.deepEqual([left.currentId, left.sources.map((s) => s.id)], ['a', ['a']]);
      left = await service.removeSource('a');
      assert.deepEqual(left, { version: 2, currentId: null, sources: [] });
      assert.deepEqual(catalogEvents().slice(-3), [{ sourceIds: ['c'] }, { sourceIds: ['b'] }, { sourceIds: ['a'] }]);
    });

    it('switch-source and set-model answer {currentId, currentModel}; set-model lists a new model', async () => {
      await service.addSource({ ...SOURCE, id: 'a' });
      await service.addSource({ ...SOURCE, id: 'b', model: 'mb' });
      assert.deepEqual(await service.switchSource('b'), { currentId: 'b', currentModel: 'mb' });
      const before = catalogEvents().length;
      assert.deepEqual(await service.setModel('mb-2'), { currentId: 'b', currentModel: 'mb-2' });
      const b = (await service.sourcesConfig()).sources.find((s) => s.id === 'b')!;
      assert.deepEqual(
        b.availableModels.map((m) => m.id),
        ['mb', 'mb-2'],
      );
      assert.deepEqual(catalogEvents().slice(before), [{ sourceIds: ['b'] }]);
      assert.deepEqual(await service.setModel('mb'), { currentId: 'b', currentModel: 'mb' });
      assert.equal(catalogEvents().length, before + 1, 'an already listed model changes no catalog');
      await rejects(service.setModel(''), 'invalid', /^modelId/);
    });

    it('set-model without any source is a 404 that says how to configure one', async () => {
      await rejects(service.setModel('m'), 'not_found', /No model source is configured/);
    });
  });

  describe('resolveForConversation', () => {
    it('follows the pin while its source exists, else the current source and its model, else null', async () => {
      assert.equal(await service.resolveForConversation({ modelSourceId: 'a', modelId: 'x' }), null);
      assert.equal(await service.current(), null);
      await service.addSource({ ...SOURCE, id: 'a', model: 'ma', apiKey: 'ka' });
      await service.addSource({ ...SOURCE, id: 'b', model: 'mb', apiKey: 'kb' });
      const pinned = await service.resolveForConversation({ modelSourceId: 'b', modelId: 'pinned-model' });
      assert.equal(pinned!.source.id, 'b');
      assert.equal(pinned!.model, 'pinned-model');
      assert.equal(pinned!.source.apiKey, 'kb', 'unmasked for the engine');
      await service.removeSource('b');
      const fallback = await service.resolveForConversation({ modelSourceId: 'b', modelId: 'pinned-model' });
      assert.equal(fallback!.source.id, 'a');
      assert.equal(fallback!.model, 'ma');
      assert.equal((await service.current())!.model, 'ma');
      assert.equal(await service.hasSource('a'), true);
      assert.equal(await service.hasSource('b'), false);
    });
  });

  describe('configuration', () => {
    it('merges top-level branches, masks every secret, keeps masked secrets on write', async () => {
      await service.addSource({ ...SOURCE, id: 'a', apiKey: 'sk-a' });
      const res = await service.updateConfiguration({
        mcpServers: { gh: { command: 'gh', env: { GITHUB_TOKEN: 'ghp_x' } } },
        memory: { enabled: true },
      });
      assert.equal(res.aiSources.sources[0]!.apiKey, '***');
      assert.deepEqual(res.mcpServers, { gh: { command: 'gh', env: { GITHUB_TOKEN: '***' } } });
      // Send back what was read, changing one branch: nothing secret is lost.
      const read = await service.configuration();
      await service.updateConfiguration({ ...read, memory: { enabled: false } });
      const again = await service.configuration();
      assert.deepEqual(again.memory, { enabled: false });
      assert.equal((await service.current())!.source.apiKey, 'sk-a');
      const stored = JSON.stringify([...settings.values.values()]);
      assert.ok(stored.includes('ghp_x'), 'the token itself is still stored');
      assert.ok(!JSON.stringify(again).includes('ghp_x') && !JSON.stringify(again).includes('sk-a'));
      await service.updateConfiguration({ memory: null });
      assert.equal('memory' in (await service.configuration()), false);
    });

    it('mcpServers: a stdio server set over the API needs SVC_ALLOW_MCP_COMMANDS; HTTP ones do not; changes are announced', async () => {
      const strict = new ModelSourcesService(settings, bus, clock, config(null, false));
      strict.checkBranch(MCP_SERVERS_BRANCH, (next, stored) => checkMcpServersBranch(next, stored, false));
      await assert.rejects(
        strict.updateConfiguration({ mcpServers: { local: { command: 'node', args: ['x.js'] } } }),
        (err: DomainError) =>
          err.kind === 'forbidden' && err.code === 'MCP_COMMAND_BLOCKED' && /local/.test(err.message),
      );
      assert.equal('mcpServers' in (await strict.configuration()), false, 'nothing written');
      await assert.rejects(
        strict.updateConfiguration({ mcpServers: { bad: { url: 'ftp://x' } } }),
        /mcpServers\.bad\.url/,
      );
      const res = await strict.updateConfiguration({
        mcpServers: { remote: { url: 'https://h/mcp', headers: { Authorization: 'Bearer t0ken-value' } } },
      });
      assert.deepEqual(Object.keys(res.mcpServers as object), ['remote']);
      assert.deepEqual(bus.published.at(-1), {
        channel: 'internal:config-changed',
        data: { branches: ['mcpServers'] },
      });
      // Allowed: a stdio entry stored by the operator can be sent back unchanged without one.
      await service.updateConfiguration({
        mcpServers: { local: { command: 'node' }, remote: { url: 'https://h/mcp' } },
      });
      const read = await strict.configuration();
      await strict.updateConfiguration({ ...read, memory: { enabled: true } });
      assert.deepEqual(await strict.storedBranch('mcpServers'), {
        local: { command: 'node' },
        remote: { url: 'https://h/mcp' },
      });
    });

    it('an aiSources branch replaces sources, keeps masked keys and announces the change', async () => {
      await service.addSource({ ...SOURCE, id: 'a', apiKey: 'sk-a' });
      await service.addSource({ ...SOURCE, id: 'b', apiKey: 'sk-b' });
      const { aiSources } = await service.configuration();
      const events = catalogEvents().length;
      const res = await service.updateConfiguration({
        aiSources: { ...aiSources, currentId: 'b', sources: [aiSources.sources[1]] },
      });
      assert.equal(res.aiSources.currentId, 'b');
      assert.deepEqual(
        res.aiSources.sources.map((s) => [s.id, s.apiKey]),
        [['b', '***']],
      );
      assert.equal((await service.current())!.source.apiKey, 'sk-b');
      assert.deepEqual(catalogEvents().slice(events), [{ sourceIds: ['a'] }]);
    });

    it('writes nothing when any part is invalid; refuses a new password', async () => {
      await service.addSource({ ...SOURCE, id: 'a' });
      const writes = settings.writes;
      await rejects(
        service.updateConfiguration({ memory: { x: 1 }, aiSources: { sources: [{ name: 'no provider' }] } }),
        'invalid',
        /^aiSources\.sources\[0\]\.provider is required/,
      );
      await rejects(
        service.updateConfiguration({ remoteAccess: { password: 'Changed-123' } }),
        'invalid',
        /remoteAccess/,
      );
      await rejects(service.updateConfiguration('x'), 'invalid', /body must be a JSON object/);
      assert.equal(settings.writes, writes);
      assert.equal('memory' in (await service.configuration()), false);
    });
  });

  describe('seeding from SVC_AI_*', () => {
    const seed: ModelSourceSeed = {
      provider: 'openai',
      apiUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-test',
      model: 'm1',
    };
    const seededId = seedSourceId({ provider: 'openai', apiUrl: 'http://127.0.0.1:9/v1', model: 'm1' });

    it('adds one current source beside the stored ones; a restart writes nothing', async () => {
      await service.addSource({ ...SOURCE, id: 'old' });
      await make(seed).onApplicationBootstrap();
      const after = await service.sourcesConfig();
      assert.equal(after.currentId, seededId);
      assert.deepEqual(
        after.sources.map((s) => [s.id, s.name, s.provider, s.apiUrl, s.apiKey, s.model]),
        [
          ['old', SOURCE.name, SOURCE.provider, SOURCE.apiUrl, '', SOURCE.model],
          [seededId, 'openai (env)', 'openai', 'http://127.0.0.1:9/v1', '***', 'm1'],
        ],
      );
      assert.deepEqual(after.sources[1]!.availableModels, [{ id: 'm1', name: 'm1' }]);
      assert.equal((await service.current())!.source.apiKey, 'sk-test');
      const writes = settings.writes;
      clock.advance(60_000);
      await make(seed).onApplicationBootstrap();
      assert.equal(settings.writes, writes, 'an unchanged restart writes nothing');
      assert.deepEqual(await service.sourcesConfig(), after);
    });

    it('no seeding without URL and key; the stored sources stay', async () => {
      await service.addSource({ ...SOURCE, id: 'kept' });
      await make({ provider: 'openai', model: 'm9' }).onApplicationBootstrap();
      await make(null).onApplicationBootstrap();
      assert.deepEqual(
        (await service.sourcesConfig()).sources.map((s) => s.id),
        ['kept'],
      );
    });

    it('replicas seeding at once end with exactly one source', async () => {
      await Promise.all([1, 2, 3, 4].map(() => make(seed).onApplicationBootstrap()));
      const doc = await service.sourcesConfig();
      assert.deepEqual(
        doc.sources.map((s) => s.id),
        [seededId],
      );
    });
  });

  describe('concurrency', () => {
    it('concurrent writes in one process are serialized: none is lost', async () => {
      await Promise.all(Array.from({ length: 20 }, (_, i) => service.addSource({ ...SOURCE, id: `s${i}` })));
      assert.equal((await service.sourcesConfig()).sources.length, 20);
      const stored = JSON.parse(settings.values.get(AI_SOURCES_KEY)!) as AISourcesConfig & { revision: number };
      assert.equal(stored.revision, 20);
    });

    it('with an adapter compareAndSet, replicas writing at once lose nothing (lost races retry)', async () => {
      const shared = new FakeSettingsRepository();
      const replicaA = make(null, shared);
      const replicaB = make(null, shared);
      await Promise.all(
        Array.from({ length: 6 }, (_, i) => [
          replicaA.addSource({ ...SOURCE, id: `a${i}` }),
          replicaB.addSource({ ...SOURCE, id: `b${i}` }),
        ]).flat(),
      );
      const ids = (await replicaA.sourcesConfig()).sources.map((s) => s.id).sort();
      assert.deepEqual(
        ids,
        [...Array.from({ length: 6 }, (_, i) => `a${i}`), ...Array.from({ length: 6 }, (_, i) => `b${i}`)].sort(),
      );
      assert.ok(shared.casFailures > 0, 'the replicas did race');
    });
  });
});
