import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { AppChannels, type AppStatusChangedEvent } from '#contracts/apps.js';
import type { App } from '../apps/app.js';
import { automationState } from '../apps/app-rules.js';
import type { ScheduleConfig } from '../apps/spec/schedule-rules.js';
import type { Subscription } from '../apps/spec/app-spec.js';
import { AppRepository } from '../ports/app.repository.port.js';
import { AppScheduler } from '../ports/app-scheduler.port.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { type ScheduleRow, TriggerStore } from '../ports/trigger-store.port.js';
import { nextOccurrence, occurrenceJobId, scheduleSignature } from './schedule-timing.js';

/** Claims (webhook deliveries, file bursts) are forgotten after this long. */
const CLAIMS_KEPT_MS = 8 * 24 * 3_600_000;

/** Whether an app's schedules keep running: an automation app that is neither paused nor uninstalled. */
export function isScheduled(app: App): boolean {
  return app.spec.type === 'automation' && app.status !== 'paused' && app.status !== 'uninstalled';
}

export function scheduleSubscriptions(app: App): Subscription[] {
  return (app.spec.subscriptions ?? []).filter((s) => s.source.type === 'schedule');
}

/**
 * Schedules as data (issue 8 §1): each schedule subscription of a scheduled app has a row in
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
  private readonly alsoOnEachPass: Array<() => Promise<void>> = [];

  constructor(
    private readonly store: TriggerStore,
    private readonly queue: JobQueue,
    private readonly records: AppRepository,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {
    super();
  }

  async sync(app: App): Promise<void> {
    if (!isScheduled(app)) {
      await this.store.dropSchedules(app.id);
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
      if (!row || row.signature !== signature) {
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

  async forget(appId: string): Promise<void> {
    await this.store.dropSchedules(appId);
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

  /** The delayed job of a row's occurrence (due at once when it is already past: the catch-up). */
  async enqueue(row: ScheduleRow): Promise<void> {
    await this.queue.add(
      'trigger.schedule',
      { appId: row.appId, subscriptionId: row.subscriptionId, scheduledMs: row.nextMs },
      {
        jobId: occurrenceJobId(row.appId, row.subscriptionId, row.nextMs),
        delayMs: Math.max(0, row.nextMs - this.clock.now()),
      },
    );
  }

  /** Records the earliest stored occurrence as the app's `nextRunAtMs`; `announce` tells clients. */
  async refreshNextRun(appId: string, announce: boolean): Promise<void> {
    const rows = await this.store.schedules(appId);
    const nextRunAtMs = rows.length === 0 ? null : Math.min(...rows.map((r) => r.nextMs));
    const app = await this.records.findById(appId);
    if (!app || app.automation.nextRunAtMs === nextRunAtMs) return;
    const updated = await this.records.update(appId, { automation: { nextRunAtMs } });
    if (!announce || !updated || updated === 'already-installed') return;
    await this.bus.publish(AppChannels.statusChanged, {
      appId,
      state: automationState(updated),
    } satisfies AppStatusChangedEvent);
  }

  /** Work done after each reconcile pass too (taking over stale occurrence claims). */
  alsoOnReconcile(work: () => Promise<void>): void {
    this.alsoOnEachPass.push(work);
  }

  /**
   * Every scheduled app's rows and delayed jobs as they should be; rows of apps gone are
   * dropped; then the work registered with `alsoOnReconcile`.
   */
  async reconcile(): Promise<void> {
    const apps = (await this.records.list({})).filter(isScheduled);
    const ids = new Set(apps.map((a) => a.id));
    for (const row of await this.store.schedules()) {
      if (!ids.has(row.appId)) await this.store.dropSchedules(row.appId);
    }
    for (const app of apps) await this.sync(app);
    await this.store.pruneClaims(this.clock.now() - CLAIMS_KEPT_MS);
    for (const work of this.alsoOnEachPass) await work();
  }

  /** Reconciles now and then every `everyMs` (consuming replicas). */
  async startReconciling(everyMs: number): Promise<void> {
    await this.reconcileQuietly();
    if (this.timer) return;
    this.timer = setInterval(() => void this.reconcileQuietly(), everyMs);
    this.timer.unref?.();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async reconcileQuietly(): Promise<void> {
    try {
      await this.reconcile();
    } catch (err) {
      this.logger.warn('schedule reconcile failed; retried at the next round', { error: (err as Error).message });
    }
  }
}
