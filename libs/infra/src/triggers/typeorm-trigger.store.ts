import type { DataSource } from 'typeorm';
import { type ScheduleRow, TriggerStore } from '#core/ports/trigger-store.port.js';
import { returningRows } from '../database/returning-rows.js';

interface ScheduleRecord {
  app_id: string;
  subscription_id: string;
  signature: string;
  next_ms: string;
}

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
    // A claim older than the window may be taken again; without a window (Infinity) never.
    const cutoff = Number.isFinite(windowMs) ? nowMs - windowMs : Number.MIN_SAFE_INTEGER;
    const result: unknown = await this.ds.query(
      `INSERT INTO "trigger_claim" ("key", "app_id", "claimed_at_ms") VALUES ($1, $2, $3)
       ON CONFLICT ("key") DO UPDATE SET "claimed_at_ms" = EXCLUDED."claimed_at_ms"
       WHERE "trigger_claim"."claimed_at_ms" < $4 RETURNING "key"`,
      [key, appId, String(nowMs), String(cutoff)],
    );
    return returningRows(result).length === 1;
  }

  async pruneClaims(beforeMs: number): Promise<void> {
    await this.ds.query(`DELETE FROM "trigger_claim" WHERE "claimed_at_ms" < $1`, [String(beforeMs)]);
  }
}
