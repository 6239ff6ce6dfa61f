import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Digital humans and their activity feed (generated from the entities, reviewed). */
export class Apps1764100000000 implements MigrationInterface {
  name = 'Apps1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "app" ("id" uuid NOT NULL, "space_id" text, "install_key" text, "spec" jsonb NOT NULL, "status" text NOT NULL, "user_config" jsonb NOT NULL, "user_overrides" jsonb NOT NULL, "permissions" jsonb NOT NULL, "upgrade_strategy" text NOT NULL, "built_in" boolean NOT NULL DEFAULT false, "running_count" integer NOT NULL DEFAULT '0', "next_run_at_ms" bigint, "last_run_at_ms" bigint, "last_status" text, "last_error" text, "pending_escalation_id" text, "installed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "uninstalled_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_app" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE UNIQUE INDEX "UQ_app_install_key" ON "app" ("install_key")`);
    await q.query(`CREATE INDEX "IDX_app_status" ON "app" ("status")`);
    await q.query(`CREATE INDEX "IDX_app_space_id" ON "app" ("space_id")`);
    await q.query(
      `CREATE TABLE "app_activity" ("id" text NOT NULL, "app_id" uuid NOT NULL, "run_id" text, "type" text NOT NULL, "ts" bigint NOT NULL, "content" jsonb NOT NULL, CONSTRAINT "PK_app_activity" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "IDX_app_activity_app_ts" ON "app_activity" ("app_id", "ts")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "app_activity"`);
    await q.query(`DROP TABLE "app"`);
  }
}
