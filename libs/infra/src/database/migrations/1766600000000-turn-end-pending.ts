import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `agent_turn.end_pending_at`: set by the statement that ends a turn (`finish`, and
 * `complete_turn` below), cleared once its end events (`agent:error`, `agent:complete`) are
 * published. The events go to the Redis event log, outside the Postgres transaction, so a
 * replica dying between the two left a turn ended in the database and never ended for its
 * clients; the reaper announces ends still pending after STALE_TURN_MS. The partial index keeps
 * its sweep one small index scan however many turns the table holds.
 *
 * `complete_turn(turn, follow-up, true)` is the function of CompleteTurn1766300000000 with the
 * mark set. It is a new overload, so that the two-argument form older code calls stays as it
 * was and never leaves a mark that nothing of that code clears (newer reapers would announce
 * those ends a second time): older replicas may serve on this schema.
 */
export class TurnEndPending1766600000000 implements MigrationInterface {
  name = 'TurnEndPending1766600000000';
  /** A nullable column, an index and a new overload: older code ends turns as before. */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "agent_turn" ADD "end_pending_at" TIMESTAMP WITH TIME ZONE`);
    await q.query(
      `CREATE INDEX "IDX_agent_turn_end_pending" ON "agent_turn" ("end_pending_at") WHERE "end_pending_at" IS NOT NULL`,
    );
    await q.query(`
CREATE FUNCTION "complete_turn"(p_turn_id uuid, p_follow_up_id uuid, p_end_pending boolean)
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
  UPDATE "agent_turn" SET "status" = 'completed', "error" = NULL, "ended_at" = now(),
    "end_pending_at" = CASE WHEN p_end_pending THEN now() END,
    "pending_question" = NULL, "pending_approval" = NULL, "pending_retry" = NULL, "pending_inputs" = '[]'::jsonb
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
    await q.query(`DROP FUNCTION "complete_turn"(uuid, uuid, boolean)`);
    await q.query(`DROP INDEX "IDX_agent_turn_end_pending"`);
    await q.query(`ALTER TABLE "agent_turn" DROP COLUMN "end_pending_at"`);
  }
}
