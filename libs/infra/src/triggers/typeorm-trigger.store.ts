import type { DataSource } from 'typeorm';
import {
  type AcceptedDelivery,
  type OccurrenceClaim,
  type OccurrenceMove,
  type QueuedDelivery,
  type RefusedDeliveries,
  type ScheduleRow,
  TriggerStore,
} from '#core/ports/trigger-store.port.js';
import { returningRows } from '../database/returning-rows.js';

interface ScheduleRecord {
  app_id: string;
  subscription_id: string;
  signature: string;
  next_ms: string;
}

interface OccurrenceRecord {
  key: string;
  app_id: string;
  subscription_id: string;
  scheduled_ms: string;
  attempt: number;
  claimed_at_ms: string;
  started_at_ms: string | null;
}

const toOccurrence = (r: OccurrenceRecord): OccurrenceClaim => ({
  key: r.key,
  appId: r.app_id,
  subscriptionId: r.subscription_id,
  scheduledMs: Number(r.scheduled_ms),
  attempt: Number(r.attempt),
  claimedAtMs: Number(r.claimed_at_ms),
  startedAtMs: r.started_at_ms === null ? null : Number(r.started_at_ms),
});

interface DeliveryRecord {
  seq: string;
  app_id: string;
  subscription_id: string;
  kind: string;
  run_id: string;
  payload: Record<string, unknown>;
  received_ms: string;
  started_ms: string | null;
}

const toDelivery = (r: DeliveryRecord): QueuedDelivery => ({
  seq: String(r.seq),
  appId: r.app_id,
  subscriptionId: r.subscription_id,
  kind: r.kind === 'file' ? 'file' : 'webhook',
  runId: r.run_id,
  payload: r.payload,
  receivedMs: Number(r.received_ms),
  startedMs: r.started_ms === null ? null : Number(r.started_ms),
});

/** Rows per statement of `addSchedules` (four array parameters each). */
const ADD_SCHEDULES_BATCH = 1000;

const toRow = (r: ScheduleRecord): ScheduleRow => ({
  appId: r.app_id,
  subscriptionId: r.subscription_id,
  signature: r.signature,
  nextMs: Number(r.next_ms),
});

/** TriggerStore on the server's Postgres (embedded or DATABASE_URL): single statements, atomic across replicas. */
export class TypeormTriggerStore extends TriggerStore {
  constructor(private readonly ds: DataSource) {
    super();
  }

  async schedules(appId?: string): Promise<ScheduleRow[]> {
    const rows: ScheduleRecord[] =
      appId === undefined
        ? await this.ds.query(`SELECT * FROM "trigger_schedule"`)
        : await this.ds.query(`SELECT * FROM "trigger_schedule" WHERE "app_id" = $1`, [appId]);
    return rows.map(toRow);
  }

  async putSchedule(row: ScheduleRow): Promise<void> {
    await this.ds.query(
      `INSERT INTO "trigger_schedule" ("app_id", "subscription_id", "signature", "next_ms") VALUES ($1, $2, $3, $4)
       ON CONFLICT ("app_id", "subscription_id") DO UPDATE SET "signature" = EXCLUDED."signature", "next_ms" = EXCLUDED."next_ms"`,
      [row.appId, row.subscriptionId, row.signature, String(row.nextMs)],
    );
  }

  async addSchedules(rows: readonly ScheduleRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += ADD_SCHEDULES_BATCH) {
      const batch = rows.slice(i, i + ADD_SCHEDULES_BATCH);
      await this.ds.query(
        `INSERT INTO "trigger_schedule" ("app_id", "subscription_id", "signature", "next_ms")
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[])
         ON CONFLICT ("app_id", "subscription_id") DO NOTHING`,
        [
          batch.map((r) => r.appId),
          batch.map((r) => r.subscriptionId),
          batch.map((r) => r.signature),
          batch.map((r) => String(r.nextMs)),
        ],
      );
    }
  }

  async advanceSchedule(appId: string, subscriptionId: string, fromMs: number, toMs: number | null): Promise<boolean> {
    const result: unknown =
      toMs === null
        ? await this.ds.query(
            `DELETE FROM "trigger_schedule" WHERE "app_id" = $1 AND "subscription_id" = $2 AND "next_ms" = $3 RETURNING "app_id"`,
            [appId, subscriptionId, String(fromMs)],
          )
        : await this.ds.query(
            `UPDATE "trigger_schedule" SET "next_ms" = $4 WHERE "app_id" = $1 AND "subscription_id" = $2 AND "next_ms" = $3 RETURNING "app_id"`,
            [appId, subscriptionId, String(fromMs), String(toMs)],
          );
    return returningRows(result).length === 1;
  }

  async claimOccurrence(move: OccurrenceMove, nowMs: number): Promise<boolean> {
    // One statement: the row moves on and the occurrence is recorded as claimed, or neither.
    const mine = `"app_id" = $1 AND "subscription_id" = $2 AND "next_ms" = $3::bigint
      AND NOT EXISTS (SELECT 1 FROM "trigger_occurrence" WHERE "key" = $4)`;
    const moved =
      move.toMs === null
        ? `DELETE FROM "trigger_schedule" WHERE ${mine} RETURNING "app_id"`
        : `UPDATE "trigger_schedule" SET "next_ms" = $6::bigint WHERE ${mine} RETURNING "app_id"`;
    const params = [move.appId, move.subscriptionId, String(move.fromMs), move.key, String(nowMs)];
    if (move.toMs !== null) params.push(String(move.toMs));
    const result: unknown = await this.ds.query(
      `WITH "moved" AS (${moved})
       INSERT INTO "trigger_occurrence" ("key", "app_id", "subscription_id", "scheduled_ms", "attempt", "claimed_at_ms")
       SELECT $4::text, "app_id", $2::text, $3::bigint, 1, $5::bigint FROM "moved"
       ON CONFLICT ("key") DO NOTHING RETURNING "key"`,
      params,
    );
    return returningRows(result).length === 1;
  }

  async beginOccurrence(key: string, attempt: number, nowMs: number): Promise<boolean> {
    const result: unknown = await this.ds.query(
      `UPDATE "trigger_occurrence" SET "started_at_ms" = $3, "claimed_at_ms" = $3
       WHERE "key" = $1 AND "attempt" = $2 AND "settled_at_ms" IS NULL RETURNING "key"`,
      [key, attempt, String(nowMs)],
    );
    return returningRows(result).length === 1;
  }

  async settleOccurrence(key: string, nowMs: number): Promise<void> {
    await this.ds.query(
      `UPDATE "trigger_occurrence" SET "settled_at_ms" = $2 WHERE "key" = $1 AND "settled_at_ms" IS NULL`,
      [key, String(nowMs)],
    );
  }

  async staleOccurrences(beforeMs: number): Promise<OccurrenceClaim[]> {
    const rows: OccurrenceRecord[] = await this.ds.query(
      `SELECT * FROM "trigger_occurrence" WHERE "settled_at_ms" IS NULL AND "claimed_at_ms" < $1 ORDER BY "scheduled_ms"`,
      [String(beforeMs)],
    );
    return rows.map(toOccurrence);
  }

  async reclaimOccurrence(key: string, attempt: number, nowMs: number): Promise<boolean> {
    const result: unknown = await this.ds.query(
      `UPDATE "trigger_occurrence" SET "attempt" = "attempt" + 1, "claimed_at_ms" = $3
       WHERE "key" = $1 AND "attempt" = $2 AND "settled_at_ms" IS NULL RETURNING "key"`,
      [key, attempt, String(nowMs)],
    );
    return returningRows(result).length === 1;
  }

  async dropSchedules(appId: string, keep: readonly string[] = []): Promise<void> {
    if (keep.length === 0) {
      await this.ds.query(`DELETE FROM "trigger_schedule" WHERE "app_id" = $1`, [appId]);
      return;
    }
    await this.ds.query(
      `DELETE FROM "trigger_schedule" WHERE "app_id" = $1 AND NOT ("subscription_id" = ANY($2::text[]))`,
      [appId, [...keep]],
    );
  }

  async claim(key: string, appId: string, nowMs: number, windowMs: number): Promise<boolean> {
    const cutoff = claimCutoff(nowMs, windowMs);
    const result: unknown = await this.ds.query(
      `INSERT INTO "trigger_claim" ("key", "app_id", "claimed_at_ms") VALUES ($1, $2, $3)
       ON CONFLICT ("key") DO UPDATE SET "claimed_at_ms" = EXCLUDED."claimed_at_ms"
       WHERE "trigger_claim"."claimed_at_ms" < $4 RETURNING "key"`,
      [key, appId, String(nowMs), String(cutoff)],
    );
    return returningRows(result).length === 1;
  }

  async releaseClaims(keys: readonly string[], nowMs: number): Promise<void> {
    if (keys.length === 0) return;
    // Only the claims taken at that moment: one taken again since by another delivery stays.
    await this.ds.query(`DELETE FROM "trigger_claim" WHERE "key" = ANY($1) AND "claimed_at_ms" = $2`, [
      [...keys],
      String(nowMs),
    ]);
  }

  async pruneClaims(beforeMs: number): Promise<void> {
    await this.ds.query(`DELETE FROM "trigger_claim" WHERE "claimed_at_ms" < $1`, [String(beforeMs)]);
    await this.ds.query(`DELETE FROM "trigger_occurrence" WHERE "settled_at_ms" IS NOT NULL AND "claimed_at_ms" < $1`, [
      String(beforeMs),
    ]);
  }

  async enqueueDelivery(d: Omit<QueuedDelivery, 'seq' | 'startedMs'>, max: number | null): Promise<string | null> {
    const insert = `INSERT INTO "trigger_delivery" ("app_id", "subscription_id", "kind", "run_id", "payload", "received_ms")
      SELECT $1::uuid, $2::text, $3::text, $4::uuid, $5::jsonb, $6::bigint`;
    const params = [d.appId, d.subscriptionId, d.kind, d.runId, JSON.stringify(d.payload), String(d.receivedMs)];
    if (max === null) {
      return returningRows<{ seq: string }>(await this.ds.query(`${insert} RETURNING "seq"`, params))[0]?.seq ?? null;
    }
    // The count and the insert under the app's lock, so replicas accepting together never pass the bound.
    return this.ds.transaction(async (m) => {
      await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`trigger_delivery:${d.appId}`]);
      const rows: unknown = await m.query(
        `${insert} WHERE (SELECT count(*) FROM "trigger_delivery" WHERE "app_id" = $1::uuid) < $7::bigint RETURNING "seq"`,
        [...params, max],
      );
      const seq = returningRows<{ seq: string }>(rows)[0]?.seq;
      return seq === undefined ? null : String(seq);
    });
  }

  override async acceptDelivery(
    claims: ReadonlyArray<{ key: string; windowMs: number }>,
    d: Omit<QueuedDelivery, 'seq' | 'startedMs'>,
    max: number | null,
    nowMs: number,
  ): Promise<AcceptedDelivery> {
    // One statement: the function (migration AcceptTriggerDelivery1766400000100) claims and records.
    const rows = (await this.ds.query(
      `SELECT "outcome", "seq" FROM accept_trigger_delivery($1::text[], $2::bigint[], $3::bigint, $4::uuid, $5::text,
         $6::text, $7::uuid, $8::jsonb, $9::bigint, $10::bigint)`,
      [
        claims.map((c) => c.key),
        claims.map((c) => String(claimCutoff(nowMs, c.windowMs))),
        String(nowMs),
        d.appId,
        d.subscriptionId,
        d.kind,
        d.runId,
        JSON.stringify(d.payload),
        String(d.receivedMs),
        max === null ? null : String(max),
      ],
    )) as Array<{ outcome: AcceptedDelivery['outcome']; seq: string | null }>;
    const row = rows[0];
    if (row?.outcome === 'queued' && row.seq !== null) return { outcome: 'queued', seq: String(row.seq) };
    if (row?.outcome === 'full') return { outcome: 'full' };
    if (row?.outcome === 'repeat') return { outcome: 'repeat' };
    throw new Error(`accept_trigger_delivery answered ${JSON.stringify(row)}`);
  }

  async nextDelivery(appId: string): Promise<QueuedDelivery | null> {
    const rows: DeliveryRecord[] = await this.ds.query(
      `SELECT * FROM "trigger_delivery" WHERE "app_id" = $1 ORDER BY "seq" LIMIT 1`,
      [appId],
    );
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  async markDelivery(seq: string, startedMs: number | null): Promise<void> {
    await this.ds.query(`UPDATE "trigger_delivery" SET "started_ms" = $2 WHERE "seq" = $1`, [
      seq,
      startedMs === null ? null : String(startedMs),
    ]);
  }

  async removeDelivery(seq: string): Promise<void> {
    await this.ds.query(`DELETE FROM "trigger_delivery" WHERE "seq" = $1`, [seq]);
  }

  async countDeliveries(appId: string): Promise<number> {
    const rows: Array<{ n: number }> = await this.ds.query(
      `SELECT count(*)::int AS n FROM "trigger_delivery" WHERE "app_id" = $1`,
      [appId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async deliveryApps(): Promise<string[]> {
    const rows: Array<{ app_id: string }> = await this.ds.query(`SELECT DISTINCT "app_id" FROM "trigger_delivery"`);
    return rows.map((r) => r.app_id);
  }

  async dropDeliveries(appId: string): Promise<void> {
    await this.ds.query(`DELETE FROM "trigger_delivery" WHERE "app_id" = $1`, [appId]);
    await this.ds.query(`DELETE FROM "trigger_delivery_refusal" WHERE "app_id" = $1`, [appId]);
  }

  async countRefusal(appId: string, nowMs: number): Promise<void> {
    await this.ds.query(
      `INSERT INTO "trigger_delivery_refusal" ("app_id", "refused", "first_ms", "last_ms") VALUES ($1, 1, $2, $2)
       ON CONFLICT ("app_id") DO UPDATE SET "refused" = "trigger_delivery_refusal"."refused" + 1, "last_ms" = EXCLUDED."last_ms"`,
      [appId, String(nowMs)],
    );
  }

  async takeRefusals(appId: string): Promise<RefusedDeliveries | null> {
    const rows = returningRows<{ refused: number; first_ms: string; last_ms: string }>(
      await this.ds.query(
        `DELETE FROM "trigger_delivery_refusal" WHERE "app_id" = $1 RETURNING "refused", "first_ms", "last_ms"`,
        [appId],
      ),
    );
    const row = rows[0];
    return row ? { count: Number(row.refused), firstMs: Number(row.first_ms), lastMs: Number(row.last_ms) } : null;
  }
}

/** A claim taken before this may be taken again; without a window (Infinity) never. */
const claimCutoff = (nowMs: number, windowMs: number): number =>
  Number.isFinite(windowMs) ? nowMs - windowMs : Number.MIN_SAFE_INTEGER;
