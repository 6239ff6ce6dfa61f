import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeAppRepository } from '#testing/fake-apps.js';
import { FakeClock } from '#testing/fakes.js';
import type { ArtifactWatchService } from '../artifacts/artifact-watch.service.js';
import { ARTIFACT_CHANGED_BATCH, type ArtifactChange } from '#contracts/artifacts.js';
import type { App } from '../kernel/app.js';
import { FILE_BURST_MAX_MS, FILE_BURST_QUIET_MS, FileTriggersService } from './file-triggers.service.js';
import type { TriggersService } from './triggers.service.js';

interface Fired {
  appId: string;
  subscriptionId: string;
  burstKey: string;
  changes: unknown[];
}

const app = (id: string, spaceId: string | null, config: Record<string, unknown>, status = 'active'): App =>
  ({
    id,
    spaceId,
    status,
    installedAt: new Date(0),
    spec: { type: 'automation', name: id, subscriptions: [{ id: 'files', source: { type: 'file', config } }] },
  }) as unknown as App;

const change = (type: string, relativePath: string, root = '/work/s1') => ({
  type,
  path: `${root}/${relativePath}`,
  relativePath,
});

describe('FileTriggersService', () => {
  let bus: RecordingEventBus;
  let apps: FakeAppRepository;
  let clock: FakeClock;
  let leader: boolean;
  let fired: Fired[];
  let service: FileTriggersService;

  /** Lets the batch handler read the apps (promises), then moves the timers and the clock by `ms`. */
  const pass = async (ms: number) => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    clock.advance(ms);
    mock.timers.tick(ms);
  };
  const batch = (spaceId: string, changes: unknown[]) =>
    bus.publish(ARTIFACT_CHANGED_BATCH, { spaceId, changes: changes as ArtifactChange[] });

  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout'] });
    bus = new RecordingEventBus();
    apps = new FakeAppRepository();
    clock = new FakeClock(1_000_000);
    leader = true;
    fired = [];
    const watch = { isLeader: () => leader } as unknown as ArtifactWatchService;
    const triggers = {
      fireFileBurst: async (appId: string, subscriptionId: string, burstKey: string, changes: unknown[]) =>
        void fired.push({ appId, subscriptionId, burstKey, changes }),
    } as unknown as TriggersService;
    service = new FileTriggersService(watch, apps, triggers, bus, clock);
    service.onApplicationBootstrap();
  });

  afterEach(() => {
    service.onModuleDestroy();
    mock.timers.reset();
  });

  it('starts one run for a burst of matching changes once the space has been quiet', async () => {
    apps.apps.set('a1', app('a1', 's1', { pattern: '*.md' }));
    await batch('s1', [change('add', 'notes/a.md'), change('change', 'b.txt')]);
    await pass(FILE_BURST_QUIET_MS - 100);
    await batch('s1', [change('change', 'notes/a.md'), change('add', 'c.md')]);
    await pass(FILE_BURST_QUIET_MS - 1);
    assert.equal(fired.length, 0, 'still within the quiet time of the last change');
    await pass(1);
    assert.deepEqual(fired, [
      {
        appId: 'a1',
        subscriptionId: 'files',
        burstKey: '1000000',
        changes: [
          { type: 'change', path: 'notes/a.md', spaceId: 's1' },
          { type: 'add', path: 'c.md', spaceId: 's1' },
        ],
      },
    ]);
  });

  it('ends a burst that never goes quiet after the longest burst time', async () => {
    apps.apps.set('a1', app('a1', null, {}));
    for (let t = 0; t < FILE_BURST_MAX_MS; t += 500) {
      await batch('s2', [change('change', `f${t}.log`, '/work/s2')]);
      await pass(500);
    }
    assert.equal(fired.length, 1);
    assert.equal(fired[0]!.changes.length, FILE_BURST_MAX_MS / 500);
  });

  it('ignores folder changes, other spaces, paused apps and batches heard by a replica that does not watch', async () => {
    apps.apps.set('a1', app('a1', 's1', {}));
    apps.apps.set('paused', app('paused', 's1', {}, 'paused'));
    await batch('s1', [change('addDir', 'new-folder')]);
    await batch('s2', [change('add', 'x.txt', '/work/s2')]);
    leader = false;
    await batch('s1', [change('add', 'y.txt')]);
    await pass(FILE_BURST_MAX_MS);
    assert.equal(fired.length, 0);
    leader = true;
    await batch('s1', [change('add', 'z.txt')]);
    await pass(FILE_BURST_QUIET_MS);
    assert.deepEqual(
      fired.map((f) => [f.appId, f.changes]),
      [['a1', [{ type: 'add', path: 'z.txt', spaceId: 's1' }]]],
    );
  });

  it('counts the paths past 200 instead of handing them to the run', async () => {
    apps.apps.set('a1', app('a1', 's1', {}));
    await batch(
      's1',
      Array.from({ length: 203 }, (_, i) => change('add', `f${i}.txt`)),
    );
    await pass(FILE_BURST_QUIET_MS);
    assert.equal(fired[0]!.changes.length, 201);
    assert.deepEqual(fired[0]!.changes.at(-1), { more: 3 });
  });
});
