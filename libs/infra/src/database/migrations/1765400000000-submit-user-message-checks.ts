import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `submit_user_message` also answers what POST /api/agent/message looked the conversation up
 * for beforehand (a round trip of its own before the write, and the slowest part of the
 * request when the database was busy):
 *
 * - `p_in_space`: when not NULL, a conversation of another space is 'not-found' (as one that
 *   does not exist);
 * - `p_unless_first`: when true and the conversation has no message yet, nothing is written
 *   and the outcome is 'first' (the caller adds what a first message carries, the memory
 *   snapshot, and submits again without it).
 *
 * Otherwise as SubmitUserMessage1765300000000: the conversation row's lock, the queued turn
 * unless one is active, the message at the next position, the conversation touched; one
 * transaction. The new parameters make it an overload of its own: the 10-parameter function
 * stays, so replicas of the previous version keep working during a rolling upgrade.
 */
export class SubmitUserMessageChecks1765400000000 implements MigrationInterface {
  name = 'SubmitUserMessageChecks1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
CREATE FUNCTION "submit_user_message"(
  p_conversation_id text, p_message_id uuid, p_content text, p_meta jsonb, p_live_meta jsonb,
  p_turn_id uuid, p_turn_kind text, p_turn_conversation_id text, p_space_id text, p_request jsonb,
  p_in_space text, p_unless_first boolean)
RETURNS TABLE ("outcome" text, "message" jsonb, "turn" jsonb)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_turn "agent_turn";
  v_message "conversation_message";
BEGIN
  PERFORM 1 FROM "conversation"
  WHERE "id" = p_conversation_id AND (p_in_space IS NULL OR "space_id" = p_in_space) FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not-found'::text, NULL::jsonb, NULL::jsonb;
    RETURN;
  END IF;
  IF p_unless_first AND NOT EXISTS (SELECT 1 FROM "conversation_message" WHERE "conversation_id" = p_conversation_id) THEN
    RETURN QUERY SELECT 'first'::text, NULL::jsonb, NULL::jsonb;
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
    await q.query(
      `DROP FUNCTION "submit_user_message"(text, uuid, text, jsonb, jsonb, uuid, text, text, text, jsonb, text, boolean)`,
    );
  }
}
