import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Team triggers (docs/api/teams.md, "Triggers"), generated from the entity and reviewed: a
 * schedule or a webhook whose firing opens a run epoch; deleting the team deletes them.
 */
export class TeamTriggers1765750000000 implements MigrationInterface {
  name = 'TeamTriggers1765750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "team_trigger" ("id" uuid NOT NULL, "team_id" uuid NOT NULL, "type" text NOT NULL, "config" jsonb NOT NULL, "next_ms" bigint, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_team_trigger" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "IDX_team_trigger_team" ON "team_trigger"  ("team_id")`);
    await q.query(
      `ALTER TABLE "team_trigger" ADD CONSTRAINT "FK_team_trigger_team" FOREIGN KEY ("team_id") REFERENCES "team"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "team_trigger" DROP CONSTRAINT "FK_team_trigger_team"`);
    await q.query(`DROP INDEX "public"."IDX_team_trigger_team"`);
    await q.query(`DROP TABLE "team_trigger"`);
  }
}
