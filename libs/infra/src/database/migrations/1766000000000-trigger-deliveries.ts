import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Queued deliveries (generated from the entities, reviewed): accepted webhook deliveries and
 * file batches wait here for their app's next run, one run each, in order; refusals past the
 * per-app bound are counted until one `run_skipped` entry reports them.
 */
export class TriggerDeliveries1766000000000 implements MigrationInterface {
  name = 'TriggerDeliveries1766000000000';
  /** New tables only: a release without them runs unchanged on this schema. */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "trigger_delivery" ("seq" BIGSERIAL NOT NULL, "app_id" uuid NOT NULL, "subscription_id" text NOT NULL, "kind" text NOT NULL, "run_id" uuid NOT NULL, "payload" jsonb NOT NULL, "received_ms" bigint NOT NULL, "started_ms" bigint, CONSTRAINT "PK_trigger_delivery" PRIMARY KEY ("seq"))`,
    );
    await q.query(`CREATE INDEX "IDX_trigger_delivery_app_seq" ON "trigger_delivery" ("app_id", "seq") `);
    await q.query(
      `CREATE TABLE "trigger_delivery_refusal" ("app_id" uuid NOT NULL, "refused" integer NOT NULL, "first_ms" bigint NOT NULL, "last_ms" bigint NOT NULL, CONSTRAINT "PK_trigger_delivery_refusal" PRIMARY KEY ("app_id"))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "trigger_delivery_refusal"`);
    await q.query(`DROP INDEX "public"."IDX_trigger_delivery_app_seq"`);
    await q.query(`DROP TABLE "trigger_delivery"`);
  }
}
