import assert from 'node:assert/strict';
import type { SkillsService } from '../skills/skills.service.js';
import { beforeEach, describe, it } from 'node:test';
import { FakeAppRepository, RecordingAppScheduler, WATCHER_SPEC } from '#testing/fake-apps.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeSpaceRepository } from '#testing/fake-spaces.js';
import { FakeClock } from '#testing/fakes.js';
import { DomainError } from '../errors/domain-error.js';
import type { FileStore } from '../ports/file-store.port.js';
import type { SpaceFolders } from '../ports/space-folders.port.js';
import { AppData } from './app-data.js';
import { AppLifecycle } from './app-lifecycle.js';
import { AppsService } from './apps.service.js';

/** Skills are the SkillsService's business (its own tests and the skills e2e); nothing to write here. */
const noSkills = { installFor: async () => undefined, removeFor: async () => undefined } as unknown as SkillsService;

const SPEC = WATCHER_SPEC;

function failsWith(kind: string, code: string | undefined, text: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.kind, kind);
    assert.equal(err.code, code);
    assert.match(err.message, text);
    return true;
  };
}

describe('AppsService', () => {
  let repo: FakeAppRepository;
  let bus: RecordingEventBus;
  let scheduler: RecordingAppScheduler;
  let clock: FakeClock;
  let service: AppsService;
  let lifecycleCalls: string[];

  beforeEach(() => {
    clock = new FakeClock(Date.UTC(2026, 0, 5, 10, 30, 0));
    repo = new FakeAppRepository(() => clock.now());
    bus = new RecordingEventBus();
    scheduler = new RecordingAppScheduler();
    const spaces = new FakeSpaceRepository();
    // No space folder is known here, so data operations find nothing to touch.
    const data = new AppData({} as FileStore, {} as SpaceFolders, spaces);
    const lifecycle = new AppLifecycle();
    lifecycleCalls = [];
    lifecycle.register({
      stopWork: async (appId) => void lifecycleCalls.push(`stop ${appId}`),
      removeAll: async (appId) => void lifecycleCalls.push(`remove ${appId}`),
    });
    service = new AppsService(
      repo,
      spaces,
      data,
      lifecycle,
      scheduler,
      bus,
      clock,
      { allowMcpCommands: false },
      noSkills,
    );
  });

  it('answers 503 NOT_INITIALIZED with the exact text until the app services have started', async () => {
    const list = repo.list.bind(repo);
    repo.list = async () => {
      throw new Error('database not ready');
    };
    await assert.rejects(
      service.list({}),
      failsWith('unavailable', 'NOT_INITIALIZED', /^App Manager is not yet initialized\. Please try again shortly\.$/),
    );
    repo.list = list;
    assert.deepEqual(await service.list({}), []);
  });

  it('installs an automation app active, schedules it and computes the next run from the interval', async () => {
    const app = await service.install({ spec: SPEC, spaceId: null });
    assert.equal(app.status, 'active');
    assert.equal(app.automation.nextRunAtMs, clock.now() + 3_600_000);
    assert.deepEqual(scheduler.synced, [`${app.id}:active`]);
    assert.deepEqual(bus.on('app:list_changed'), [{ appId: app.id, change: 'installed' }]);
    assert.equal((bus.on('app:status_changed')[0]!.state as { status: string }).status, 'idle');
  });

  it('does not activate other types', async () => {
    const skill = await service.install({ spec: { ...SPEC, type: 'skill', subscriptions: undefined }, spaceId: null });
    assert.equal(skill.automation.nextRunAtMs, null);
    assert.deepEqual(scheduler.synced, []);
    assert.deepEqual(bus.on('app:status_changed'), []);
  });

  it('blocks MCP apps that run a command when the request is remote', async () => {
    const mcp = { ...SPEC, type: 'mcp', subscriptions: undefined, mcp_server: { command: 'npx' } };
    await assert.rejects(service.install({ spec: mcp }), failsWith('forbidden', 'MCP_COMMAND_BLOCKED', /blocked/));
    assert.equal((await service.install({ spec: mcp }, false)).spec.type, 'mcp');
  });

  it('a spec edit may not turn an MCP server into a command, nor change a stored one; other edits pass', async () => {
    const http = { ...SPEC, type: 'mcp', subscriptions: undefined, mcp_server: { type: 'http', url: 'https://h/mcp' } };
    const app = await service.install({ spec: http });
    const toCommand = { mcp_server: { type: null, url: null, command: '/bin/sh', args: ['-c', 'id'] } };
    await assert.rejects(
      service.patchSpec(app.id, toCommand),
      failsWith('forbidden', 'MCP_COMMAND_BLOCKED', /Changing/),
    );
    await assert.rejects(
      service.replaceSpec(app.id, { ...http, mcp_server: { command: 'node' } }),
      failsWith('forbidden', 'MCP_COMMAND_BLOCKED', /blocked/),
    );
    assert.deepEqual((await service.get(app.id)).spec.mcp_server, http.mcp_server, 'nothing stored');
    // A command the operator let in before (an install that was not remote) keeps working as it is.
    const local = await service.install(
      { spec: { ...http, name: 'Local', mcp_server: { command: 'node', args: ['s.js'] } } },
      false,
    );
    assert.equal((await service.patchSpec(local.id, { description: 'Edited.' })).spec.description, 'Edited.');
    await assert.rejects(
      service.patchSpec(local.id, { mcp_server: { args: ['-e', 'evil()'] } }),
      failsWith('forbidden', 'MCP_COMMAND_BLOCKED', /blocked/),
    );
    await assert.rejects(
      service.patchOverrides(local.id, { mcp_server: { command: '/bin/sh' } }),
      failsWith('unprocessable', 'VALIDATION_FAILED', /mcp_server is not an override/),
    );
    // A reinstall starts the server again: the same rule as an install.
    await service.uninstall(local.id, false);
    await assert.rejects(service.reinstall(local.id), failsWith('forbidden', 'MCP_COMMAND_BLOCKED', /blocked/));
    assert.equal((await service.get(local.id)).status, 'uninstalled');
  });

  it('pause clears the next run; resume restores it; uninstall forgets; reinstall activates again', async () => {
    const app = await service.install({ spec: SPEC });
    const paused = await service.pause(app.id);
    assert.equal(paused.automation.nextRunAtMs, null);
    clock.advance(90 * 60_000);
    const resumed = await service.resume(app.id);
    assert.equal(resumed.automation.nextRunAtMs, app.installedAt.getTime() + 2 * 3_600_000);
    await service.uninstall(app.id, false);
    assert.deepEqual(scheduler.forgotten, [app.id]);
    assert.deepEqual(lifecycleCalls, [`stop ${app.id}`], 'its chat and runs stop; its threads stay');
    await service.uninstall(app.id, false);
    assert.equal(lifecycleCalls.length, 1, 'uninstalling again changes nothing');
    await assert.rejects(service.pause(app.id), failsWith('conflict', undefined, /uninstalled/));
    assert.equal((await service.reinstall(app.id)).status, 'active');
    assert.deepEqual(
      bus.on('app:list_changed').map((e) => e.change),
      ['installed', 'uninstalled', 'installed'],
    );
  });

  it('a reinstall that collides with a newer copy in the same place is ALREADY_INSTALLED', async () => {
    const first = await service.install({ spec: SPEC });
    await service.uninstall(first.id, false);
    await service.install({ spec: SPEC });
    await assert.rejects(service.reinstall(first.id), failsWith('conflict', 'ALREADY_INSTALLED', /already installed/));
  });

  it('permanent delete protects built-in apps and announces app:deleted', async () => {
    const app = await service.install({ spec: SPEC });
    repo.apps.get(app.id)!.builtIn = true;
    await assert.rejects(service.deletePermanently(app.id), failsWith('forbidden', undefined, /Built-in/));
    repo.apps.get(app.id)!.builtIn = false;
    assert.deepEqual(lifecycleCalls, [], 'a refused delete stops nothing');
    await service.deletePermanently(app.id);
    assert.deepEqual(lifecycleCalls, [`stop ${app.id}`, `remove ${app.id}`], 'work stops, then its threads go');
    assert.deepEqual(bus.on('app:deleted'), [{ appId: app.id }]);
    await assert.rejects(service.get(app.id), failsWith('not_found', undefined, /App not found/));
  });

  it('deleting a space deletes its apps: their work stops and their threads go', async () => {
    const inSpace = await service.install({ spec: SPEC, spaceId: null });
    await repo.update(inSpace.id, { spaceId: 'space-1' });
    await service.deleteAllInSpace('space-1');
    assert.deepEqual(lifecycleCalls, [`stop ${inSpace.id}`, `remove ${inSpace.id}`]);
    assert.deepEqual(bus.on('app:deleted'), [{ appId: inSpace.id }]);
  });

  it('a spec patch reschedules and keeps settings in step with the new config_schema', async () => {
    const withSettings = {
      ...SPEC,
      config_schema: [
        { key: 'keep', label: 'Keep', type: 'string' },
        { key: 'drop', label: 'Drop', type: 'string' },
      ],
    };
    const app = await service.install({ spec: withSettings, userConfig: { keep: 'k', drop: 'd' } });
    const patched = await service.patchSpec(app.id, {
      config_schema: [
        { key: 'keep', label: 'Keep', type: 'string' },
        { key: 'fresh', label: 'Fresh', type: 'number', default: 7 },
      ],
      subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '15m' } } }],
    });
    assert.deepEqual(patched.userConfig, { keep: 'k', fresh: 7 });
    assert.equal(patched.automation.nextRunAtMs, app.installedAt.getTime() + 15 * 60_000);
    assert.equal(scheduler.synced.length, 2, 'synced at install and after the patch');
    await assert.rejects(
      service.patchSpec(app.id, { subscriptions: [{ source: { type: 'schedule', config: {} } }] }),
      failsWith('unprocessable', 'VALIDATION_FAILED', /^subscriptions\[0\]\.source\.config needs every or cron/),
    );
    assert.deepEqual((await service.get(app.id)).spec, patched.spec, 'a refused patch writes nothing');
  });

  it('frequency rewrites the stored spec and moves the next run', async () => {
    const app = await service.install({ spec: SPEC });
    const changed = await service.setFrequency(app.id, 'tick', '10m');
    assert.deepEqual(changed.spec.subscriptions?.[0]?.source.config, { every: '10m' });
    assert.equal(changed.automation.nextRunAtMs, app.installedAt.getTime() + 10 * 60_000);
  });

  it('activity pages newest first with limit and before', async () => {
    const app = await service.install({ spec: SPEC });
    for (let i = 1; i <= 5; i++) {
      await repo.addActivity({ id: `e${i}`, appId: app.id, runId: 'r', type: 'milestone', ts: i * 1000, content: {} });
    }
    assert.deepEqual(
      (await service.activity(app.id, 2)).map((e) => e.id),
      ['e5', 'e4'],
    );
    assert.deepEqual(
      (await service.activity(app.id, 2, 4000)).map((e) => e.id),
      ['e3', 'e2'],
    );
    await assert.rejects(service.activity(app.id, 0), failsWith('invalid', undefined, /^limit/));
  });
});
