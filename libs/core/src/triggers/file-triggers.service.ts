import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ArtifactWatchService } from '../artifacts/artifact-watch.service.js';
import { ARTIFACT_CHANGED_BATCH, type ArtifactChangeBatchEvent } from '#contracts/artifacts.js';
import { AppRepository } from '../ports/app.repository.port.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { FileOwners } from './file-owners.js';
import { fileSubscriptionMatches } from './file-trigger-rules.js';
import { isScheduled } from './trigger-scheduler.js';
import { TriggersService } from './triggers.service.js';

/** A burst ends after this long without a matching change… */
export const FILE_BURST_QUIET_MS = 1_000;
/** …or this long after its first change, whichever comes first. */
export const FILE_BURST_MAX_MS = 5_000;
/** Longest stretch of matching on the event loop before it lets other work run. */
const MATCH_SLICE_MS = 10;
/** Changed paths handed to one run at most (the rest are counted). */
const MAX_PATHS_PER_RUN = 200;

interface Burst {
  /** The digital human's id, or the owner's (a team's) when `ownerKind` is set. */
  appId: string;
  /** A subscription of another context (FileOwners), e.g. `team`. */
  ownerKind?: string;
  subscriptionId: string;
  firstAt: number;
  changes: Map<string, { type: string; path: string; spaceId: string }>;
  more: number;
  quiet: ReturnType<typeof setTimeout>;
  max: ReturnType<typeof setTimeout>;
}

/**
 * File triggers (docs/api/triggers.md, "File changes"): the replica holding the file-watch lease (the one whose watcher
 * published the change batch) matches each change against the `file` subscriptions of the
 * apps in that space (and of global apps), collects a burst per subscription and starts one
 * run for it with the changed paths. Other replicas hear the same batches and ignore them.
 */
@Injectable()
export class FileTriggersService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Triggers');
  private readonly bursts = new Map<string, Burst>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly watch: ArtifactWatchService,
    private readonly records: AppRepository,
    private readonly triggers: TriggersService,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    /** File subscriptions of other contexts (a team's file trigger). */
    private readonly owned: FileOwners = new FileOwners(),
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe = this.bus.subscribe((event) => {
      if (event.channel !== ARTIFACT_CHANGED_BATCH || !this.watch.isLeader()) return;
      void this.onBatch(event.data as unknown as ArtifactChangeBatchEvent).catch((err: Error) =>
        this.logger.warn('file trigger matching failed', { error: err.message }),
      );
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    for (const burst of this.bursts.values()) {
      clearTimeout(burst.quiet);
      clearTimeout(burst.max);
    }
    this.bursts.clear();
  }

  private async onBatch(event: ArtifactChangeBatchEvent): Promise<void> {
    if (event.changes.length === 0) return;
    const apps = (await this.records.list({})).filter(
      (app) =>
        isScheduled(app) &&
        (app.spaceId === null || app.spaceId === event.spaceId) &&
        app.spec.subscriptions?.some((s) => s.source.type === 'file'),
    );
    const files = event.changes.filter((c) => c.type !== 'addDir' && c.type !== 'unlinkDir');
    let sliceStart = performance.now();
    for (const app of apps) {
      for (const sub of app.spec.subscriptions ?? []) {
        if (sub.source.type !== 'file') continue;
        for (const change of files) {
          // Matching a big batch against many subscriptions is cut into slices, so requests are answered meanwhile.
          if (performance.now() - sliceStart > MATCH_SLICE_MS) {
            await new Promise((resolve) => setImmediate(resolve));
            sliceStart = performance.now();
          }
          if (!fileSubscriptionMatches(sub.source.config, change)) continue;
          this.add(app.id, sub.id, { type: change.type, path: change.relativePath, spaceId: event.spaceId });
        }
      }
    }
    for (const kind of this.owned.kinds()) {
      for (const sub of await this.owned.subscriptions(kind, event.spaceId)) {
        for (const change of files) {
          if (!fileSubscriptionMatches(sub.config, change)) continue;
          this.add(
            sub.ownerId,
            sub.subscriptionId,
            { type: change.type, path: change.relativePath, spaceId: event.spaceId },
            kind,
          );
        }
      }
    }
  }

  private add(
    appId: string,
    subscriptionId: string,
    change: { type: string; path: string; spaceId: string },
    ownerKind?: string,
  ): void {
    const key = JSON.stringify([ownerKind ?? 'app', appId, subscriptionId]);
    let burst = this.bursts.get(key);
    if (!burst) {
      burst = {
        appId,
        ...(ownerKind ? { ownerKind } : {}),
        subscriptionId,
        firstAt: this.clock.now(),
        changes: new Map(),
        more: 0,
        quiet: this.timer(key, FILE_BURST_QUIET_MS),
        max: this.timer(key, FILE_BURST_MAX_MS),
      };
      this.bursts.set(key, burst);
    } else {
      clearTimeout(burst.quiet);
      burst.quiet = this.timer(key, FILE_BURST_QUIET_MS);
    }
    const id = `${change.spaceId}:${change.path}`;
    if (burst.changes.has(id) || burst.changes.size < MAX_PATHS_PER_RUN) burst.changes.set(id, change);
    else burst.more++;
  }

  private timer(key: string, ms: number): ReturnType<typeof setTimeout> {
    const timer = setTimeout(() => this.flush(key), ms);
    timer.unref?.();
    return timer;
  }

  private flush(key: string): void {
    const burst = this.bursts.get(key);
    if (!burst) return;
    this.bursts.delete(key);
    clearTimeout(burst.quiet);
    clearTimeout(burst.max);
    const changes: unknown[] = [...burst.changes.values()];
    if (burst.more > 0) changes.push({ more: burst.more });
    if (burst.ownerKind) {
      const { ownerKind: kind, appId: ownerId, subscriptionId } = burst;
      const spaceId = [...burst.changes.values()][0]?.spaceId ?? '';
      void this.triggers
        .claimOwnedFileBurst(ownerId, subscriptionId, String(burst.firstAt))
        .then((claimed) => (claimed ? this.owned.fire(kind, { ownerId, subscriptionId, spaceId, changes }) : undefined))
        .catch((err: Error) =>
          this.logger.warn('file trigger could not start its work', { owner: kind, ownerId, error: err.message }),
        );
      return;
    }
    void this.triggers
      .fireFileBurst(burst.appId, burst.subscriptionId, String(burst.firstAt), changes)
      .catch((err: Error) =>
        this.logger.warn('file trigger could not start a run', { appId: burst.appId, error: err.message }),
      );
  }
}
