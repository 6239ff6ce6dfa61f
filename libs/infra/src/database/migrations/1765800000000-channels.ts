import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Message channels (docs/api/channels.md), generated from the entities and reviewed: instances,
 * the threads of their chats (deleted with their instance), and the claims that make a platform
 * message start one turn and a run's result reach a thread once, across replicas.
 */
export class Channels1765800000000 implements MigrationInterface {
  name = 'Channels1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "channel_instance" ("id" uuid NOT NULL, "type" text NOT NULL, "name" text NOT NULL, "enabled" boolean NOT NULL DEFAULT true, "app_id" uuid NOT NULL, "team_id" uuid, "config" jsonb NOT NULL DEFAULT '{}', "reply_scope" text NOT NULL, "owners" jsonb NOT NULL DEFAULT '[]', "guest_policy" text NOT NULL, "streaming" boolean NOT NULL DEFAULT false, "state" text NOT NULL, "reason" text, "cursor" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_channel_instance" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "IDX_channel_instance_app" ON "channel_instance"  ("app_id")`);
    await q.query(
      `CREATE TABLE "channel_thread" ("instance_id" uuid NOT NULL, "chat_id" text NOT NULL, "app_id" uuid NOT NULL, "channel" text NOT NULL, "chat_type" text NOT NULL, "conversation_id" text NOT NULL, "display_name" text NOT NULL, "custom_name" text, "proactive" boolean NOT NULL DEFAULT false, "last_message_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_channel_thread" PRIMARY KEY ("instance_id", "chat_id"))`,
    );
    await q.query(`CREATE INDEX "IDX_channel_thread_app" ON "channel_thread"  ("app_id")`);
    await q.query(
      `CREATE TABLE "channel_claim" ("key" text NOT NULL, "claimed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_channel_claim" PRIMARY KEY ("key"))`,
    );
    await q.query(
      `ALTER TABLE "channel_thread" ADD CONSTRAINT "FK_channel_thread_instance" FOREIGN KEY ("instance_id") REFERENCES "channel_instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "channel_thread" DROP CONSTRAINT "FK_channel_thread_instance"`);
    await q.query(`DROP TABLE "channel_claim"`);
    await q.query(`DROP INDEX "IDX_channel_thread_app"`);
    await q.query(`DROP TABLE "channel_thread"`);
    await q.query(`DROP INDEX "IDX_channel_instance_app"`);
    await q.query(`DROP TABLE "channel_instance"`);
  }
}
