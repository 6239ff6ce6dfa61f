import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `append_message`: a message without thoughts appended at the end of its conversation in one
 * round trip (`ConversationRepository.appendMessage`). Before, the transaction's begin, the
 * conversation's lock, the insert, the conversation's `updated_at` and the commit were five,
 * on every run's trigger message and every other append. The same steps in the same order:
 * the lock first, so the insert (a statement of its own, with its own snapshot under READ
 * COMMITTED) sees the rows of every append that held the lock before it. No row when the
 * conversation does not exist.
 */
export class AppendMessage1766700000000 implements MigrationInterface {
  name = 'AppendMessage1766700000000';
  /** A new function only: code without it appends as before. */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
CREATE FUNCTION "append_message"(p_conversation_id text, p_role text, p_content text, p_meta jsonb)
RETURNS SETOF "conversation_message"
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  v_message "conversation_message";
BEGIN
  PERFORM 1 FROM "conversation" WHERE "id" = p_conversation_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  INSERT INTO "conversation_message" ("id", "conversation_id", "position", "role", "content", "meta")
  SELECT gen_random_uuid(), p_conversation_id, COALESCE(MAX("position") + 1, 0), p_role, p_content, p_meta
  FROM "conversation_message" WHERE "conversation_id" = p_conversation_id
  RETURNING * INTO v_message;
  UPDATE "conversation" SET "updated_at" = now() WHERE "id" = p_conversation_id;
  RETURN NEXT v_message;
END
$fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "append_message"(text, text, text, jsonb)`);
  }
}
