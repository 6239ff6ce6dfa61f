import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Claimed schedule occurrences (generated from the entity, reviewed): the claim of a tick and
 * the record that its run has not started yet are one row written with the schedule's move,
 * so a replica dying between the claim and the run start leaves a claim another one takes over.
 */
export class TriggerOccurrences1765250000000 implements MigrationInterface {
  name = 'TriggerOccurrences1765250000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "trigger_occurrence" ("key" text NOT NULL, "app_id" uuid NOT NULL, "subscription_id" text NOT NULL, "scheduled_ms" bigint NOT NULL, "attempt" integer NOT NULL, "claimed_at_ms" bigint NOT NULL, "started_at_ms" bigint, "settled_at_ms" bigint, CONSTRAINT "PK_trigger_occurrence" PRIMARY KEY ("key"))`,
    );
    await q.query(`CREATE INDEX "IDX_trigger_occurrence_claimed_at" ON "trigger_occurrence" ("claimed_at_ms") `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "public"."IDX_trigger_occurrence_claimed_at"`);
    await q.query(`DROP TABLE "trigger_occurrence"`);
  }
}
