import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AgentTurns1763900000000 implements MigrationInterface {
  name = 'AgentTurns1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "agent_turn" ("id" uuid NOT NULL, "conversation_id" text NOT NULL, "space_id" text NOT NULL, "status" text NOT NULL, "replica_id" text, "heartbeat_at" TIMESTAMP WITH TIME ZONE, "stop_requested" boolean NOT NULL DEFAULT false, "request" jsonb NOT NULL, "pending_inputs" jsonb NOT NULL, "pending_question" jsonb, "question_answer" jsonb, "pending_retry" jsonb, "thoughts" jsonb NOT NULL, "error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "started_at" TIMESTAMP WITH TIME ZONE, "ended_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_agent_turn" PRIMARY KEY ("id"))`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "UQ_agent_turn_active" ON "agent_turn" ("conversation_id") WHERE "status" IN ('queued', 'running')`,
    );
    await q.query(`CREATE INDEX "IDX_agent_turn_status" ON "agent_turn" ("status")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "agent_turn"`);
  }
}
