import { Injectable, Logger } from '@nestjs/common';
import { AppChannels, type AppStatusChangedEvent } from '#contracts/apps.js';
import type { JobMap } from '#contracts/jobs.js';
import type { App } from '../kernel/app.js';
import { automationState } from '../kernel/app-state.js';
import type { ScheduleConfig } from '../kernel/app-spec/schedule-rules.js';
import { DomainError } from '../errors/domain-error.js';
import { AppRepository } from '../ports/app.repository.port.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { Metrics, NoopMetrics } from '../ports/metrics.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import type { RunStarter, RunTrigger } from '../ports/run-starter.port.js';
import { TriggerStore } from '../ports/trigger-store.port.js';
import { findUnsafeText, jsonDepthExceeds, MAX_JSON_DEPTH } from '../errors/text-rules.js';
import {
  FAILURE_BACKOFF_MS,
  PAUSE_AFTER_FAILURES,
  consecutiveFailures,
  digest,
  failureDecision,
  occurrenceJobId,
  occurrenceRunId,
} from './schedule-timing.js';
import {
  type PausedOccurrences,
  TriggerScheduler,
  isPausedRow,
  isScheduled,
  scheduleSubscriptions,
} from './trigger-scheduler.js';
import {
  WEBHOOK_MAX_BYTES,
  WEBHOOK_QUEUE_MAX,
  WEBHOOK_RETRY_AFTER_S,
  WebhookTexts,
  deliveryId,
  eventHeaders,
  mediaType,
  normalizeHookPath,
  signatureValid,
  webhookClaims,
  webhookJsonText,
} from './webhook-rules.js';
import { webhookDeliveryJobId } from '../kernel/job-ids.js';
import { WebhookOwners } from './webhook-owners.js';
import { deliveryDrainJobId } from '../kernel/job-ids.js';
import { randomUUID } from 'node:crypto';
import type { OccurrenceClaim, QueuedDelivery } from '../ports/trigger-store.port.js';

type Headers = Record<string, string | string[] | undefined>;

/** Whose webhook a path names: a digital human's (`kind` null) or another context's. */
type WebhookTarget = { ownerId: string; subscriptionId: string; config: Record<string, unknown>; kind: string | null };

/** Why a webhook delivery was refused. */
export type WebhookRefusal = 'unknown-path' | 'too-large' | 'bad-signature' | 'not-json' | 'bad-body' | 'queue-full';

/** What a webhook delivery gets back: accepted (a repeat is accepted alike) or refused, with the reason's text. */
export type WebhookOutcome = WebhookAccepted | WebhookRefused;
export type WebhookAccepted = { accepted: true; duplicate: boolean };
export type WebhookRefused = { accepted: false; refusal: WebhookRefusal; error: string; retryAfterS?: number };

/** The newest activity entries the failure count reads. */
const FAILURE_WINDOW = 50;
/** Tries of one schedule occurrence (its first and the take-overs after a failed start) before it is given up. */
const OCCURRENCE_ATTEMPTS = 5;
/** How long one replica may hold an app's dispatch turn (starting its next queued delivery). */
const DISPATCH_LEASE_MS = 60_000;
/** A replica finding another one dispatching tries again this often, this many times. */
const DISPATCH_RETRY_MS = 200;
const DISPATCH_TRIES = 25;

export const TriggerTexts = {
  backingOff: (failures: number, untilMs: number) =>
    `Backing off after ${failures} failed run(s) in a row; the next run may start at ${new Date(untilMs).toISOString()}.`,
  skippedWhilePaused: (count: number, firstMs: number, lastMs: number) =>
    count === 1
      ? `The digital human was paused: 1 scheduled run skipped (${new Date(firstMs).toISOString()}).`
      : `The digital human was paused: ${count} scheduled runs skipped (${new Date(firstMs).toISOString()} to ${new Date(lastMs).toISOString()}).`,
  pausedAfterFailures: (failures: number, last: string | null) =>
    `Paused after ${failures} failed runs in a row${last ? `: ${last}` : ''}`,
} as const;

/** Back-off, pause and claim-lease settings (SVC_TRIGGER_BACKOFF_MS, SVC_TRIGGER_PAUSE_AFTER, SVC_TRIGGER_CLAIM_LEASE_MS). */
export interface TriggerPolicy {
  /** Pause before the next run after 1, 2, … failed runs in a row (the last value repeats). */
  backoffMs: readonly number[];
  /** This many failed runs in a row pause the app with `lastError`. */
  pauseAfter: number;
  /** A claimed occurrence whose run has not started after this long is taken over. */
  claimLeaseMs: number;
  /** The operator's floor between two runs of one schedule (SVC_SCHEDULE_MIN_INTERVAL): a spec may ask for more, never less. */
  minIntervalMs: number;
  /** Deliveries that may wait per app (SVC_WEBHOOK_QUEUE_MAX); past it a delivery is answered 429. */
  webhookQueueMax: number;
}

export const DEFAULT_TRIGGER_POLICY: TriggerPolicy = {
  backoffMs: FAILURE_BACKOFF_MS,
  pauseAfter: PAUSE_AFTER_FAILURES,
  claimLeaseMs: 60_000,
  minIntervalMs: 60_000,
  webhookQueueMax: WEBHOOK_QUEUE_MAX,
};

/**
 * What happens when a trigger fires: a schedule occurrence (claimed once across replicas,
 * back-off and pause after repeated failures), a webhook delivery (signature, de-duplication in
 * shared state, run queued) and a file burst. Every run starts through the run starter the apps
 * context registered with the scheduler.
 */
@Injectable()
export class TriggersService {
  private readonly logger = new Logger('Triggers');
  private policy: TriggerPolicy = DEFAULT_TRIGGER_POLICY;

  constructor(
    private readonly records: AppRepository,
    private readonly store: TriggerStore,
    private readonly scheduler: TriggerScheduler,
    private readonly queue: JobQueue,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    /** Schedule ticks fired and skipped (docs/operations.md, "Metrics"). */
    private readonly metrics: Metrics = new NoopMetrics(),
    /** Webhook subscriptions of other contexts (teams); absent in unit tests. */
    private readonly owned: WebhookOwners = new WebhookOwners(),
  ) {
    scheduler.alsoOnReconcile(() => this.recoverOccurrences());
    scheduler.alsoOnReconcile(() => this.drainAll());
    scheduler.onRunEnded((appId) => this.drainDeliveries(appId));
    scheduler.onPausedOccurrences((skipped) => this.recordPausedOccurrences(skipped));
  }

  /** The apps context's run starter (registered at start, before any trigger fires). */
  private get runs(): RunStarter {
    return this.scheduler.runStarter();
  }

  /** Settings from the server's configuration (consuming replicas set them before they start). */
  configure(policy: Partial<TriggerPolicy>): void {
    this.policy = { ...this.policy, ...policy };
  }

  // ── schedules ─────────────────────────────────────────────────────────────────────────

  /** The job of one occurrence: fires it when this caller claims it, else does nothing. */
  async fireSchedule(job: JobMap['trigger.schedule']): Promise<void> {
    const { appId, subscriptionId, scheduledMs } = job;
    // Side by side: each step before the run's start is a wait for a busy event loop and database.
    const [rows, app] = await Promise.all([this.store.schedules(appId), this.records.findById(appId)]);
    const row = rows.find((r) => r.subscriptionId === subscriptionId);
    // Already fired, rescheduled, dropped, or the app is paused (a paused row queues nothing).
    if (!row || isPausedRow(row) || row.nextMs !== scheduledMs) return;
    const sub = app && isScheduled(app) ? scheduleSubscriptions(app).find((s) => s.id === subscriptionId) : undefined;
    if (!app || !sub) {
      // A paused app's rows stay (they remember when the pause began); others go.
      if (app?.status !== 'paused') {
        await this.store.dropSchedules(appId, app ? scheduleSubscriptions(app).map((s) => s.id) : []);
      }
      return;
    }
    // Missed ones (downtime) fire once, as this one; the next is counted from now.
    const now = this.clock.now();
    const config = sub.source.config as ScheduleConfig;
    // The next one comes no sooner than the operator's floor after this one (`every: 1s` or a
    // cron every second would call the model back to back).
    const notBefore = Math.max(now, scheduledMs, scheduledMs + this.policy.minIntervalMs - 1);
    const next = this.scheduler.nextAfter(config, app.installedAt.getTime(), notBefore, appId);
    const key = occurrenceJobId(appId, subscriptionId, scheduledMs);
    // The claim: the row moves on and the occurrence is recorded as not started, atomically.
    const move = { appId, subscriptionId, fromMs: scheduledMs, toMs: next, key };
    if (!(await this.store.claimOccurrence(move, now))) return;
    // The app's rows as the claim left them: its next time needs no second read of them or the app.
    const moved = rows.flatMap((r) =>
      r.subscriptionId !== subscriptionId ? [r] : next === null ? [] : [{ ...r, nextMs: next }],
    );
    // The fence beside the next occurrence's job and the app's next time (one wait, not two;
    // the run's own writes and events come after the next time is written).
    const [, , begun] = await Promise.all([
      next !== null ? this.scheduler.enqueue({ ...row, nextMs: next }, true) : undefined,
      this.scheduler.refreshNextRun(appId, false, { rows: moved, app }),
      this.store.beginOccurrence(key, 1, this.clock.now()),
    ]);
    if (begun) await this.runOccurrence(app, { key, subscriptionId, scheduledMs, attempt: 1 }, true);
  }

  /** On resume: one `run_skipped` entry per subscription for the ticks that fell while paused. */
  private async recordPausedOccurrences(skipped: PausedOccurrences): Promise<void> {
    for (let i = 0; i < skipped.count; i++) this.metrics.scheduleTick('skipped');
    await this.runs.skipRun(
      skipped.appId,
      TriggerTexts.skippedWhilePaused(skipped.count, skipped.firstMs, skipped.lastMs),
      {
        subscriptionId: skipped.subscriptionId,
        skippedCount: skipped.count,
        firstScheduledAt: new Date(skipped.firstMs).toISOString(),
        lastScheduledAt: new Date(skipped.lastMs).toISOString(),
      },
    );
  }

  /**
   * Claims whose holder stopped (died, or lost its database) before their run started: each is
   * taken over by one replica once its lease ran out and fired here, at most once per
   * occurrence. Runs with every reconcile pass.
   */
  async recoverOccurrences(): Promise<void> {
    const now = this.clock.now();
    for (const occ of await this.store.staleOccurrences(now - this.policy.claimLeaseMs)) {
      // One that fails again (its run could not start) waits for the next pass; the others go on.
      await this.recoverOccurrence(occ, now).catch((err: Error) =>
        this.logger.warn('a schedule occurrence could not be taken over; retried after its lease', {
          appId: occ.appId,
          scheduledAt: new Date(occ.scheduledMs).toISOString(),
          error: err.message,
        }),
      );
    }
  }

  private async recoverOccurrence(occ: OccurrenceClaim, now: number): Promise<void> {
    if (!(await this.store.reclaimOccurrence(occ.key, occ.attempt, now))) return; // another replica has it
    const attempt = occ.attempt + 1;
    if (attempt > OCCURRENCE_ATTEMPTS) {
      await this.store.settleOccurrence(occ.key, now);
      this.logger.error('a schedule occurrence could not start its run; given up', {
        appId: occ.appId,
        scheduledAt: new Date(occ.scheduledMs).toISOString(),
        attempts: occ.attempt,
        hint: "the replicas' earlier warnings say why each try failed; the schedule goes on from its next occurrence",
      });
      return;
    }
    const app = await this.records.findById(occ.appId);
    const sub =
      app && isScheduled(app) ? scheduleSubscriptions(app).find((s) => s.id === occ.subscriptionId) : undefined;
    if (!app || !sub) {
      await this.store.settleOccurrence(occ.key, now); // paused, uninstalled or unsubscribed since
      return;
    }
    // A holder that passed the fence may have started the run before it stopped.
    if (occ.startedAtMs !== null && (await this.runs.runMessages(app, occurrenceRunId(occ.key))).length > 0) {
      await this.store.settleOccurrence(occ.key, now);
      return;
    }
    this.logger.warn('a schedule occurrence was claimed by a replica that stopped before its run; firing it here', {
      appId: occ.appId,
      scheduledAt: new Date(occ.scheduledMs).toISOString(),
      attempt,
    });
    await this.runOccurrence(app, { ...occ, attempt });
  }

  /**
   * Starts the run of a claimed occurrence (or records why not), then settles the claim. The
   * fence first (`begun`: the caller passed it): a holder whose lease ran out and was taken
   * over starts nothing.
   */
  private async runOccurrence(
    app: App,
    occ: { key: string; subscriptionId: string; scheduledMs: number; attempt: number },
    begun = false,
  ): Promise<void> {
    if (!begun && !(await this.store.beginOccurrence(occ.key, occ.attempt, this.clock.now()))) return;
    const started = await this.startGuarded(
      app,
      {
        type: 'schedule',
        data: { subscriptionId: occ.subscriptionId, scheduledAt: new Date(occ.scheduledMs).toISOString() },
      },
      occurrenceRunId(occ.key),
    );
    this.metrics.scheduleTick(started ? 'fired' : 'skipped');
    await this.store.settleOccurrence(occ.key, this.clock.now());
  }

  /** Starts a run unless repeated failures call for waiting (a skip) or pausing the app; whether it started. */
  private async startGuarded(loaded: App, trigger: RunTrigger, runId?: string): Promise<boolean> {
    const recent = await this.records.recentOutcomes(loaded.id, FAILURE_WINDOW);
    const failures = consecutiveFailures(recent);
    // Read after the activity when a failure was counted: the caller's copy of the app may
    // predate the run that failed, and the back-off must count from that run, not an older one.
    // With none counted the decision is to run whatever the copy says (most ticks).
    const app = failures > 0 ? ((await this.records.findById(loaded.id)) ?? loaded) : loaded;
    const decision = failureDecision(
      failures,
      app.automation.lastRunAtMs,
      this.clock.now(),
      this.policy.backoffMs,
      this.policy.pauseAfter,
    );
    if (decision.action === 'wait') {
      await this.runs.skipRun(app.id, TriggerTexts.backingOff(failures, decision.untilMs));
      return false;
    }
    if (decision.action === 'pause') {
      await this.pauseAfterFailures(app, failures);
      return false;
    }
    return this.start(app, trigger, runId);
  }

  private async pauseAfterFailures(app: App, failures: number): Promise<void> {
    const reason = TriggerTexts.pausedAfterFailures(failures, app.automation.lastError);
    // The reason first, so the pause's own status event already carries it.
    await this.records.update(app.id, { automation: { lastStatus: 'error', lastError: reason } });
    // The entry before the pause: whoever sees the app paused finds the entry saying why.
    await this.runs.skipRun(app.id, reason);
    await this.runs.pause(app.id);
    const updated = await this.records.update(app.id, { automation: { lastStatus: 'error', lastError: reason } });
    if (updated && updated !== 'already-installed') {
      await this.bus.publish(AppChannels.statusChanged, {
        appId: app.id,
        state: automationState(updated),
      } satisfies AppStatusChangedEvent);
    }
    this.logger.warn('digital human paused after repeated failed runs', { appId: app.id, failures });
  }

  private async start(app: App, trigger: RunTrigger, runId?: string): Promise<boolean> {
    const appId = app.id;
    try {
      const result = await this.runs.startRun(appId, trigger, { app, ...(runId === undefined ? {} : { runId }) });
      return result.outcome === 'started';
    } catch (err) {
      // Anything but "uninstalled or deleted meanwhile" (the database away, say) goes on up: the
      // occurrence stays claimed and not settled, and is fired again once its claim's lease ends
      // (recoverOccurrences), instead of being settled as if its run had been decided.
      if (!(err instanceof DomainError)) throw err;
      this.logger.warn('trigger could not start a run', {
        appId,
        trigger: trigger.type,
        error: (err as Error).message,
      });
      return false;
    }
  }

  // ── webhooks ──────────────────────────────────────────────────────────────────────────

  /**
   * `POST /hooks/<path>`: finds the subscription, checks the signature over the raw body,
   * claims the delivery in shared state (a repeat is answered alike and starts nothing) and
   * puts it at the end of the app's queue (answered 429 when the queue is full).
   */
  async deliverWebhook(rawPath: string, rawBody: Buffer, headers: Headers): Promise<WebhookOutcome> {
    const path = normalizeHookPath(rawPath);
    const target = (await this.findWebhook(path)) ?? (await this.findOwnedWebhook(path));
    if (!target) return { accepted: false, refusal: 'unknown-path', error: WebhookTexts.notFound(path) };
    if (rawBody.length > WEBHOOK_MAX_BYTES)
      return { accepted: false, refusal: 'too-large', error: 'Request body is too large' };
    const secret = target.config.secret;
    if (typeof secret === 'string' && secret !== '' && !signatureValid(secret, rawBody, headers)) {
      return { accepted: false, refusal: 'bad-signature', error: WebhookTexts.badSignature };
    }
    const contentType = mediaType(headers);
    const text = webhookJsonText(rawBody, contentType);
    if (text === null) return { accepted: false, refusal: 'not-json', error: WebhookTexts.notJson };
    // The body rules of every JSON request: a bounded depth, and no NUL or unpaired surrogate
    // (neither can be stored), checked before anything is claimed.
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
      return { accepted: false, refusal: 'bad-body', error: WebhookTexts.tooDeep(MAX_JSON_DEPTH) };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { accepted: false, refusal: 'not-json', error: WebhookTexts.notJson };
    }
    const unsafe = findUnsafeText(body, 'body');
    if (unsafe) return { accepted: false, refusal: 'bad-body', error: `${unsafe.field} ${unsafe.reason}` };
    const event = eventHeaders(headers);
    const unsafeHeader = findUnsafeText(event, 'headers');
    if (unsafeHeader) {
      return { accepted: false, refusal: 'bad-body', error: `${unsafeHeader.field} ${unsafeHeader.reason}` };
    }
    const id = deliveryId(headers);
    const now = this.clock.now();
    const claims = webhookClaims(target.ownerId, target.subscriptionId, rawBody, id);
    const release = () =>
      this.store.releaseClaims(
        claims.map((c) => c.key),
        now,
      );
    if (target.kind !== null) {
      for (const claim of claims) {
        if (!(await this.store.claim(claim.key, target.ownerId, now, claim.windowMs))) {
          return { accepted: true, duplicate: true };
        }
      }
      // Another context's subscription (a team's): its owner decides what a delivery starts.
      try {
        await this.queue.add(
          'trigger.webhook',
          {
            appId: target.ownerId,
            subscriptionId: target.subscriptionId,
            path,
            body,
            deliveryId: id,
            owner: target.kind,
          },
          { jobId: webhookDeliveryJobId(claims, now) },
        );
      } catch (err) {
        await release();
        throw err;
      }
      return { accepted: true, duplicate: false };
    }
    const appId = target.ownerId;
    // Claimed and recorded as one step: a delivery is never kept as received without being queued.
    const accepted = await this.store.acceptDelivery(
      claims,
      {
        appId,
        subscriptionId: target.subscriptionId,
        kind: 'webhook',
        runId: randomUUID(),
        payload: {
          subscriptionId: target.subscriptionId,
          path,
          deliveryId: id,
          ...(contentType ? { contentType } : {}),
          headers: event,
          body,
        },
        receivedMs: now,
      },
      this.policy.webhookQueueMax,
      now,
    );
    if (accepted.outcome === 'repeat') return { accepted: true, duplicate: true };
    if (accepted.outcome === 'full') {
      // Refused, so the sender retries later: neither kept as received nor run.
      await this.store.countRefusal(appId, now);
      this.logger.warn('a webhook delivery was refused: the queue of its digital human is full', {
        appId,
        max: this.policy.webhookQueueMax,
      });
      return {
        accepted: false,
        refusal: 'queue-full',
        error: WebhookTexts.queueFull(this.policy.webhookQueueMax),
        retryAfterS: WEBHOOK_RETRY_AFTER_S,
      };
    }
    // Recorded: the answer does not wait for the drain (queueDrain).
    void this.queueDrain(appId, accepted.seq);
    return { accepted: true, duplicate: false };
  }

  /**
   * After a delivery was recorded: its drain job, unless a run of the app is in progress (that
   * run's end drains the app's deliveries, after this one was recorded; a burst to one app queued
   * a job per delivery, each only to find the app busy). Not awaited by the answer: should this
   * fail (the queue is away) or the replica die first, the delivery still runs, drained by the
   * app's next delivery, the end of its current run or the next reconcile pass; the sender is
   * told it was not taken only when nothing was recorded.
   */
  private async queueDrain(appId: string, seq: string): Promise<void> {
    try {
      if (await this.runs.runInProgress(appId)) return;
      // The job id names the delivery's sequence number, never used again: no failed job of it to clear.
      await this.queue.add(
        'trigger.webhook',
        { appId, seq },
        { jobId: deliveryDrainJobId(appId, seq), uniqueId: true },
      );
    } catch (err) {
      this.logger.warn(
        'a webhook delivery was recorded but its drain job could not be queued; it waits for the next drain',
        {
          appId,
          error: (err as Error).message,
        },
      );
    }
  }

  /**
   * The job of an accepted delivery: starts the app's next queued delivery if the app is free.
   * A job queued before deliveries waited in Postgres carries its delivery whole: it joins the queue.
   */
  async fireWebhook(job: JobMap['trigger.webhook']): Promise<void> {
    if (job.owner) {
      const { appId: ownerId, subscriptionId = '', path = '', body = null, deliveryId = null } = job;
      await this.owned
        .fire(job.owner, { ownerId, subscriptionId, path, body, deliveryId })
        .catch((err: Error) =>
          this.logger.warn('a webhook delivery could not start its work', { owner: job.owner, error: err.message }),
        );
      return;
    }
    if (job.seq === undefined && job.subscriptionId !== undefined) {
      await this.store.enqueueDelivery(
        {
          appId: job.appId,
          subscriptionId: job.subscriptionId,
          kind: 'webhook',
          runId: randomUUID(),
          payload: {
            subscriptionId: job.subscriptionId,
            path: job.path ?? '',
            deliveryId: job.deliveryId ?? null,
            body: job.body ?? null,
          },
          receivedMs: this.clock.now(),
        },
        null,
      );
    }
    await this.drainDeliveries(job.appId);
  }

  /** Every app with deliveries waiting (each reconcile pass: a restart, a missed run end). */
  async drainAll(): Promise<void> {
    for (const appId of await this.store.deliveryApps()) await this.drainDeliveries(appId);
  }

  /**
   * Starts the app's first queued delivery when the app is free; one replica at a time per app
   * (a claim with a lease), so deliveries start in order. Called when a delivery is queued, when
   * a run of the app ends, and on each reconcile pass.
   */
  async drainDeliveries(appId: string): Promise<void> {
    for (let attempt = 0; attempt < DISPATCH_TRIES; attempt++) {
      if (!(await this.store.nextDelivery(appId))) return;
      // A run of the app in progress: its end drains again (after every delivery seen here was
      // queued), so nothing is dispatched now. One look-up instead of the claim, the app, its
      // activity and the delivery's marks that a dispatch finding the app busy took (a burst of
      // deliveries to one app queues a drain job for each while its runs go one at a time).
      if (await this.runs.runInProgress(appId)) return;
      const lock = `queue:${appId}`;
      const at = this.clock.now();
      if (await this.store.claim(lock, appId, at, DISPATCH_LEASE_MS)) {
        try {
          await this.dispatchNext(appId);
        } finally {
          await this.store.releaseClaims([lock], at);
        }
        return;
      }
      // Another replica is dispatching: it may have looked before this delivery was queued.
      await new Promise((resolve) => setTimeout(resolve, DISPATCH_RETRY_MS));
    }
  }

  private async dispatchNext(appId: string): Promise<void> {
    for (;;) {
      const next = await this.store.nextDelivery(appId);
      if (!next) return;
      const app = await this.records.findById(appId);
      if (!app || app.status === 'uninstalled') {
        await this.store.dropDeliveries(appId);
        return;
      }
      // Half-started before its dispatcher stopped: its run may have begun.
      if (next.startedMs !== null && (await this.runs.runMessages(app, next.runId)).length > 0) {
        await this.store.removeDelivery(next.seq);
        continue;
      }
      if (app.status !== 'active') return; // paused or waiting for an answer: the deliveries wait
      const failures = consecutiveFailures(await this.records.recentOutcomes(app.id, FAILURE_WINDOW));
      const decision = failureDecision(
        failures,
        app.automation.lastRunAtMs,
        this.clock.now(),
        this.policy.backoffMs,
        this.policy.pauseAfter,
      );
      if (decision.action === 'wait') {
        // Backing off after failed runs: the delivery waits until then (nothing is skipped).
        await this.queue.add(
          'trigger.webhook',
          { appId, seq: next.seq },
          {
            jobId: deliveryDrainJobId(appId, `${next.seq}-${decision.untilMs}`),
            delayMs: decision.untilMs - this.clock.now(),
          },
        );
        return;
      }
      if (decision.action === 'pause') {
        await this.pauseAfterFailures(app, failures);
        return;
      }
      const outcome = await this.startDelivery(next, app);
      if (outcome === 'waiting') return;
      await this.store.removeDelivery(next.seq);
      if (outcome === 'started') {
        await this.reportRefusals(appId);
        return;
      }
    }
  }

  /**
   * Starts one queued delivery's run; `waiting` when the app is busy (the delivery stays first).
   * `app`: as the dispatch read it under its claim, just before.
   */
  private async startDelivery(next: QueuedDelivery, app: App): Promise<'started' | 'waiting' | 'skipped'> {
    await this.store.markDelivery(next.seq, this.clock.now());
    let outcome: 'started' | 'waiting' | 'skipped';
    try {
      outcome = await this.runs.startQueuedRun(next.appId, { type: next.kind, data: next.payload }, next.runId, app);
    } catch (err) {
      await this.store.markDelivery(next.seq, null);
      this.logger.warn('a queued delivery could not start its run', {
        appId: next.appId,
        trigger: next.kind,
        error: (err as Error).message,
      });
      return 'waiting';
    }
    if (outcome === 'waiting') await this.store.markDelivery(next.seq, null);
    return outcome;
  }

  /** One `run_skipped` entry for the deliveries refused while the queue was full. */
  private async reportRefusals(appId: string): Promise<void> {
    const refused = await this.store.takeRefusals(appId);
    if (!refused) return;
    const max = this.policy.webhookQueueMax;
    await this.runs.skipRun(appId, WebhookTexts.refused(refused.count, max, refused.firstMs, refused.lastMs), {
      refusedCount: refused.count,
      queueMax: max,
      firstRefusedAt: new Date(refused.firstMs).toISOString(),
      lastRefusedAt: new Date(refused.lastMs).toISOString(),
    });
  }

  /** The installed, not paused app whose webhook subscription has this path. */
  private async findWebhook(path: string): Promise<WebhookTarget | null> {
    if (path === '') return null;
    for (const app of await this.records.list({ webhookPath: path })) {
      if (!isScheduled(app)) continue;
      const sub = (app.spec.subscriptions ?? []).find(
        (s) => s.source.type === 'webhook' && s.source.config.path === path,
      );
      if (sub) return { ownerId: app.id, subscriptionId: sub.id, config: sub.source.config, kind: null };
    }
    return null;
  }

  /** A webhook subscription another context owns (a team's), when no digital human's has the path. */
  private async findOwnedWebhook(path: string): Promise<WebhookTarget | null> {
    if (path === '') return null;
    return this.owned.find(path);
  }

  // ── files ─────────────────────────────────────────────────────────────────────────────

  /**
   * One debounced burst of matching changes: one run, once (the burst's key is claimed). It
   * joins the app's queue, so a burst arriving while the app runs waits for the next run.
   */
  /**
   * The claim of a burst to another context's file subscription (a team's): true for exactly one
   * caller across replicas, which then fires it.
   */
  async claimOwnedFileBurst(ownerId: string, subscriptionId: string, burstKey: string): Promise<boolean> {
    return this.store.claim(
      `file:${ownerId}:${digest(subscriptionId, 12)}:${burstKey}`,
      ownerId,
      this.clock.now(),
      Infinity,
    );
  }

  async fireFileBurst(appId: string, subscriptionId: string, burstKey: string, changes: unknown[]): Promise<void> {
    const now = this.clock.now();
    if (!(await this.store.claim(`file:${appId}:${digest(subscriptionId, 12)}:${burstKey}`, appId, now, Infinity))) {
      return;
    }
    await this.store.enqueueDelivery(
      {
        appId,
        subscriptionId,
        kind: 'file',
        runId: randomUUID(),
        payload: { subscriptionId, changes },
        receivedMs: now,
      },
      null,
    );
    await this.drainDeliveries(appId);
  }
}
