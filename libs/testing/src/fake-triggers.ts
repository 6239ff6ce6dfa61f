import type { JobMap } from '#contracts/jobs.js';
import { type JobOptions, type JobProcessor, JobQueue, type JobRepeat } from '#core/ports/job-queue.port.js';
import {
  type OccurrenceClaim,
  type OccurrenceMove,
  type QueuedDelivery,
  type RefusedDeliveries,
  type ScheduleRow,
  TriggerStore,
} from '#core/ports/trigger-store.port.js';

/** TriggerStore in memory, with the same claim semantics as the Postgres one. */
export class MemoryTriggerStore extends TriggerStore {
  readonly rows = new Map<string, ScheduleRow>();
  readonly claims = new Map<string, number>();
  readonly occurrences = new Map<string, OccurrenceClaim & { settledAtMs: number | null }>();

  private key(appId: string, subscriptionId: string): string {
    return JSON.stringify([appId, subscriptionId]);
  }

  async schedules(appId?: string): Promise<ScheduleRow[]> {
    return [...this.rows.values()].filter((r) => appId === undefined || r.appId === appId).map((r) => ({ ...r }));
  }

  async putSchedule(row: ScheduleRow): Promise<void> {
    this.rows.set(this.key(row.appId, row.subscriptionId), { ...row });
  }

  async addSchedules(rows: readonly ScheduleRow[]): Promise<void> {
    for (const row of rows) {
      const key = this.key(row.appId, row.subscriptionId);
      if (!this.rows.has(key)) this.rows.set(key, { ...row });
    }
  }

  async advanceSchedule(appId: string, subscriptionId: string, fromMs: number, toMs: number | null): Promise<boolean> {
    const key = this.key(appId, subscriptionId);
    const row = this.rows.get(key);
    if (!row || row.nextMs !== fromMs) return false;
    if (toMs === null) this.rows.delete(key);
    else row.nextMs = toMs;
    return true;
  }

  async claimOccurrence(move: OccurrenceMove, nowMs: number): Promise<boolean> {
    if (this.occurrences.has(move.key)) return false;
    if (!(await this.advanceSchedule(move.appId, move.subscriptionId, move.fromMs, move.toMs))) return false;
    this.occurrences.set(move.key, {
      key: move.key,
      appId: move.appId,
      subscriptionId: move.subscriptionId,
      scheduledMs: move.fromMs,
      attempt: 1,
      claimedAtMs: nowMs,
      startedAtMs: null,
      settledAtMs: null,
    });
    return true;
  }

  async beginOccurrence(key: string, attempt: number, nowMs: number): Promise<boolean> {
    const occ = this.occurrences.get(key);
    if (!occ || occ.attempt !== attempt || occ.settledAtMs !== null) return false;
    occ.startedAtMs = nowMs;
    occ.claimedAtMs = nowMs;
    return true;
  }

  async settleOccurrence(key: string, nowMs: number): Promise<void> {
    const occ = this.occurrences.get(key);
    if (occ && occ.settledAtMs === null) occ.settledAtMs = nowMs;
  }

  async staleOccurrences(beforeMs: number): Promise<OccurrenceClaim[]> {
    return [...this.occurrences.values()]
      .filter((o) => o.settledAtMs === null && o.claimedAtMs < beforeMs)
      .map(({ settledAtMs: _settled, ...o }) => ({ ...o }));
  }

  async reclaimOccurrence(key: string, attempt: number, nowMs: number): Promise<boolean> {
    const occ = this.occurrences.get(key);
    if (!occ || occ.attempt !== attempt || occ.settledAtMs !== null) return false;
    occ.attempt++;
    occ.claimedAtMs = nowMs;
    return true;
  }

  async dropSchedules(appId: string, keep: readonly string[] = []): Promise<void> {
    for (const [key, row] of this.rows)
      if (row.appId === appId && !keep.includes(row.subscriptionId)) this.rows.delete(key);
  }

  async claim(key: string, _appId: string, nowMs: number, windowMs: number): Promise<boolean> {
    const at = this.claims.get(key);
    if (at !== undefined && !(Number.isFinite(windowMs) && at < nowMs - windowMs)) return false;
    this.claims.set(key, nowMs);
    return true;
  }

  async releaseClaims(keys: readonly string[], nowMs: number): Promise<void> {
    for (const key of keys) if (this.claims.get(key) === nowMs) this.claims.delete(key);
  }

  async pruneClaims(beforeMs: number): Promise<void> {
    for (const [key, at] of this.claims) if (at < beforeMs) this.claims.delete(key);
    for (const [key, o] of this.occurrences)
      if (o.settledAtMs !== null && o.claimedAtMs < beforeMs) this.occurrences.delete(key);
  }

  readonly deliveries: QueuedDelivery[] = [];
  readonly refusals = new Map<string, RefusedDeliveries>();
  private deliverySeq = 0;

  async enqueueDelivery(d: Omit<QueuedDelivery, 'seq' | 'startedMs'>, max: number | null): Promise<string | null> {
    if (max !== null && (await this.countDeliveries(d.appId)) >= max) return null;
    const seq = String(++this.deliverySeq);
    this.deliveries.push({ ...structuredClone(d), seq, startedMs: null });
    return seq;
  }

  async nextDelivery(appId: string): Promise<QueuedDelivery | null> {
    const found = this.deliveries.find((d) => d.appId === appId);
    return found ? structuredClone(found) : null;
  }

  async markDelivery(seq: string, startedMs: number | null): Promise<void> {
    const found = this.deliveries.find((d) => d.seq === seq);
    if (found) found.startedMs = startedMs;
  }

  async removeDelivery(seq: string): Promise<void> {
    const i = this.deliveries.findIndex((d) => d.seq === seq);
    if (i >= 0) this.deliveries.splice(i, 1);
  }

  async countDeliveries(appId: string): Promise<number> {
    return this.deliveries.filter((d) => d.appId === appId).length;
  }

  async deliveryApps(): Promise<string[]> {
    return [...new Set(this.deliveries.map((d) => d.appId))];
  }

  async dropDeliveries(appId: string): Promise<void> {
    for (let i = this.deliveries.length - 1; i >= 0; i--)
      if (this.deliveries[i]!.appId === appId) this.deliveries.splice(i, 1);
    this.refusals.delete(appId);
  }

  async countRefusal(appId: string, nowMs: number): Promise<void> {
    const r = this.refusals.get(appId);
    this.refusals.set(
      appId,
      r ? { ...r, count: r.count + 1, lastMs: nowMs } : { count: 1, firstMs: nowMs, lastMs: nowMs },
    );
  }

  async takeRefusals(appId: string): Promise<RefusedDeliveries | null> {
    const r = this.refusals.get(appId) ?? null;
    this.refusals.delete(appId);
    return r;
  }
}

/** A queue that records adds; a second add with a known job id is a no-op, as in BullMQ. */
export class RecordingJobQueue extends JobQueue {
  readonly jobs = new Map<string, { name: string; data: unknown; options: JobOptions }>();
  private seq = 0;

  async add<N extends keyof JobMap & string>(name: N, data: JobMap[N], options: JobOptions = {}): Promise<string> {
    const id = options.jobId ?? `job-${++this.seq}`;
    if (!this.jobs.has(id)) this.jobs.set(id, { name, data, options });
    return id;
  }

  /** Jobs of one name, in the order added. */
  named<N extends keyof JobMap & string>(name: N): Array<{ id: string; data: JobMap[N]; options: JobOptions }> {
    return [...this.jobs]
      .filter(([, job]) => job.name === name)
      .map(([id, job]) => ({ id, data: job.data as JobMap[N], options: job.options }));
  }

  async repeat(_key: string, _name: string, _data: unknown, _repeat: JobRepeat): Promise<void> {}
  async removeRepeat(): Promise<void> {}
  process<N extends keyof JobMap & string>(_name: N, _processor: JobProcessor<JobMap[N]>): void {}
  async startConsuming(): Promise<void> {}
  isConsuming(): boolean {
    return true;
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}
