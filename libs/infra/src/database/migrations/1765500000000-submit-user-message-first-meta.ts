import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `submit_user_message` with `p_first_meta`: when the conversation has no message yet, it is
 * merged into the message's meta (either of `p_meta` and `p_live_meta`). A caller that expects
 * the conversation to be empty (one it just created) sends what a first message carries (the
 * memory snapshot) with its one write, instead of learning from a `p_unless_first` write that
 * the message is the first and writing again: a conversation's first message started its turn
 * after two round trips to the database, the slowest turn-start of a conversation. It stays
 * exact when the expectation is wrong: a message that is not the first never gets it.
 *
 * Its statements are planned once per database session (`plan_cache_mode =
 * force_generic_plan`): each looks rows up by key, where the generic plan is the plan, and
 * Postgres otherwise plans them again on each of a session's first five calls (2-6 ms of
 * a turn-start in the embedded database, on every pooled connection with a server's own).
 *
 * Otherwise as SubmitUserMessageChecks1765400000000 (which stays, for replicas of the previous
 * version during a rolling upgrade).
 */
export class SubmitUserMessageFirstMeta1765500000000 implements MigrationInterface {
  name = 'SubmitUserMessageFirstMeta1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
CREATE FUNCTION "submit_user_message"(
  p_conversation_id text, p_message_id uuid, p_content text, p_meta jsonb, p_live_meta jsonb,
  p_turn_id uuid, p_turn_kind text, p_turn_conversation_id text, p_space_id text, p_request jsonb,
  p_in_space text, p_unless_first boolean, p_first_meta jsonb)
RETURNS TABLE ("outcome" text, "message" jsonb, "turn" jsonb)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
#variable_conflict use_column
DECLARE
  v_turn "agent_turn";
  v_message "conversation_message";
  v_first boolean := false;
BEGIN
  PERFORM 1 FROM "conversation"
  WHERE "id" = p_conversation_id AND (p_in_space IS NULL OR "space_id" = p_in_space) FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not-found'::text, NULL::jsonb, NULL::jsonb;
    RETURN;
  END IF;
  IF p_unless_first OR p_first_meta IS NOT NULL THEN
    v_first := NOT EXISTS (SELECT 1 FROM "conversation_message" WHERE "conversation_id" = p_conversation_id);
  END IF;
  IF p_unless_first AND v_first THEN
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
      || CASE WHEN v_first AND p_first_meta IS NOT NULL THEN p_first_meta ELSE '{}'::jsonb END
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
      `DROP FUNCTION "submit_user_message"(text, uuid, text, jsonb, jsonb, uuid, text, text, text, jsonb, text, boolean, jsonb)`,
    );
  }
}
