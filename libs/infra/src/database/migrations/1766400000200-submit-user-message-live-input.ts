import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `submit_user_message` with `p_live_input`: when the conversation already has an active turn
 * (not stopping), the message is recorded and handed to that turn as pending input in the same
 * transaction (`handed` true). Before, the hand-over was a second write: a replica that died
 * between the two left the message recorded but never given to the turn (it went unanswered
 * until the next message), and a message submitted again under the same id (a channel
 * message's dispatch run again) could not tell whether it had been handed over. A stopping turn
 * takes no input (`handed` false): the caller waits for it to end and queues a turn, as before.
 *
 * Otherwise as SubmitUserMessageFirstMeta1765500000000 (which stays, for replicas of the previous
 * version during a rolling upgrade).
 */
export class SubmitUserMessageLiveInput1766400000200 implements MigrationInterface {
  name = 'SubmitUserMessageLiveInput1766400000200';
  /** A new overload only: code without it submits messages as before. */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
CREATE FUNCTION "submit_user_message"(
  p_conversation_id text, p_message_id uuid, p_content text, p_meta jsonb, p_live_meta jsonb,
  p_turn_id uuid, p_turn_kind text, p_turn_conversation_id text, p_space_id text, p_request jsonb,
  p_in_space text, p_unless_first boolean, p_first_meta jsonb, p_live_input jsonb)
RETURNS TABLE ("outcome" text, "message" jsonb, "turn" jsonb, "handed" boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
#variable_conflict use_column
DECLARE
  v_turn "agent_turn";
  v_message "conversation_message";
  v_first boolean := false;
  v_handed_id uuid;
BEGIN
  PERFORM 1 FROM "conversation"
  WHERE "id" = p_conversation_id AND (p_in_space IS NULL OR "space_id" = p_in_space) FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'not-found'::text, NULL::jsonb, NULL::jsonb, false;
    RETURN;
  END IF;
  IF p_unless_first OR p_first_meta IS NOT NULL THEN
    v_first := NOT EXISTS (SELECT 1 FROM "conversation_message" WHERE "conversation_id" = p_conversation_id);
  END IF;
  IF p_unless_first AND v_first THEN
    RETURN QUERY SELECT 'first'::text, NULL::jsonb, NULL::jsonb, false;
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
  IF v_turn."id" IS NULL AND p_live_input IS NOT NULL THEN
    UPDATE "agent_turn" SET "pending_inputs" = "pending_inputs" || jsonb_build_array(p_live_input)
    WHERE "conversation_id" = p_turn_conversation_id AND "status" IN ('queued', 'running') AND NOT "stop_requested"
    RETURNING "id" INTO v_handed_id;
  END IF;
  UPDATE "conversation" SET "updated_at" = now() WHERE "id" = p_conversation_id;
  RETURN QUERY SELECT CASE WHEN v_turn."id" IS NULL THEN 'active' ELSE 'queued' END,
    to_jsonb(v_message), CASE WHEN v_turn."id" IS NULL THEN NULL ELSE to_jsonb(v_turn) END, v_handed_id IS NOT NULL;
END
$fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION "submit_user_message"(text, uuid, text, jsonb, jsonb, uuid, text, text, text, jsonb, text, boolean, jsonb, jsonb)`,
    );
  }
}
