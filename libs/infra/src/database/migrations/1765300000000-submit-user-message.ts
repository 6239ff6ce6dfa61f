import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `submit_user_message`: records a user's message and queues a turn for it in one round trip
 * and one transaction (POST /api/agent/message used ~10 sequential queries, and a crash
 * between the message and its turn could leave a message nobody answers).
 *
 * It takes the conversation row's lock (as every append does), then tries to insert the
 * queued turn; the partial unique index on active turns decides whether one is already
 * active. Either way the message goes in at the next position, with `p_meta` when the turn
 * was queued and `p_live_meta` when an active turn is to receive it as input. Each statement
 * of a plpgsql function takes a fresh snapshot under READ COMMITTED, so MAX(position) here
 * sees the appends that held the lock before us, as the TypeScript append relies on too.
 * Answers one row: outcome 'queued' | 'active' | 'not-found', the message row and the turn
 * row (as jsonb; the turn only when queued). The turn keeps the conversation id as the caller
 * wrote it (`p_turn_conversation_id`), as turns always have; the message uses the stored key.
 */
export class SubmitUserMessage1765300000000 implements MigrationInterface {
  name = 'SubmitUserMessage1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
CREATE FUNCTION "submit_user_message"(
  p_conversation_id text, p_message_id uuid, p_content text, p_meta jsonb, p_live_meta jsonb,
  p_turn_id uuid, p_turn_kind text, p_turn_conversation_id text, p_space_id text, p_request jsonb)
RETURNS TABLE ("outcome" text, "message" jsonb, "turn" jsonb)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_turn "agent_turn";
  v_message "conversation_message";
BEGIN
  PERFORM 1 FROM "conversation" WHERE "id" = p_conversation_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not-found'::text, NULL::jsonb, NULL::jsonb;
    RETURN;
  END IF;
  INSERT INTO "agent_turn" ("id", "kind", "conversation_id", "space_id", "status", "request", "pending_inputs", "thoughts")
  VALUES (p_turn_id, p_turn_kind, p_turn_conversation_id, p_space_id, 'queued', p_request, '[]'::jsonb, '[]'::jsonb)
  ON CONFLICT ("conversation_id") WHERE "status" IN ('queued', 'running') DO NOTHING
  RETURNING * INTO v_turn;
  INSERT INTO "conversation_message" ("id", "conversation_id", "position", "role", "content", "meta")
  SELECT p_message_id, p_conversation_id, COALESCE(MAX("position") + 1, 0), 'user', p_content,
    CASE WHEN v_turn."id" IS NULL THEN p_live_meta ELSE p_meta END
  FROM "conversation_message" WHERE "conversation_id" = p_conversation_id
  RETURNING * INTO v_message;
  UPDATE "conversation" SET "updated_at" = now() WHERE "id" = p_conversation_id;
  RETURN QUERY SELECT CASE WHEN v_turn."id" IS NULL THEN 'active' ELSE 'queued' END,
    to_jsonb(v_message), CASE WHEN v_turn."id" IS NULL THEN NULL ELSE to_jsonb(v_turn) END;
END
$fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "submit_user_message"(text, uuid, text, jsonb, jsonb, uuid, text, text, text, jsonb)`);
  }
}
