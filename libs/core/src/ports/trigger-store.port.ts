/**
 * Trigger state kept in Postgres, shared by every replica: each schedule subscription's next
 * occurrence (the source the job queue's delayed jobs are rebuilt from), and claims that make
 * one occurrence of a trigger (a webhook delivery, a file burst) start at most one run.
 */

export interface ScheduleRow {
  appId: string;
  subscriptionId: string;
  /** `scheduleSignature` of the timing the row was computed for. */
  signature: string;
  /** Epoch ms of the occurrence due next (in the past after downtime: the catch-up). */
  nextMs: number;
}

/**
 * A claimed schedule occurrence (app, subscription, scheduled time) until its run started (or
 * the tick was skipped). A claim whose holder stopped before that is taken over once its lease
 * ran out, so a replica dying between the claim and the run start loses no tick.
 */
export interface OccurrenceClaim {
  /** `occurrenceJobId(appId, subscriptionId, scheduledMs)`. */
  key: string;
  appId: string;
  subscriptionId: string;
  scheduledMs: number;
  /** 1 for the first holder, one more for each take-over; only the current attempt may start the run. */
  attempt: number;
  /** When the current holder claimed it (or passed the fence): its lease runs from here. */
  claimedAtMs: number;
  /** When a holder passed the fence and began starting the run; null before. */
  startedAtMs: number | null;
}

export interface OccurrenceMove {
  appId: string;
  subscriptionId: string;
  /** The occurrence claimed: the row must still be at it. */
  fromMs: number;
  /** The row's next occurrence; null: none, the row goes. */
  toMs: number | null;
  key: string;
}

/**
 * An accepted delivery (a webhook, a file batch) waiting for its app's next run: the app's
 * deliveries start one run each, one at a time, in `seq` order (docs/api/triggers.md, "Queued deliveries").
 */
export interface QueuedDelivery {
  /** Insertion order across the table (a bigint as text). */
  seq: string;
  appId: string;
  subscriptionId: string;
  kind: 'webhook' | 'file';
  /** The run's id, chosen at intake: a replica finding the delivery half-started can tell whether its run began. */
  runId: string;
  /** The run's trigger data. */
  payload: Record<string, unknown>;
  receivedMs: number;
  /** When a dispatcher began starting its run; null while it waits. */
  startedMs: number | null;
}

/** Deliveries refused while an app's queue was full, since the last one was reported. */
export interface RefusedDeliveries {
  count: number;
  firstMs: number;
  lastMs: number;
}

/** What `TriggerStore.acceptDelivery` did with a delivery. */
export type AcceptedDelivery = { outcome: 'queued'; seq: string } | { outcome: 'repeat' } | { outcome: 'full' };

export abstract class TriggerStore {
  /** Rows of one app, or of every app. */
  abstract schedules(appId?: string): Promise<ScheduleRow[]>;
  /** Creates or replaces a row. */
  abstract putSchedule(row: ScheduleRow): Promise<void>;
  /**
   * Creates the rows of which none exists yet for their app and subscription (first rows of many
   * apps in one statement); an existing row is left as it is, whatever it holds.
   */
  abstract addSchedules(rows: readonly ScheduleRow[]): Promise<void>;
  /**
   * Moves a row from the occurrence `fromMs` to `toMs`, only if it is still at `fromMs`: true
   * for exactly one caller, which then fires the occurrence (the claim of a schedule tick).
   * `toMs` null: the schedule has no further occurrence and the row goes.
   */
  abstract advanceSchedule(
    appId: string,
    subscriptionId: string,
    fromMs: number,
    toMs: number | null,
  ): Promise<boolean>;
  /**
   * The claim of a schedule tick, atomic: moves the row from `fromMs` to `toMs` (only if it is
   * still at `fromMs`) and records the occurrence as claimed, unsettled, attempt 1, in one
   * statement. True for exactly one caller, which then fires the occurrence.
   */
  abstract claimOccurrence(move: OccurrenceMove, nowMs: number): Promise<boolean>;
  /**
   * The fence right before a run starts: true when `attempt` is still the occurrence's current
   * one and it is unsettled; marks it started and renews the lease as of `nowMs`.
   */
  abstract beginOccurrence(key: string, attempt: number, nowMs: number): Promise<boolean>;
  /** The occurrence's run started (or the tick was skipped or found moot): nothing to take over. */
  abstract settleOccurrence(key: string, nowMs: number): Promise<void>;
  /** Unsettled occurrences whose lease began before `beforeMs` (their holder may have died). */
  abstract staleOccurrences(beforeMs: number): Promise<OccurrenceClaim[]>;
  /**
   * Takes a stale occurrence over: attempt `attempt` → `attempt + 1` and a fresh lease as of
   * `nowMs`, only if it is still unsettled at `attempt`. True for exactly one caller.
   */
  abstract reclaimOccurrence(key: string, attempt: number, nowMs: number): Promise<boolean>;
  /** Deletes the app's rows except those of `keep` subscription ids. */
  abstract dropSchedules(appId: string, keep?: readonly string[]): Promise<void>;
  /**
   * Claims `key` for the caller: true when nobody claimed it within the last `windowMs`
   * (then it is claimed as of `nowMs`), false for a repeat. Atomic across replicas.
   */
  abstract claim(key: string, appId: string, nowMs: number, windowMs: number): Promise<boolean>;
  /** Gives claims taken as of `nowMs` back (their work could not be queued): a retry is not a repeat. */
  abstract releaseClaims(keys: readonly string[], nowMs: number): Promise<void>;
  /** Forgets claims, and settled occurrences, older than `beforeMs`. */
  abstract pruneClaims(beforeMs: number): Promise<void>;

  /**
   * Adds a delivery at the end of its app's queue unless `max` deliveries already wait there
   * (null: no bound). The new `seq`, or null when the queue is full. Atomic across replicas.
   */
  abstract enqueueDelivery(
    delivery: Omit<QueuedDelivery, 'seq' | 'startedMs'>,
    max: number | null,
  ): Promise<string | null>;
  /**
   * Takes a delivery's de-duplication `claims` as of `nowMs` and, when every one was free, adds
   * the delivery at the end of its app's queue as `enqueueDelivery` does: `repeat` at the first
   * claim already held (the claims taken before it stay), `full` when the queue is full (the
   * claims taken are given back). Adapters do it as one atomic step across replicas, so a
   * delivery is never claimed without being recorded; this default, one call after another, is
   * for stores of one process.
   */
  async acceptDelivery(
    claims: ReadonlyArray<{ key: string; windowMs: number }>,
    delivery: Omit<QueuedDelivery, 'seq' | 'startedMs'>,
    max: number | null,
    nowMs: number,
  ): Promise<AcceptedDelivery> {
    for (const claim of claims) {
      if (!(await this.claim(claim.key, delivery.appId, nowMs, claim.windowMs))) return { outcome: 'repeat' };
    }
    const seq = await this.enqueueDelivery(delivery, max);
    if (seq !== null) return { outcome: 'queued', seq };
    await this.releaseClaims(
      claims.map((c) => c.key),
      nowMs,
    );
    return { outcome: 'full' };
  }
  /** The app's first waiting delivery. */
  abstract nextDelivery(appId: string): Promise<QueuedDelivery | null>;
  /** Marks a delivery as being started as of `nowMs` (null: waiting again). */
  abstract markDelivery(seq: string, startedMs: number | null): Promise<void>;
  /** The delivery's run started (or was skipped with a reason recorded): it leaves the queue. */
  abstract removeDelivery(seq: string): Promise<void>;
  /** How many deliveries wait for the app. */
  abstract countDeliveries(appId: string): Promise<number>;
  /** Apps with deliveries waiting. */
  abstract deliveryApps(): Promise<string[]>;
  /** The app is gone: its waiting deliveries and refusal count go. */
  abstract dropDeliveries(appId: string): Promise<void>;
  /** One more delivery refused at `nowMs` because the app's queue was full. */
  abstract countRefusal(appId: string, nowMs: number): Promise<void>;
  /** The refusals counted since the last call (and forgets them); null when none. */
  abstract takeRefusals(appId: string): Promise<RefusedDeliveries | null>;
}
