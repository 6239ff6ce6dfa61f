import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Trigger state: schedule rows and claims (generated from the entities, reviewed). */
export class Triggers1765000000000 implements MigrationInterface {
  name = 'Triggers1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "trigger_schedule" ("app_id" uuid NOT NULL, "subscription_id" text NOT NULL, "signature" text NOT NULL, "next_ms" bigint NOT NULL, CONSTRAINT "PK_trigger_schedule" PRIMARY KEY ("app_id", "subscription_id"))`,
    );
    await q.query(
      `CREATE TABLE "trigger_claim" ("key" text NOT NULL, "app_id" uuid NOT NULL, "claimed_at_ms" bigint NOT NULL, CONSTRAINT "PK_trigger_claim" PRIMARY KEY ("key"))`,
    );
    await q.query(`CREATE INDEX "IDX_trigger_claim_claimed_at" ON "trigger_claim" ("claimed_at_ms")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "trigger_claim"`);
    await q.query(`DROP TABLE "trigger_schedule"`);
  }
}
