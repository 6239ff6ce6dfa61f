import { Injectable, Logger } from '@nestjs/common';
import { AppChannels, type AppStatusChangedEvent } from '#contracts/apps.js';
import type { JobMap } from '#contracts/jobs.js';
import { type RunTrigger, AppRunsService } from '../apps/agent/app-runs.service.js';
import type { App } from '../apps/app.js';
import { automationState } from '../apps/app-rules.js';
import { AppsService } from '../apps/apps.service.js';
import type { ScheduleConfig } from '../apps/spec/schedule-rules.js';
import { AppRepository } from '../ports/app.repository.port.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { TriggerStore } from '../ports/trigger-store.port.js';
import { consecutiveFailures, digest, failureDecision } from './schedule-timing.js';
import { TriggerScheduler, isScheduled, scheduleSubscriptions } from './trigger-scheduler.js';
import {
  WEBHOOK_MAX_BYTES,
  WebhookTexts,
  deliveryId,
  normalizeHookPath,
  signatureValid,
  webhookClaims,
} from './webhook-rules.js';

type Headers = Record<string, string | string[] | undefined>;

/** What a webhook delivery gets back (CONTRACT §4); the controller turns it into HTTP. */
export type WebhookOutcome = { status: 200; duplicate: boolean } | { status: 400 | 401 | 404 | 413; error: string };

export const TriggerTexts = {
  backingOff: (failures: number, untilMs: number) =>
    `Backing off after ${failures} failed run(s) in a row; the next run may start at ${new Date(untilMs).toISOString()}.`,
  pausedAfterFailures: (failures: number, last: string | null) =>
    `Paused after ${failures} failed runs in a row${last ? `: ${last}` : ''}`,
} as const;

/**
 * What happens when a trigger fires: a schedule occurrence (claimed once across replicas,
 * back-off and pause after repeated failures), a webhook delivery (signature, de-duplication in
 * shared state, run queued) and a file burst. Every run starts through `AppRunsService.startRun`.
 */
@Injectable()
export class TriggersService {
  private readonly logger = new Logger('Triggers');

  constructor(
    private readonly records: AppRepository,
    private readonly apps: AppsService,
    private readonly runs: AppRunsService,
    private readonly store: TriggerStore,
    private readonly scheduler: TriggerScheduler,
    private readonly queue: JobQueue,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {}

  // ── schedules ─────────────────────────────────────────────────────────────────────────

  /** The job of one occurrence: fires it when this caller claims it, else does nothing. */
  async fireSchedule(job: JobMap['trigger.schedule']): Promise<void> {
    const { appId, subscriptionId, scheduledMs } = job;
    const row = (await this.store.schedules(appId)).find((r) => r.subscriptionId === subscriptionId);
    if (!row || row.nextMs !== scheduledMs) return; // already fired, rescheduled or dropped
    const app = await this.records.findById(appId);
    const sub = app && isScheduled(app) ? scheduleSubscriptions(app).find((s) => s.id === subscriptionId) : undefined;
    if (!app || !sub) {
      await this.store.dropSchedules(appId, app ? scheduleSubscriptions(app).map((s) => s.id) : []);
      return;
    }
    // Missed ones (downtime) fire once, as this one; the next is counted from now.
    const now = this.clock.now();
    const config = sub.source.config as ScheduleConfig;
    const next = this.scheduler.nextAfter(config, app.installedAt.getTime(), Math.max(now, scheduledMs), appId);
    if (!(await this.store.advanceSchedule(appId, subscriptionId, scheduledMs, next))) return;
    if (next !== null) await this.scheduler.enqueue({ ...row, nextMs: next });
    await this.scheduler.refreshNextRun(appId, false);
    await this.startGuarded(app, {
      type: 'schedule',
      data: { subscriptionId, scheduledAt: new Date(scheduledMs).toISOString() },
    });
  }

  /** Starts a run unless repeated failures call for waiting (a skip) or pausing the app. */
  private async startGuarded(app: App, trigger: RunTrigger): Promise<void> {
    const recent = await this.records.listActivity(app.id, { limit: 50 });
    const failures = consecutiveFailures(recent);
    const decision = failureDecision(failures, app.automation.lastRunAtMs, this.clock.now());
    if (decision.action === 'wait') {
      await this.runs.skipRun(app.id, TriggerTexts.backingOff(failures, decision.untilMs));
      return;
    }
    if (decision.action === 'pause') {
      await this.pauseAfterFailures(app, failures);
      return;
    }
    await this.start(app.id, trigger);
  }

  private async pauseAfterFailures(app: App, failures: number): Promise<void> {
    const reason = TriggerTexts.pausedAfterFailures(failures, app.automation.lastError);
    await this.apps.pause(app.id);
    await this.runs.skipRun(app.id, reason);
    const updated = await this.records.update(app.id, { automation: { lastStatus: 'error', lastError: reason } });
    if (updated && updated !== 'already-installed') {
      await this.bus.publish(AppChannels.statusChanged, {
        appId: app.id,
        state: automationState(updated),
      } satisfies AppStatusChangedEvent);
    }
    this.logger.warn('digital human paused after repeated failed runs', { appId: app.id, failures });
  }

  private async start(appId: string, trigger: RunTrigger): Promise<void> {
    try {
      await this.runs.startRun(appId, trigger);
    } catch (err) {
      // Uninstalled or deleted meanwhile: nothing to start.
      this.logger.warn('trigger could not start a run', {
        appId,
        trigger: trigger.type,
        error: (err as Error).message,
      });
    }
  }

  // ── webhooks ──────────────────────────────────────────────────────────────────────────

  /**
   * `POST /hooks/<path>`: finds the subscription, checks the signature over the raw body,
   * claims the delivery in shared state (a repeat is answered alike and starts nothing) and
   * queues the run.
   */
  async deliverWebhook(rawPath: string, rawBody: Buffer, headers: Headers): Promise<WebhookOutcome> {
    const path = normalizeHookPath(rawPath);
    const target = await this.findWebhook(path);
    if (!target) return { status: 404, error: WebhookTexts.notFound(path) };
    if (rawBody.length > WEBHOOK_MAX_BYTES) return { status: 413, error: 'Request body is too large' };
    const secret = target.config.secret;
    if (typeof secret === 'string' && secret !== '' && !signatureValid(secret, rawBody, headers)) {
      return { status: 401, error: WebhookTexts.badSignature };
    }
    let body: unknown;
    try {
      body = JSON.parse(rawBody.toString('utf8'));
    } catch {
      return { status: 400, error: WebhookTexts.notJson };
    }
    const id = deliveryId(headers);
    const now = this.clock.now();
    const claims = webhookClaims(target.app.id, target.subscriptionId, rawBody, id);
    for (const claim of claims) {
      if (!(await this.store.claim(claim.key, target.app.id, now, claim.windowMs))) {
        return { status: 200, duplicate: true };
      }
    }
    await this.queue.add(
      'trigger.webhook',
      { appId: target.app.id, subscriptionId: target.subscriptionId, path, body, deliveryId: id },
      { jobId: `hook-${digest(claims.map((c) => c.key).join(' '), 24)}-${now}` },
    );
    return { status: 200, duplicate: false };
  }

  /** The queued run of an accepted delivery. */
  async fireWebhook(job: JobMap['trigger.webhook']): Promise<void> {
    await this.start(job.appId, {
      type: 'webhook',
      data: { subscriptionId: job.subscriptionId, path: job.path, deliveryId: job.deliveryId, body: job.body },
    });
  }

  /** The installed, not paused app whose webhook subscription has this path. */
  private async findWebhook(
    path: string,
  ): Promise<{ app: App; subscriptionId: string; config: Record<string, unknown> } | null> {
    if (path === '') return null;
    for (const app of await this.records.list({})) {
      if (!isScheduled(app)) continue;
      const sub = (app.spec.subscriptions ?? []).find(
        (s) => s.source.type === 'webhook' && s.source.config.path === path,
      );
      if (sub) return { app, subscriptionId: sub.id, config: sub.source.config };
    }
    return null;
  }

  // ── files ─────────────────────────────────────────────────────────────────────────────

  /** One debounced burst of matching changes: one run, once (the burst's key is claimed). */
  async fireFileBurst(appId: string, subscriptionId: string, burstKey: string, changes: unknown[]): Promise<void> {
    if (
      !(await this.store.claim(
        `file:${appId}:${digest(subscriptionId, 12)}:${burstKey}`,
        appId,
        this.clock.now(),
        Infinity,
      ))
    ) {
      return;
    }
    await this.start(appId, { type: 'file', data: { subscriptionId, changes } });
  }
}
