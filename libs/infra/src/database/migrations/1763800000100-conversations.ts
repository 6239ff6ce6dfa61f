import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Conversations, their ordered messages and each message's ordered thoughts. */
export class Conversations1763800000100 implements MigrationInterface {
  name = 'Conversations1763800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "conversation" ("id" uuid NOT NULL, "space_id" text NOT NULL, "title" text NOT NULL, "starred" boolean NOT NULL DEFAULT false, "ephemeral" boolean NOT NULL DEFAULT false, "reasoning_effort" text, "model_source_id" text, "model_id" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_conversation" PRIMARY KEY ("id"), CONSTRAINT "FK_conversation_space" FOREIGN KEY ("space_id") REFERENCES "space"("id") ON DELETE CASCADE)`,
    );
    await q.query(`CREATE INDEX "IDX_conversation_space_updated" ON "conversation" ("space_id", "updated_at")`);
    await q.query(
      `CREATE TABLE "conversation_message" ("id" uuid NOT NULL, "conversation_id" uuid NOT NULL, "position" integer NOT NULL, "role" text NOT NULL, "content" text NOT NULL, "meta" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_conversation_message" PRIMARY KEY ("id"), CONSTRAINT "FK_conversation_message_conversation" FOREIGN KEY ("conversation_id") REFERENCES "conversation"("id") ON DELETE CASCADE)`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "UQ_conversation_message_position" ON "conversation_message" ("conversation_id", "position")`,
    );
    await q.query(
      `CREATE TABLE "conversation_thought" ("message_id" uuid NOT NULL, "position" integer NOT NULL, "data" jsonb NOT NULL, CONSTRAINT "PK_conversation_thought" PRIMARY KEY ("message_id", "position"), CONSTRAINT "FK_conversation_thought_message" FOREIGN KEY ("message_id") REFERENCES "conversation_message"("id") ON DELETE CASCADE)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "conversation_thought"`);
    await q.query(`DROP TABLE "conversation_message"`);
    await q.query(`DROP TABLE "conversation"`);
  }
}
