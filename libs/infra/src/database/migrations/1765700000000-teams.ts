import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Teams (docs/api/teams.md), generated from the entities and reviewed: teams, members, edges,
 * epochs, each epoch's board (tasks, findings, activity) and the members' mailbox. Deleting a
 * space deletes its teams; deleting an app removes it from its teams; everything of an epoch
 * goes with it. The partial unique index keeps one open run epoch per team across replicas.
 */
export class Teams1765700000000 implements MigrationInterface {
  name = 'Teams1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "team" ("id" uuid NOT NULL, "owning_space_id" text NOT NULL, "name" text NOT NULL, "goal" text NOT NULL, "lead_app_id" uuid, "member_sourcing" text NOT NULL, "collab_mode" text NOT NULL, "escalation_routing" text NOT NULL, "status" text NOT NULL, "current_epoch_id" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_team" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "IDX_team_space" ON "team"  ("owning_space_id")`);
    await q.query(
      `CREATE TABLE "team_member" ("team_id" uuid NOT NULL, "app_id" uuid NOT NULL, "member_name" text NOT NULL, "role" text NOT NULL, "duty" text, "is_lead" boolean NOT NULL DEFAULT false, "ai_provisioned" boolean NOT NULL DEFAULT false, "added_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_team_member" PRIMARY KEY ("team_id", "app_id"))`,
    );
    await q.query(`CREATE INDEX "IDX_team_member_app" ON "team_member"  ("app_id")`);
    await q.query(`CREATE UNIQUE INDEX "UQ_team_member_name" ON "team_member"  ("team_id", "member_name")`);
    await q.query(
      `CREATE TABLE "team_edge" ("team_id" uuid NOT NULL, "from_app_id" uuid NOT NULL, "to_app_id" uuid NOT NULL, CONSTRAINT "PK_team_edge" PRIMARY KEY ("team_id", "from_app_id", "to_app_id"))`,
    );
    await q.query(
      `CREATE TABLE "team_epoch" ("id" uuid NOT NULL, "team_id" uuid NOT NULL, "lifecycle" text NOT NULL, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "ended_at" TIMESTAMP WITH TIME ZONE, "end_reason" text, "outcome" text, "summary" text, "trigger_type" text, "title" text, "message_count" integer NOT NULL DEFAULT '0', CONSTRAINT "PK_team_epoch" PRIMARY KEY ("id"))`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "UQ_team_epoch_open_run" ON "team_epoch"  ("team_id") WHERE "lifecycle" = 'run' AND "ended_at" IS NULL`,
    );
    await q.query(`CREATE INDEX "IDX_team_epoch_team" ON "team_epoch"  ("team_id", "started_at")`);
    await q.query(
      `CREATE TABLE "team_task" ("id" uuid NOT NULL, "epoch_id" uuid NOT NULL, "title" text NOT NULL, "assignee_app_id" uuid NOT NULL, "status" text NOT NULL, "result_ref" text, "note" text, "parent_id" uuid, "created_by_app_id" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_team_task" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "IDX_team_task_epoch" ON "team_task"  ("epoch_id", "created_at")`);
    await q.query(
      `CREATE TABLE "team_finding" ("id" uuid NOT NULL, "epoch_id" uuid NOT NULL, "author_app_id" uuid NOT NULL, "body" text NOT NULL, "ref" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_team_finding" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "IDX_team_finding_epoch" ON "team_finding"  ("epoch_id", "created_at")`);
    await q.query(
      `CREATE TABLE "team_activity" ("seq" BIGSERIAL NOT NULL, "id" uuid NOT NULL, "epoch_id" uuid NOT NULL, "kind" text NOT NULL, "actor_app_id" uuid, "target_app_id" uuid, "subject" text NOT NULL, "body" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_team_activity" PRIMARY KEY ("seq"))`,
    );
    await q.query(`CREATE INDEX "IDX_team_activity_epoch" ON "team_activity"  ("epoch_id", "seq")`);
    await q.query(
      `CREATE TABLE "team_mailbox" ("seq" BIGSERIAL NOT NULL, "id" uuid NOT NULL, "epoch_id" uuid NOT NULL, "to_app_id" uuid NOT NULL, "from_app_id" uuid, "body" text NOT NULL, "depth" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "taken_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_team_mailbox" PRIMARY KEY ("seq"))`,
    );
    await q.query(
      `CREATE INDEX "IDX_team_mailbox_waiting" ON "team_mailbox"  ("epoch_id", "to_app_id", "seq") WHERE "taken_at" IS NULL`,
    );
    await q.query(
      `ALTER TABLE "team" ADD CONSTRAINT "FK_team_space" FOREIGN KEY ("owning_space_id") REFERENCES "space"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "team_member" ADD CONSTRAINT "FK_team_member_team" FOREIGN KEY ("team_id") REFERENCES "team"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "team_member" ADD CONSTRAINT "FK_team_member_app" FOREIGN KEY ("app_id") REFERENCES "app"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "team_edge" ADD CONSTRAINT "FK_team_edge_team" FOREIGN KEY ("team_id") REFERENCES "team"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "team_epoch" ADD CONSTRAINT "FK_team_epoch_team" FOREIGN KEY ("team_id") REFERENCES "team"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "team_task" ADD CONSTRAINT "FK_team_task_epoch" FOREIGN KEY ("epoch_id") REFERENCES "team_epoch"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "team_finding" ADD CONSTRAINT "FK_team_finding_epoch" FOREIGN KEY ("epoch_id") REFERENCES "team_epoch"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "team_activity" ADD CONSTRAINT "FK_team_activity_epoch" FOREIGN KEY ("epoch_id") REFERENCES "team_epoch"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "team_mailbox" ADD CONSTRAINT "FK_team_mailbox_epoch" FOREIGN KEY ("epoch_id") REFERENCES "team_epoch"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "team_mailbox" DROP CONSTRAINT "FK_team_mailbox_epoch"`);
    await q.query(`ALTER TABLE "team_activity" DROP CONSTRAINT "FK_team_activity_epoch"`);
    await q.query(`ALTER TABLE "team_finding" DROP CONSTRAINT "FK_team_finding_epoch"`);
    await q.query(`ALTER TABLE "team_task" DROP CONSTRAINT "FK_team_task_epoch"`);
    await q.query(`ALTER TABLE "team_epoch" DROP CONSTRAINT "FK_team_epoch_team"`);
    await q.query(`ALTER TABLE "team_edge" DROP CONSTRAINT "FK_team_edge_team"`);
    await q.query(`ALTER TABLE "team_member" DROP CONSTRAINT "FK_team_member_app"`);
    await q.query(`ALTER TABLE "team_member" DROP CONSTRAINT "FK_team_member_team"`);
    await q.query(`ALTER TABLE "team" DROP CONSTRAINT "FK_team_space"`);
    await q.query(`DROP INDEX "public"."IDX_team_mailbox_waiting"`);
    await q.query(`DROP TABLE "team_mailbox"`);
    await q.query(`DROP INDEX "public"."IDX_team_activity_epoch"`);
    await q.query(`DROP TABLE "team_activity"`);
    await q.query(`DROP INDEX "public"."IDX_team_finding_epoch"`);
    await q.query(`DROP TABLE "team_finding"`);
    await q.query(`DROP INDEX "public"."IDX_team_task_epoch"`);
    await q.query(`DROP TABLE "team_task"`);
    await q.query(`DROP INDEX "public"."IDX_team_epoch_team"`);
    await q.query(`DROP INDEX "public"."UQ_team_epoch_open_run"`);
    await q.query(`DROP TABLE "team_epoch"`);
    await q.query(`DROP TABLE "team_edge"`);
    await q.query(`DROP INDEX "public"."UQ_team_member_name"`);
    await q.query(`DROP INDEX "public"."IDX_team_member_app"`);
    await q.query(`DROP TABLE "team_member"`);
    await q.query(`DROP INDEX "public"."IDX_team_space"`);
    await q.query(`DROP TABLE "team"`);
  }
}
