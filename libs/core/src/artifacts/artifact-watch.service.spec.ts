import { Logger } from '@nestjs/common';
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { sleep, waitFor } from '#testing/fakes.js';
import { SystemClock } from '../ports/clock.port.js';
import {
  FileTreeScanner,
  FileWatcher,
  type FolderWatch,
  type TreeEntry,
  type WalkRequest,
  type WatchListener,
  type WatchRequest,
} from '../ports/file-watcher.port.js';
import { type LeaderCampaign, LeaderLease, type LeadershipListener } from '../ports/leader-lease.port.js';
import type { Space } from '../kernel/space.js';
import type { SpacesService } from '../spaces/spaces.service.js';
import { ArtifactWatchService } from './artifact-watch.service.js';

Logger.overrideLogger(false);

class FakeWatcher extends FileWatcher {
  readonly active = new Map<string, { request: WatchRequest; listener: WatchListener }>();
  readonly opened: string[] = [];
  async watch(request: WatchRequest, listener: WatchListener): Promise<FolderWatch> {
    if (request.root.includes('missing')) throw new Error('ENOENT');
    const watch = { request, listener };
    this.active.set(request.root, watch);
    this.opened.push(request.root);
    return {
      close: async () => {
        if (this.active.get(request.root) === watch) this.active.delete(request.root);
      },
    };
  }
  emit(root: string, type: 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir', path: string): void {
    const watch = this.active.get(root);
    assert.ok(watch, `not watching ${root}`);
    if (!watch.request.ignore(path)) watch.listener.change({ type, path });
  }
}

class FakeScanner extends FileTreeScanner {
  readonly folders = new Map<string, TreeEntry[]>();
  async listFolder(folder: string, ignore: (p: string) => boolean): Promise<TreeEntry[] | null> {
    return this.folders.get(folder)?.filter((e) => !ignore(e.path)) ?? null;
  }
  async walk(_request: WalkRequest): Promise<{ count: number; truncated: boolean }> {
    return { count: 0, truncated: false };
  }
}

class FakeLease extends LeaderLease {
  listener: LeadershipListener | null = null;
  leader = false;
  campaign(_name: string, listener: LeadershipListener): LeaderCampaign {
    this.listener = listener;
    return { settled: Promise.resolve(), isLeader: () => this.leader, stop: async () => {} };
  }
  elect(takeover = false): void {
    this.leader = true;
    this.listener!.elected({ takeover });
  }
  depose(): void {
    this.leader = false;
    this.listener!.deposed();
  }
  async close(): Promise<void> {}
}

const space = (id: string, path: string): Space =>
  ({ id, path, name: id, icon: '📁', color: null, isTemp: false, sortOrder: 0, preferences: {} }) as Space;

describe('ArtifactWatchService', () => {
  let bus: RecordingEventBus;
  let watcher: FakeWatcher;
  let scanner: FakeScanner;
  let lease: FakeLease;
  let spaces: Space[];
  let listeners: Array<(id: string) => void>;
  let service: ArtifactWatchService;

  beforeEach(async () => {
    bus = new RecordingEventBus();
    watcher = new FakeWatcher();
    scanner = new FakeScanner();
    lease = new FakeLease();
    spaces = [space('s1', '/data/s1'), space('s2', '/data/s2')];
    listeners = [];
    const spacesService = {
      listAll: async () => spaces,
      onChange: (l: (id: string) => void) => {
        listeners.push(l);
        return () => undefined;
      },
    } as unknown as SpacesService;
    service = new ArtifactWatchService(spacesService, watcher, scanner, lease, bus, new SystemClock(), {
      batch: { quietMs: 20, maxWaitMs: 100 },
      startupWaitMs: 1_000,
      restartMinIntervalMs: 50,
      intakeBurst: 100,
      intakeRatePerSecond: 10,
      stormPauseMs: 150,
    });
    service.onApplicationBootstrap();
    await service.startedWatching();
  });
  afterEach(() => service.onModuleDestroy());

  it('watches nothing until elected, every space once elected', async () => {
    assert.deepEqual(service.watchedSpaces(), []);
    lease.elect();
    await service.requestSync();
    assert.deepEqual([...watcher.active.keys()].sort(), ['/data/s1', '/data/s2']);
  });

  it('publishes batched changes and tree updates of the folders whose children changed', async () => {
    lease.elect();
    await service.requestSync();
    scanner.folders.set('/data/s1/docs', [
      { name: 'b.md', type: 'file', path: '/data/s1/docs/b.md' },
      { name: 'a.md', type: 'file', path: '/data/s1/docs/a.md' },
      { name: 'img', type: 'folder', path: '/data/s1/docs/img' },
      { name: 'x.svc-tmp', type: 'file', path: '/data/s1/docs/x.svc-tmp' },
    ]);
    watcher.emit('/data/s1', 'add', '/data/s1/docs/a.md');
    watcher.emit('/data/s1', 'change', '/data/s1/docs/a.md');
    watcher.emit('/data/s1', 'change', '/data/s1/other.md');
    watcher.emit('/data/s1', 'add', '/data/s1/.git/HEAD');
    watcher.emit('/data/s1', 'add', '/data/s1/.svc/memory.md');
    await waitFor(() => bus.on('artifact:tree-update').length > 0, { what: 'tree update' });
    assert.deepEqual(bus.on('artifact:changed-batch'), [
      {
        spaceId: 's1',
        changes: [
          { type: 'add', path: '/data/s1/docs/a.md', relativePath: 'docs/a.md' },
          { type: 'change', path: '/data/s1/other.md', relativePath: 'other.md' },
        ],
      },
    ]);
    assert.deepEqual(bus.on('artifact:tree-update'), [
      {
        spaceId: 's1',
        updatedDirs: [
          {
            dirPath: '/data/s1/docs',
            children: [
              {
                id: 'docs/img',
                name: 'img',
                type: 'folder',
                path: '/data/s1/docs/img',
                relativePath: 'docs/img',
                childrenLoaded: false,
              },
              {
                id: 'docs/a.md',
                name: 'a.md',
                type: 'file',
                path: '/data/s1/docs/a.md',
                relativePath: 'docs/a.md',
                childrenLoaded: true,
              },
              {
                id: 'docs/b.md',
                name: 'b.md',
                type: 'file',
                path: '/data/s1/docs/b.md',
                relativePath: 'docs/b.md',
                childrenLoaded: true,
              },
            ],
          },
        ],
      },
    ]);
  });

  it('a watcher error becomes one resync', async () => {
    lease.elect();
    await service.requestSync();
    watcher.emit('/data/s2', 'add', '/data/s2/a');
    watcher.active.get('/data/s2')!.listener.error(new Error('overflow'));
    await waitFor(() => bus.on('artifact:changed-batch').length > 0);
    await sleep(50);
    assert.deepEqual(bus.on('artifact:changed-batch'), [{ spaceId: 's2', changes: [], resync: true }]);
  });

  it('follows space changes: new, deleted and re-pointed spaces', async () => {
    lease.elect();
    await service.requestSync();
    spaces = [space('s1', '/data/s1-moved'), space('s3', '/data/s3')];
    for (const l of listeners) l('s1');
    await service.requestSync();
    assert.deepEqual([...watcher.active.keys()].sort(), ['/data/s1-moved', '/data/s3']);
    // Another replica's change arrives on the bus.
    spaces = [space('s3', '/data/s3')];
    await bus.publish('space:changed', { spaceId: 's1', change: 'deleted' });
    await service.requestSync();
    assert.deepEqual([...watcher.active.keys()], ['/data/s3']);
  });

  it('stops watching when deposed (flushing what was pending) and resyncs after a takeover', async () => {
    lease.elect();
    await service.requestSync();
    watcher.emit('/data/s1', 'add', '/data/s1/pending.txt');
    lease.depose();
    await service.requestSync();
    assert.equal(watcher.active.size, 0);
    assert.deepEqual(bus.on('artifact:changed-batch'), [
      { spaceId: 's1', changes: [{ type: 'add', path: '/data/s1/pending.txt', relativePath: 'pending.txt' }] },
    ]);
    lease.elect(true);
    await waitFor(() => bus.on('artifact:changed-batch').length === 3, { what: 'resyncs' });
    assert.deepEqual(bus.on('artifact:changed-batch').slice(1), [
      { spaceId: 's1', changes: [], resync: true },
      { spaceId: 's2', changes: [], resync: true },
    ]);
  });

  it('a folder that cannot be watched is skipped and retried later', async () => {
    spaces = [space('s1', '/data/missing'), space('s2', '/data/s2')];
    lease.elect();
    await service.requestSync();
    assert.deepEqual(service.watchedSpaces(), ['s2']);
    spaces = [space('s1', '/data/s1'), space('s2', '/data/s2')];
    await service.requestSync();
    assert.deepEqual(service.watchedSpaces().sort(), ['s1', 's2']);
  });

  it('restarts a watcher after an error, and on a reconcile request from any replica', async () => {
    lease.elect();
    await service.requestSync();
    assert.equal(watcher.opened.filter((r) => r === '/data/s1').length, 1);
    watcher.active.get('/data/s1')!.listener.error(new Error('ENOSPC'));
    await waitFor(() => watcher.opened.filter((r) => r === '/data/s1').length === 2, { what: 'restart after error' });
    await waitFor(() => bus.on('artifact:changed-batch').length === 1, { what: 'resync' });
    // Events reach clients once, from the new watcher only.
    watcher.emit('/data/s1', 'add', '/data/s1/after-restart.txt');
    await waitFor(() => bus.on('artifact:changed-batch').length === 2);
    assert.deepEqual(bus.on('artifact:changed-batch')[1], {
      spaceId: 's1',
      changes: [{ type: 'add', path: '/data/s1/after-restart.txt', relativePath: 'after-restart.txt' }],
    });
    // A reconcile handled by another replica arrives as an internal bus event.
    await bus.publish('internal:artifact-watch:restart', { spaceId: 's2' });
    await waitFor(() => watcher.opened.filter((r) => r === '/data/s2').length === 2, { what: 'restart on request' });
  });

  it('requestResync publishes a resync for the space and asks the watcher to restart', async () => {
    await service.requestResync('s9');
    assert.deepEqual(bus.on('artifact:changed-batch'), [{ spaceId: 's9', changes: [], resync: true }]);
    assert.deepEqual(bus.on('internal:artifact-watch:restart'), [{ spaceId: 's9' }]);
  });

  it('a storm of changes stops the watcher for a pause and becomes resyncs, never per-change work', async () => {
    lease.elect();
    await service.requestSync();
    const opened = () => watcher.opened.filter((r) => r === '/data/s1').length;
    assert.equal(opened(), 1);
    for (let i = 0; i < 100; i++) watcher.emit('/data/s1', 'add', `/data/s1/d/f${i}.txt`);
    assert.ok(watcher.active.has('/data/s1'), 'within the budget: still watching');
    watcher.emit('/data/s1', 'add', '/data/s1/d/over.txt');
    await sleep(10);
    assert.equal(watcher.active.has('/data/s1'), false, 'over the budget: the watcher is stopped');
    // Clients hear one resync for the storm, not its changes; the other space is untouched.
    await waitFor(() => bus.on('artifact:changed-batch').length === 1, { what: 'the resync' });
    assert.deepEqual(bus.on('artifact:changed-batch'), [{ spaceId: 's1', changes: [], resync: true }]);
    assert.ok(watcher.active.has('/data/s2'));
    // After the pause, a fresh watcher and another resync (for what changed meanwhile).
    await waitFor(() => opened() === 2, { what: 'resumed' });
    await waitFor(() => bus.on('artifact:changed-batch').length === 2, { what: 'the resync after the pause' });
    assert.deepEqual(bus.on('artifact:changed-batch')[1], { spaceId: 's1', changes: [], resync: true });
    watcher.emit('/data/s1', 'add', '/data/s1/calm.txt');
    await waitFor(() => bus.on('artifact:changed-batch').length === 3, { what: 'changes again' });
    assert.deepEqual(bus.on('artifact:changed-batch')[2], {
      spaceId: 's1',
      changes: [{ type: 'add', path: '/data/s1/calm.txt', relativePath: 'calm.txt' }],
    });
  });

  it('storms that follow each other pause the watcher longer each time', async () => {
    lease.elect();
    await service.requestSync();
    const opened = () => watcher.opened.filter((r) => r === '/data/s1').length;
    const storm = () => {
      for (let i = 0; i <= 100; i++) watcher.emit('/data/s1', 'add', `/data/s1/d/f${i}.txt`);
    };
    storm();
    let at = Date.now();
    await waitFor(() => opened() === 2, { what: 'first resume' });
    const first = Date.now() - at;
    storm();
    at = Date.now();
    await waitFor(() => opened() === 3, { what: 'second resume', timeoutMs: 3_000 });
    const second = Date.now() - at;
    assert.ok(second >= 250, `second pause ${second} ms (first ${first} ms)`);
  });
});
