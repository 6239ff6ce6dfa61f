import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `complete_turn`: records a turn as completed in one round trip, and answers input that
 * reached it too late for its last step (sent while its final model call ran, or while its
 * reply was recorded). Such input was stored but no step of the turn would ever read it. In
 * the same transaction its messages move after the turn's reply (the reply did not see them)
 * and a queued follow-up turn is created for them, of the kind and request they were sent
 * with. The conversation's row is locked first, as `submit_user_message` locks it, so the two
 * never wait on each other crosswise.
 */
export class CompleteTurn1766300000000 implements MigrationInterface {
  name = 'CompleteTurn1766300000000';
  /** A new function only: code without it ends turns as before. */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
CREATE FUNCTION "complete_turn"(p_turn_id uuid, p_follow_up_id uuid)
RETURNS TABLE ("ended" boolean, "late_inputs" integer, "follow_up" jsonb)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
#variable_conflict use_column
DECLARE
  v_conversation_id text;
  v_late jsonb;
  v_last jsonb;
  v_input jsonb;
  v_turn "agent_turn";
  v_follow_up "agent_turn";
BEGIN
  SELECT "conversation_id" INTO v_conversation_id FROM "agent_turn" WHERE "id" = p_turn_id;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, 0, NULL::jsonb;
    RETURN;
  END IF;
  PERFORM 1 FROM "conversation" WHERE "id" = v_conversation_id FOR UPDATE;
  SELECT "pending_inputs" INTO v_late FROM "agent_turn"
  WHERE "id" = p_turn_id AND "status" IN ('queued', 'running') FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, 0, NULL::jsonb;
    RETURN;
  END IF;
  UPDATE "agent_turn" SET "status" = 'completed', "error" = NULL, "ended_at" = now(), "pending_question" = NULL,
    "pending_approval" = NULL, "pending_retry" = NULL, "pending_inputs" = '[]'::jsonb
  WHERE "id" = p_turn_id RETURNING * INTO v_turn;
  IF jsonb_array_length(v_late) = 0 THEN
    RETURN QUERY SELECT true, 0, NULL::jsonb;
    RETURN;
  END IF;
  FOR v_input IN SELECT "value" FROM jsonb_array_elements(v_late) LOOP
    UPDATE "conversation_message" m
    SET "position" = (SELECT MAX(x."position") + 1 FROM "conversation_message" x WHERE x."conversation_id" = v_conversation_id)
    WHERE m."conversation_id" = v_conversation_id AND m."id"::text = v_input->>'messageId'
      AND EXISTS (SELECT 1 FROM "conversation_message" a
                  WHERE a."conversation_id" = v_conversation_id AND a."role" = 'assistant' AND a."position" > m."position");
  END LOOP;
  v_last := v_late -> (jsonb_array_length(v_late) - 1);
  INSERT INTO "agent_turn" ("id", "kind", "conversation_id", "space_id", "status", "request", "pending_inputs", "thoughts")
  SELECT p_follow_up_id, COALESCE(v_last->>'kind', v_turn."kind"), v_turn."conversation_id", v_turn."space_id", 'queued',
    COALESCE(v_last->'request', v_turn."request"), '[]'::jsonb, '[]'::jsonb
  WHERE EXISTS (SELECT 1 FROM "conversation" WHERE "id" = v_conversation_id)
  ON CONFLICT ("conversation_id") WHERE "status" IN ('queued', 'running') DO NOTHING
  RETURNING * INTO v_follow_up;
  RETURN QUERY SELECT true, jsonb_array_length(v_late),
    CASE WHEN v_follow_up."id" IS NULL THEN NULL ELSE to_jsonb(v_follow_up) END;
END
$fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "complete_turn"(uuid, uuid)`);
  }
}
