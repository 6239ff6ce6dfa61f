import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  Optional,
} from '@nestjs/common';
import { ARTIFACT_CHANGED_BATCH, ARTIFACT_TREE_UPDATE, WATCH_RESTART_CHANNEL } from '#contracts/artifacts.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { FileTreeScanner, FileWatcher, type FolderWatch } from '../ports/file-watcher.port.js';
import { type LeaderCampaign, LeaderLease } from '../ports/leader-lease.port.js';
import { Metrics, NoopMetrics } from '../ports/metrics.port.js';
import { SPACE_CHANGED } from '#contracts/spaces.js';
import { SpacesService } from '../spaces/spaces.service.js';
import {
  type BatchFlush,
  type BatchTimers,
  ChangeBatcher,
  type ChangeBatcherOptions,
  realTimers,
} from './change-batcher.js';
import { relativeInside } from './path-rules.js';
import {
  type ArtifactChangeBatchEvent,
  type ArtifactTreeUpdateEvent,
  compareTreeNodes,
  foldersWithChangedChildren,
  hiddenFromListingUnder,
  ignoreUnder,
  toArtifactChange,
  treeNode,
} from './watch-events.js';

/** Injection token of ArtifactWatchOptions. */
export const ARTIFACT_WATCH_OPTIONS = Symbol('ARTIFACT_WATCH_OPTIONS');

export interface ArtifactWatchOptions {
  batch?: Partial<ChangeBatcherOptions>;
  /** The leader re-reads the list of spaces this often, in case a space change was not heard. */
  recheckSpacesEveryMs?: number;
  /** Folders per `artifact:tree-update` event. */
  treeDirsPerEvent?: number;
  /** Folders whose children changed, per flush, that get a tree update (the rest rely on changed-batch). */
  treeMaxDirsPerFlush?: number;
  /** A folder with more children than this gets no tree update (clients read it with the children operation). */
  treeMaxChildren?: number;
  /** How long start-up waits for the first watches before going on in the background. */
  startupWaitMs?: number;
  /**
   * A space's watcher is restarted (after an error or a reconcile) at most this often; after
   * repeated errors (say the system's watch limit is reached) the pause doubles, up to 5 minutes.
   */
  restartMinIntervalMs?: number;
  /**
   * Intake budget per space, a token bucket: a burst of up to `intakeBurst` raw changes, and
   * `intakeRatePerSecond` more every second. Beyond it (a folder renamed back and forth in a
   * loop, say) the space's watcher is stopped for `stormPauseMs` (doubling while storms keep
   * coming, up to a minute), and clients get one resync instead of the changes: the
   * watcher's own work per change (reading every folder that appears) would otherwise keep
   * the event loop busy for as long as the storm lasts.
   */
  intakeBurst?: number;
  intakeRatePerSecond?: number;
  stormPauseMs?: number;
  timers?: BatchTimers;
}

const DEFAULTS = {
  recheckSpacesEveryMs: 60_000,
  treeDirsPerEvent: 50,
  treeMaxDirsPerFlush: 500,
  treeMaxChildren: 10_000,
  startupWaitMs: 5_000,
  restartMinIntervalMs: 10_000,
  intakeBurst: 10_000,
  intakeRatePerSecond: 2_000,
  stormPauseMs: 5_000,
};

const MAX_STORM_PAUSE_MS = 60_000;

/** Name of the lease whose holder watches every space. */
export const WATCH_LEASE = 'artifact-watch';

interface WatchedSpace {
  spaceId: string;
  root: string;
  ignore: (absolutePath: string) => boolean;
  hidden: (absolutePath: string) => boolean;
  batcher: ChangeBatcher;
  watch: FolderWatch | null;
  /** Publications of this space, in flush order. */
  publishing: Promise<void>;
  closed: boolean;
  /** When the watcher was last (re)started. */
  startedAt: number;
  restartTimer: ReturnType<typeof setTimeout> | null;
  /** Current pause between restarts; grows while errors keep coming. */
  restartBackoffMs: number;
  lastErrorAt: number;
  /** Raw changes the intake budget still allows now, as of `intakeAt`. */
  intakeTokens: number;
  intakeAt: number;
  /** The watcher is stopped for a storm of changes (until `resume`). */
  suspended: boolean;
  stormPauseMs: number;
  lastStormAt: number;
}

const MAX_RESTART_BACKOFF_MS = 5 * 60_000;

/**
 * Turns changes on disk into `artifact:changed-batch` and `artifact:tree-update` events.
 *
 * With several replicas on one shared volume every replica would see every change, so one
 * replica, the holder of the `artifact-watch` lease, watches every space and publishes on the
 * bus; every replica's gateway delivers the events to its own sockets, once each. Changes
 * made through the API are seen by the watcher like any other (the API emits nothing itself).
 * The leader follows space creation, deletion and folder changes (in-process listener, the
 * `space:changed` bus event for changes made on other replicas, and a periodic re-check).
 */
@Injectable()
export class ArtifactWatchService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ArtifactWatch');
  private readonly options: typeof DEFAULTS & ArtifactWatchOptions;
  private readonly timers: BatchTimers;
  private readonly watched = new Map<string, WatchedSpace>();
  private readonly unwatchable = new Set<string>();
  private readonly cleanups: Array<() => void> = [];
  private campaign: LeaderCampaign | null = null;
  private leader = false;
  private stopped = false;
  private syncChain: Promise<void> = Promise.resolve();
  private started: Promise<void> = Promise.resolve();
  private syncQueued: Promise<void> | null = null;
  private recheck: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly spaces: SpacesService,
    private readonly watcher: FileWatcher,
    private readonly scanner: FileTreeScanner,
    private readonly lease: LeaderLease,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    @Optional() @Inject(ARTIFACT_WATCH_OPTIONS) options?: ArtifactWatchOptions,
    @Optional() private readonly metrics: Metrics = new NoopMetrics(),
  ) {
    this.options = { ...DEFAULTS, ...(options ?? {}) };
    this.timers = options?.timers ?? realTimers;
  }

  /** Whether this replica holds the lease and runs the watchers. */
  isLeader(): boolean {
    return this.leader;
  }

  /** Ids of the spaces this replica watches now. */
  watchedSpaces(): string[] {
    return [...this.watched.keys()];
  }

  /**
   * Joins the watch leader's campaign and, as leader, starts watching. Returns at once: the start
   * goes on (the queue's consumers, the rest of the hooks) while the first watches open, and the
   * entry waits for startedWatching before it says the server listens.
   */
  onApplicationBootstrap(): void {
    this.cleanups.push(this.spaces.onChange(() => void this.requestSync()));
    this.cleanups.push(
      this.bus.subscribe((event) => {
        if (event.channel === SPACE_CHANGED) void this.requestSync();
        else if (event.channel === WATCH_RESTART_CHANNEL && typeof event.data.spaceId === 'string') {
          this.scheduleRestart(event.data.spaceId);
        }
      }),
    );
    this.recheck = setInterval(() => {
      if (this.leader) void this.requestSync();
    }, this.options.recheckSpacesEveryMs);
    this.recheck.unref?.();
    this.campaign = this.lease.campaign(WATCH_LEASE, {
      elected: ({ takeover }) => this.onElected(takeover),
      deposed: () => this.onDeposed(),
    });
    // Serve at once, but give the first watches a moment so changes right after start-up are seen.
    const campaign = this.campaign;
    this.started = (async () => {
      await campaign.settled.catch(() => undefined);
      if (this.leader) await Promise.race([this.syncChain, sleep(this.options.startupWaitMs)]);
    })();
  }

  /** Once the first watches are open, or startupWaitMs has passed (a leader), or at once (not one). */
  startedWatching(): Promise<void> {
    return this.started;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    if (this.recheck) clearInterval(this.recheck);
    // A watch still starting on a big tree is closed as soon as it is ready; do not wait for it.
    await Promise.race([this.syncChain, sleep(2_000)]);
    await this.stopAll();
    await this.campaign?.stop().catch(() => undefined);
    await this.lease.close().catch(() => undefined);
  }

  /**
   * Reconcile: tells every client and every replica's search index that the space must be
   * read again (a resync carries no changes, so it cannot duplicate any), and asks the
   * watching replica, whichever it is, to restart the space's watcher so that folders it may
   * have lost track of are watched again.
   */
  async requestResync(spaceId: string): Promise<void> {
    const entry = this.watched.get(spaceId);
    if (entry) {
      entry.batcher.flushNow();
      await entry.publishing;
    }
    await this.publishResync(spaceId);
    await this.bus.publish(WATCH_RESTART_CHANNEL, { spaceId });
  }

  /** Re-reads the spaces and starts or stops watchers to match (serialized, coalesced). */
  requestSync(): Promise<void> {
    if (this.syncQueued) return this.syncQueued;
    const run = this.syncChain.then(async () => {
      this.syncQueued = null;
      await this.sync();
    });
    this.syncChain = run.catch((err: Error) => this.logger.warn('space watch sync failed', { error: err.message }));
    this.syncQueued = this.syncChain;
    return this.syncQueued;
  }

  private onElected(takeover: boolean): void {
    this.leader = true;
    this.logger.log('watching spaces (leader)', { takeover });
    void this.requestSync().then(async () => {
      // Changes made while no replica was watching are lost: tell clients to read again.
      if (!takeover || !this.leader) return;
      for (const spaceId of this.watched.keys()) await this.publishResync(spaceId);
    });
  }

  private onDeposed(): void {
    this.leader = false;
    this.logger.warn('no longer the file-watch leader; stopping watchers');
    void this.requestSync();
  }

  private async sync(): Promise<void> {
    if (!this.leader || this.stopped) {
      await this.stopAll();
      return;
    }
    const spaces = await this.spaces.listAll();
    const desired = new Map(spaces.map((s) => [s.id, s.path]));
    for (const [spaceId, entry] of [...this.watched]) {
      if (desired.get(spaceId) !== entry.root) await this.stopWatching(spaceId);
    }
    for (const [spaceId, root] of desired) {
      if (!this.leader || this.stopped) return;
      if (!this.watched.has(spaceId)) await this.startWatching(spaceId, root);
    }
  }

  private async startWatching(spaceId: string, root: string): Promise<void> {
    const entry: WatchedSpace = {
      spaceId,
      root,
      ignore: ignoreUnder(root),
      hidden: hiddenFromListingUnder(root),
      watch: null,
      publishing: Promise.resolve(),
      closed: false,
      startedAt: this.clock.now(),
      restartTimer: null,
      restartBackoffMs: this.options.restartMinIntervalMs,
      lastErrorAt: 0,
      intakeTokens: this.options.intakeBurst,
      intakeAt: this.clock.now(),
      suspended: false,
      stormPauseMs: this.options.stormPauseMs,
      lastStormAt: 0,
      batcher: new ChangeBatcher(
        this.clock,
        this.timers,
        (flush) => this.enqueue(entry, flush),
        this.options.batch ?? {},
      ),
    };
    this.watched.set(spaceId, entry);
    try {
      const watch = await this.openWatch(entry);
      if (entry.closed) {
        await watch.close();
        return;
      }
      entry.watch = watch;
      this.unwatchable.delete(`${spaceId}:${root}`);
    } catch (err) {
      this.watched.delete(spaceId);
      entry.closed = true;
      entry.batcher.dispose();
      // Retried at the next re-check; said once per folder.
      const key = `${spaceId}:${root}`;
      if (!this.unwatchable.has(key)) {
        this.unwatchable.add(key);
        this.logger.warn('cannot watch space folder', { spaceId, root, error: (err as Error).message });
      }
    }
  }

  private openWatch(entry: WatchedSpace): Promise<FolderWatch> {
    const { spaceId, root, ignore } = entry;
    let own: FolderWatch | null = null;
    return this.watcher
      .watch(
        { root, ignore },
        {
          change: (raw) => {
            if (entry.closed || entry.suspended || (own !== null && entry.watch !== own)) return;
            if (this.overIntake(entry)) {
              this.suspend(entry);
              return;
            }
            const change = toArtifactChange(root, raw.type, raw.path);
            if (change) entry.batcher.push(change);
          },
          error: (err) => {
            if (entry.closed) return;
            // Events were or may have been lost, and folders created meanwhile may be unwatched.
            this.logger.warn('file watcher error; clients will be told to resync', { spaceId, error: err.message });
            entry.batcher.markLost();
            this.scheduleRestart(spaceId, true);
          },
        },
      )
      .then((watch) => (own = watch));
  }

  /** Counts one raw change against the space's intake budget; true once it is spent. */
  private overIntake(entry: WatchedSpace): boolean {
    const now = this.clock.now();
    const { intakeBurst, intakeRatePerSecond } = this.options;
    entry.intakeTokens = Math.min(
      intakeBurst,
      entry.intakeTokens + ((now - entry.intakeAt) * intakeRatePerSecond) / 1000,
    );
    entry.intakeAt = now;
    if (entry.intakeTokens < 1) return true;
    entry.intakeTokens -= 1;
    return false;
  }

  /**
   * A storm of changes: the space's watcher is stopped at once (so it does no more work per
   * change), what was pending becomes one resync, and the watcher comes back after a pause
   * that doubles while storms follow each other.
   */
  private suspend(entry: WatchedSpace): void {
    entry.suspended = true;
    entry.batcher.markLost();
    const watch = entry.watch;
    entry.watch = null;
    void watch?.close().catch(() => undefined);
    const now = this.clock.now();
    const { stormPauseMs } = this.options;
    entry.stormPauseMs =
      entry.lastStormAt !== 0 && now - entry.lastStormAt < entry.stormPauseMs * 2 + stormPauseMs
        ? Math.min(MAX_STORM_PAUSE_MS, entry.stormPauseMs * 2)
        : stormPauseMs;
    entry.lastStormAt = now;
    this.logger.warn('too many file changes at once: watching paused; clients will be told to resync', {
      spaceId: entry.spaceId,
      pauseMs: entry.stormPauseMs,
    });
    if (entry.restartTimer) clearTimeout(entry.restartTimer);
    entry.restartTimer = setTimeout(() => {
      entry.restartTimer = null;
      this.syncChain = this.syncChain.then(() => this.resume(entry));
    }, entry.stormPauseMs);
    entry.restartTimer.unref?.();
  }

  /** After a storm's pause: a fresh watcher, and a resync for what changed meanwhile. */
  private async resume(entry: WatchedSpace): Promise<void> {
    if (entry.closed || this.watched.get(entry.spaceId) !== entry || !entry.suspended) return;
    entry.startedAt = this.clock.now();
    entry.intakeTokens = this.options.intakeBurst;
    entry.intakeAt = this.clock.now();
    try {
      const fresh = await this.openWatch(entry);
      if (entry.closed) {
        await fresh.close();
        return;
      }
      entry.watch = fresh;
      entry.suspended = false;
      entry.batcher.markLost();
      this.logger.log('file watcher resumed after a storm of changes', { spaceId: entry.spaceId });
    } catch (err) {
      this.logger.warn('file watcher could not resume', { spaceId: entry.spaceId, error: (err as Error).message });
      entry.suspended = false;
      this.scheduleRestart(entry.spaceId, true);
    }
  }

  /** Restarts a space's watcher, spaced out as described at `restartMinIntervalMs`; only the leader has one. */
  private scheduleRestart(spaceId: string, afterError = false): void {
    const entry = this.watched.get(spaceId);
    if (!entry || entry.closed || entry.restartTimer) return;
    const now = this.clock.now();
    if (afterError) {
      const min = this.options.restartMinIntervalMs;
      // Errors again soon after the last one: wait longer each time. A quiet spell resets it.
      entry.restartBackoffMs =
        now - entry.lastErrorAt < entry.restartBackoffMs + MAX_RESTART_BACKOFF_MS
          ? Math.min(MAX_RESTART_BACKOFF_MS, Math.max(min, entry.restartBackoffMs * 2))
          : min;
      if (entry.lastErrorAt === 0) entry.restartBackoffMs = min;
      entry.lastErrorAt = now;
    }
    const pause = afterError ? entry.restartBackoffMs : this.options.restartMinIntervalMs;
    const wait = Math.max(0, entry.startedAt + pause - now);
    entry.restartTimer = setTimeout(() => {
      entry.restartTimer = null;
      this.syncChain = this.syncChain.then(() => this.restart(entry));
    }, wait);
    entry.restartTimer.unref?.();
  }

  /**
   * A fresh watcher on the same folder; the old one keeps reporting until the new one is
   * ready, then stops (so nothing is missed in between and nothing is reported twice).
   */
  private async restart(entry: WatchedSpace): Promise<void> {
    // A watcher paused for a storm comes back with `resume`.
    if (entry.closed || entry.suspended || this.watched.get(entry.spaceId) !== entry) return;
    entry.startedAt = this.clock.now();
    try {
      const fresh = await this.openWatch(entry);
      const old = entry.watch;
      if (entry.closed) {
        await fresh.close();
        return;
      }
      entry.watch = fresh;
      await old?.close().catch(() => undefined);
      this.logger.log('file watcher restarted', { spaceId: entry.spaceId });
    } catch (err) {
      this.logger.warn('file watcher restart failed', { spaceId: entry.spaceId, error: (err as Error).message });
    }
  }

  private async stopWatching(spaceId: string): Promise<void> {
    const entry = this.watched.get(spaceId);
    if (!entry) return;
    this.watched.delete(spaceId);
    if (entry.restartTimer) clearTimeout(entry.restartTimer);
    entry.batcher.flushNow();
    entry.closed = true;
    entry.batcher.dispose();
    await entry.watch?.close().catch(() => undefined);
    await entry.publishing;
  }

  private async stopAll(): Promise<void> {
    for (const spaceId of [...this.watched.keys()]) await this.stopWatching(spaceId);
  }

  private enqueue(entry: WatchedSpace, flush: BatchFlush): void {
    entry.publishing = entry.publishing
      .then(() => this.publish(entry, flush))
      .catch((err: Error) =>
        this.logger.warn('publishing file changes failed', { spaceId: entry.spaceId, error: err.message }),
      );
  }

  private async publish(entry: WatchedSpace, flush: BatchFlush): Promise<void> {
    if (flush.resync) {
      await this.publishResync(entry.spaceId);
      return;
    }
    for (const changes of flush.events) {
      const event: ArtifactChangeBatchEvent = { spaceId: entry.spaceId, changes };
      await this.bus.publish(ARTIFACT_CHANGED_BATCH, event);
    }
    this.metrics.fileWatchLag((this.clock.now() - flush.firstAt) / 1000);
    await this.publishTreeUpdates(entry, foldersWithChangedChildren(flush.events.flat()));
  }

  private async publishResync(spaceId: string): Promise<void> {
    const event: ArtifactChangeBatchEvent = { spaceId, changes: [], resync: true };
    await this.bus.publish(ARTIFACT_CHANGED_BATCH, event);
  }

  /** The current children of each folder whose direct children changed (folders gone since are left out). */
  private async publishTreeUpdates(entry: WatchedSpace, folders: string[]): Promise<void> {
    const { treeDirsPerEvent, treeMaxDirsPerFlush, treeMaxChildren } = this.options;
    const updatedDirs: ArtifactTreeUpdateEvent['updatedDirs'] = [];
    for (const folder of folders.slice(0, treeMaxDirsPerFlush)) {
      if (relativeInside(entry.root, folder) === null || entry.ignore(folder)) continue;
      const children = await this.scanner.listFolder(folder, entry.hidden);
      if (!children || children.length > treeMaxChildren) continue;
      updatedDirs.push({
        dirPath: folder,
        children: children.sort(compareTreeNodes).map((child) => treeNode(entry.root, child)),
      });
    }
    for (let i = 0; i < updatedDirs.length; i += treeDirsPerEvent) {
      const event: ArtifactTreeUpdateEvent = {
        spaceId: entry.spaceId,
        updatedDirs: updatedDirs.slice(i, i + treeDirsPerEvent),
      };
      await this.bus.publish(ARTIFACT_TREE_UPDATE, event);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}
