import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { AppChannels, type AppStatusChangedEvent } from '#contracts/apps.js';
import type { App } from '../kernel/app.js';
import { automationState } from '../kernel/app-state.js';
import type { ScheduleConfig } from '../kernel/app-spec/schedule-rules.js';
import type { Subscription } from '../kernel/app-spec/app-spec.js';
import { AppRepository } from '../ports/app.repository.port.js';
import { AppScheduler } from '../ports/app-scheduler.port.js';
import { eachConcurrently } from '../kernel/concurrently.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import type { RunStarter } from '../ports/run-starter.port.js';
import { type ScheduleRow, TriggerStore } from '../ports/trigger-store.port.js';
import {
  type SkippedOccurrences,
  nextOccurrence,
  occurrenceJobId,
  occurrencesBetween,
  scheduleSignature,
} from './schedule-timing.js';

/** Claims (webhook deliveries, file bursts) are forgotten after this long. */
const CLAIMS_KEPT_MS = 8 * 24 * 3_600_000;

/**
 * Delayed jobs ensured together by a pass over many apps: each is a round trip or two to the job
 * store, independent of the others, so they overlap (10,000 apps one after another kept a
 * replica busy for most of every pass).
 */
const ENQUEUE_CONCURRENCY = 32;

/** Whether an app's schedules keep running: an automation app that is neither paused nor uninstalled. */
export function isScheduled(app: App): boolean {
  return app.spec.type === 'automation' && app.status !== 'paused' && app.status !== 'uninstalled';
}

/**
 * The signature of a paused app's row: its `nextMs` holds when the pause began and no job is
 * queued for it. On resume the ticks since then are reported once (`onPausedOccurrences`).
 */
export const PAUSED_SIGNATURE = 'paused';

export function isPausedRow(row: ScheduleRow): boolean {
  return row.signature === PAUSED_SIGNATURE;
}

/** Ticks of one subscription that fell while its app was paused (none of them ran). */
export interface PausedOccurrences extends SkippedOccurrences {
  appId: string;
  subscriptionId: string;
}

export function scheduleSubscriptions(app: App): Subscription[] {
  return (app.spec.subscriptions ?? []).filter((s) => s.source.type === 'schedule');
}

/**
 * The delayed jobs to ensure for an app whose stored rows are exactly what `sync` would keep: a
 * scheduled app's rows (one unpaused row per schedule subscription at its current timing); none
 * for a paused automation app with one paused row per schedule subscription, or another app
 * without rows. Null when `sync` has something to write.
 */
export function currentRows(app: App, rows: readonly ScheduleRow[]): readonly ScheduleRow[] | null {
  const paused = app.status === 'paused' && app.spec.type === 'automation';
  if (!isScheduled(app) && !paused) return rows.length === 0 ? rows : null;
  const subs = scheduleSubscriptions(app);
  if (rows.length !== subs.length) return null;
  const anchor = app.installedAt.getTime();
  for (const sub of subs) {
    const row = rows.find((r) => r.subscriptionId === sub.id);
    if (!row || isPausedRow(row) !== paused) return null;
    if (!paused && row.signature !== scheduleSignature(sub.source.config as ScheduleConfig, anchor)) return null;
  }
  return paused ? [] : rows;
}

/**
 * Schedules as data (docs/api/triggers.md, "Schedules"): each schedule subscription of a scheduled app has a row in
 * Postgres with its next occurrence, and the job queue holds one delayed job per occurrence
 * under a deterministic id. The job's processor claims the occurrence by moving the row on
 * (one replica wins), queues the next one and starts the run. `reconcile` rebuilds the
 * delayed jobs from the rows, so schedules survive a job store that lost them (a Redis
 * restarted empty): on start and periodically in every consuming replica (adding an existing
 * id is a no-op, so replicas reconciling together do no harm).
 */
@Injectable()
export class TriggerScheduler extends AppScheduler implements OnModuleDestroy {
  private readonly logger = new Logger('Triggers');
  private readonly warnedYears = new Set<number>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private firstPass: Promise<void> | null = null;
  private passes = 0;
  private readonly alsoOnEachPass: Array<() => Promise<void>> = [];
  private readonly pausedHandlers: Array<(skipped: PausedOccurrences) => Promise<void>> = [];
  private starter: RunStarter | null = null;
  private readonly runEndHandlers: Array<(appId: string) => Promise<void>> = [];

  constructor(
    private readonly store: TriggerStore,
    private readonly queue: JobQueue,
    private readonly records: AppRepository,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {
    super();
  }

  /**
   * `sync` for many apps from their rows read once: an app whose rows already are what `sync`
   * would keep only has its delayed jobs ensured, together with the others'; an app whose rows
   * differ (new, changed, resumed, extra rows) is read again and synced on its own.
   */
  override async syncAll(apps: readonly App[]): Promise<void> {
    // Rows before apps: a spec change writes the app before its rows, so rows read first are
    // never newer than the apps read after them (a stale app would be synced to old timing).
    await this.syncFromRows(await this.store.schedules(), apps);
  }

  private async syncFromRows(rows: readonly ScheduleRow[], apps: readonly App[]): Promise<void> {
    const rowsOf = new Map<string, ScheduleRow[]>();
    for (const row of rows) {
      const list = rowsOf.get(row.appId);
      if (list) list.push(row);
      else rowsOf.set(row.appId, [row]);
    }
    const current: ScheduleRow[] = [];
    const first: ScheduleRow[] = [];
    const now = this.clock.now();
    for (const app of apps) {
      const stored = rowsOf.get(app.id) ?? [];
      const kept = currentRows(app, stored);
      if (kept) {
        current.push(...kept);
      } else if (stored.length === 0 && isScheduled(app)) {
        // First rows (a new app, or a database restored without them): written together below.
        first.push(...this.firstRows(app, now));
      } else {
        // A change since the rows were read (or one to make): the app as it is now.
        const fresh = await this.records.findById(app.id);
        if (fresh) await this.sync(fresh);
      }
    }
    // A row another replica wrote meanwhile is kept; the job queued here for this one then
    // finds the row elsewhere and does nothing.
    if (first.length > 0) await this.store.addSchedules(first);
    await eachConcurrently([...current, ...first], ENQUEUE_CONCURRENCY, (row) => this.enqueue(row));
  }

  /** An app's rows as `sync` writes them when it has none (subscriptions without a next occurrence left out). */
  private firstRows(app: App, now: number): ScheduleRow[] {
    const anchor = app.installedAt.getTime();
    const rows: ScheduleRow[] = [];
    for (const sub of scheduleSubscriptions(app)) {
      const config = sub.source.config as ScheduleConfig;
      const next = this.nextAfter(config, anchor, now, app.id);
      if (next !== null)
        rows.push({
          appId: app.id,
          subscriptionId: sub.id,
          signature: scheduleSignature(config, anchor),
          nextMs: next,
        });
    }
    return rows;
  }

  async sync(app: App): Promise<void> {
    if (!isScheduled(app)) {
      if (app.status === 'paused' && app.spec.type === 'automation') await this.markPaused(app);
      else await this.store.dropSchedules(app.id);
      return;
    }
    const now = this.clock.now();
    const anchor = app.installedAt.getTime();
    const existing = new Map((await this.store.schedules(app.id)).map((r) => [r.subscriptionId, r]));
    const kept: string[] = [];
    for (const sub of scheduleSubscriptions(app)) {
      const config = sub.source.config as ScheduleConfig;
      const signature = scheduleSignature(config, anchor);
      let row = existing.get(sub.id);
      if (row && isPausedRow(row)) {
        const resumed = await this.resumeRow(app, sub.id, config, signature, row.nextMs, now);
        if (resumed === null) continue;
        row = resumed;
      } else if (!row || row.signature !== signature) {
        const next = this.nextAfter(config, anchor, now, app.id);
        if (next === null) continue;
        row = { appId: app.id, subscriptionId: sub.id, signature, nextMs: next };
        await this.store.putSchedule(row);
      }
      kept.push(sub.id);
      await this.enqueue(row);
    }
    await this.store.dropSchedules(app.id, kept);
  }

  /**
   * Paused: each schedule row becomes a paused row stamped with the time the pause began (kept
   * when it already is one), so the resume can tell which ticks were skipped.
   */
  private async markPaused(app: App): Promise<void> {
    const now = this.clock.now();
    const existing = new Map((await this.store.schedules(app.id)).map((r) => [r.subscriptionId, r]));
    const kept: string[] = [];
    for (const sub of scheduleSubscriptions(app)) {
      kept.push(sub.id);
      const row = existing.get(sub.id);
      if (row && isPausedRow(row)) continue;
      await this.store.putSchedule({ appId: app.id, subscriptionId: sub.id, signature: PAUSED_SIGNATURE, nextMs: now });
    }
    await this.store.dropSchedules(app.id, kept);
  }

  /**
   * A paused row after the resume: the ticks since the pause are not run (no backlog, no
   * catch-up) but reported once; the schedule goes on from the next real occurrence. Moving the
   * row off the pause time is the claim, so with replicas reconciling at once one reports.
   */
  private async resumeRow(
    app: App,
    subscriptionId: string,
    config: ScheduleConfig,
    signature: string,
    pausedAtMs: number,
    now: number,
  ): Promise<ScheduleRow | null> {
    const anchor = app.installedAt.getTime();
    const next = this.nextAfter(config, anchor, now, app.id);
    const won = await this.store.advanceSchedule(app.id, subscriptionId, pausedAtMs, next);
    if (next === null) return null;
    const row: ScheduleRow = { appId: app.id, subscriptionId, signature, nextMs: next };
    if (!won) return row;
    await this.store.putSchedule(row);
    const skipped = occurrencesBetween(config, anchor, pausedAtMs, now);
    if (skipped) {
      for (const handler of this.pausedHandlers) {
        try {
          await handler({ appId: app.id, subscriptionId, ...skipped });
        } catch (err) {
          this.logger.warn('could not record the ticks skipped while paused', {
            appId: app.id,
            error: (err as Error).message,
          });
        }
      }
    }
    return row;
  }

  /** Told once per subscription, on resume, of the ticks that fell while the app was paused. */
  onPausedOccurrences(handler: (skipped: PausedOccurrences) => Promise<void>): void {
    this.pausedHandlers.push(handler);
  }

  async forget(appId: string): Promise<void> {
    await this.store.dropSchedules(appId);
    await this.store.dropDeliveries(appId);
  }

  async runEnded(appId: string): Promise<void> {
    for (const handler of this.runEndHandlers) await handler(appId);
  }

  /** Work done when a run of an app ended (starting its next queued delivery). */
  onRunEnded(handler: (appId: string) => Promise<void>): void {
    this.runEndHandlers.push(handler);
  }

  /** The real next occurrence after `afterMs`; warns once per year the working-day table lacks. */
  nextAfter(config: ScheduleConfig, anchorMs: number, afterMs: number, appId: string): number | null {
    const next = nextOccurrence(config, anchorMs, afterMs);
    for (const year of next?.unknownYears ?? []) {
      if (this.warnedYears.has(year)) continue;
      this.warnedYears.add(year);
      this.logger.warn('working-day calendar has no table for this year; Monday to Friday assumed', { year, appId });
    }
    return next?.ms ?? null;
  }

  /**
   * The delayed job of a row's occurrence (due at once when it is already past: the catch-up).
   * `claimed`: the row has just moved on to this occurrence (a tick's claim), so no job of its id
   * can have run and failed yet: the queue's look-up for a kept failed job is left out (one
   * round trip to Redis per tick). Reconcile passes re-add with the look-up.
   */
  async enqueue(row: ScheduleRow, claimed = false): Promise<void> {
    await this.queue.add(
      'trigger.schedule',
      { appId: row.appId, subscriptionId: row.subscriptionId, scheduledMs: row.nextMs },
      {
        jobId: occurrenceJobId(row.appId, row.subscriptionId, row.nextMs),
        delayMs: Math.max(0, row.nextMs - this.clock.now()),
        uniqueId: claimed,
      },
    );
  }

  /**
   * Records the earliest stored occurrence as the app's `nextRunAtMs`; `announce` tells clients.
   * `known`: the app's rows and the app as the caller has just read (or written) them.
   */
  async refreshNextRun(appId: string, announce: boolean, known?: { rows: ScheduleRow[]; app: App }): Promise<void> {
    const rows = (known?.rows ?? (await this.store.schedules(appId))).filter((r) => !isPausedRow(r));
    const nextRunAtMs = rows.length === 0 ? null : Math.min(...rows.map((r) => r.nextMs));
    const app = known?.app ?? (await this.records.findById(appId));
    if (!app || app.automation.nextRunAtMs === nextRunAtMs) return;
    const updated = await this.records.update(appId, { automation: { nextRunAtMs } });
    if (!announce || !updated || updated === 'already-installed') return;
    await this.bus.publish(AppChannels.statusChanged, {
      appId,
      state: automationState(updated),
    } satisfies AppStatusChangedEvent);
  }

  useRunStarter(starter: RunStarter): void {
    this.starter = starter;
  }

  /** How fired triggers start runs: what the apps context registered. */
  runStarter(): RunStarter {
    if (!this.starter) throw new Error('no run starter is registered: the apps context registers one at start');
    return this.starter;
  }

  /** Work done after each reconcile pass too (taking over stale occurrence claims). */
  alsoOnReconcile(work: () => Promise<void>): void {
    this.alsoOnEachPass.push(work);
  }

  /**
   * Every scheduled app's rows and delayed jobs as they should be; rows of apps gone are
   * dropped; then the work registered with `alsoOnReconcile`. The rows are read once: only apps
   * whose rows differ from their spec are written (`syncAll`).
   */
  async reconcile(): Promise<void> {
    const began = this.clock.now();
    const rows = await this.store.schedules();
    const all = await this.records.list({});
    const apps = all.filter(isScheduled);
    // A paused app keeps its paused rows (when the pause began) until it is resumed.
    const ids = new Set(all.filter((a) => isScheduled(a) || a.status === 'paused').map((a) => a.id));
    const gone = new Set(rows.filter((row) => !ids.has(row.appId)).map((row) => row.appId));
    for (const appId of gone) await this.store.dropSchedules(appId);
    const present = new Set(all.filter((a) => a.status !== 'uninstalled').map((a) => a.id));
    for (const appId of await this.store.deliveryApps()) {
      if (!present.has(appId)) await this.store.dropDeliveries(appId);
    }
    await this.syncFromRows(rows, apps);
    await this.store.pruneClaims(this.clock.now() - CLAIMS_KEPT_MS);
    for (const work of this.alsoOnEachPass) await work();
    // The first pass of a replica (its start) at info: how long schedules take to be rebuilt (bench/cluster reads it).
    const context = { apps: apps.length, ms: this.clock.now() - began };
    if (this.passes++ === 0) this.logger.log('schedules reconciled', context);
    else this.logger.debug('schedules reconciled', context);
  }

  /**
   * Reconciles now and then every `everyMs` (consuming replicas). The first pass runs in the
   * background: nothing a request or a job does waits for it, and with many apps it takes seconds
   * (bench/cluster reads its "schedules reconciled" line).
   */
  startReconciling(everyMs: number): void {
    if (this.firstPass) return;
    this.firstPass = this.reconcileQuietly();
    this.timer = setInterval(() => void this.reconcileQuietly(), everyMs);
    this.timer.unref?.();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // A first pass under way ends while the database and the queue are open (up to 2 s).
    if (this.firstPass) {
      await Promise.race([this.firstPass, new Promise((done) => setTimeout(done, 2_000).unref())]);
    }
  }

  private async reconcileQuietly(): Promise<void> {
    try {
      await this.reconcile();
    } catch (err) {
      this.logger.warn('schedule reconcile failed; retried at the next round', { error: (err as Error).message });
    }
  }
}
