import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A partial index on the position of the compaction summaries of each conversation: a turn reads
 * its conversation from the latest summary on (`findWithHistory`), and finds it here at once
 * rather than by walking the conversation's messages back to it.
 */
export class ConversationMessageCompactionIndex1766900000000 implements MigrationInterface {
  name = 'ConversationMessageCompactionIndex1766900000000';
  /** An index only: code without it answers the same, more slowly. */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "IDX_conversation_message_compaction" ON "conversation_message" ("conversation_id", "position") WHERE "role" = 'system' AND "meta" ->> 'kind' = 'compaction'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_conversation_message_compaction"`);
  }
}
