import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `append_message` with thoughts: a message and its thoughts appended at the end of its
 * conversation in one round trip (`ConversationRepository.appendMessage`), as AppendMessage1766700000000
 * does for a message without them. Before, every assistant reply with thoughts (each turn's, in a
 * chat, a run or a channel) took a six-statement transaction: begin, the conversation's lock, the
 * insert, the thoughts, `updated_at`, commit. The same steps in the same order, the lock first.
 * No row when the conversation does not exist (nothing written).
 */
export class AppendMessageThoughts1767000000000 implements MigrationInterface {
  name = 'AppendMessageThoughts1767000000000';
  /** A new function only (an overload with the thoughts): code without it appends as before. */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
CREATE FUNCTION "append_message"(p_conversation_id text, p_role text, p_content text, p_meta jsonb, p_thoughts jsonb)
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
  INSERT INTO "conversation_thought" ("message_id", "position", "data")
  SELECT v_message."id", (t.ord - 1)::int, t.value FROM jsonb_array_elements(p_thoughts) WITH ORDINALITY AS t(value, ord);
  UPDATE "conversation" SET "updated_at" = now() WHERE "id" = p_conversation_id;
  RETURN NEXT v_message;
END
$fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "append_message"(text, text, text, jsonb, jsonb)`);
  }
}
