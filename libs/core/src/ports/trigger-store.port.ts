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

export abstract class TriggerStore {
  /** Rows of one app, or of every app. */
  abstract schedules(appId?: string): Promise<ScheduleRow[]>;
  /** Creates or replaces a row. */
  abstract putSchedule(row: ScheduleRow): Promise<void>;
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
  /** Deletes the app's rows except those of `keep` subscription ids. */
  abstract dropSchedules(appId: string, keep?: readonly string[]): Promise<void>;
  /**
   * Claims `key` for the caller: true when nobody claimed it within the last `windowMs`
   * (then it is claimed as of `nowMs`), false for a repeat. Atomic across replicas.
   */
  abstract claim(key: string, appId: string, nowMs: number, windowMs: number): Promise<boolean>;
  /** Forgets claims older than `beforeMs`. */
  abstract pruneClaims(beforeMs: number): Promise<void>;
}
