import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A partial index on the run id of the messages that carry one: a digital human's run reads its
 * own messages out of its run conversation (`findRunMessages`), which keeps every run's; without
 * it each run read them all, more with every run.
 */
export class ConversationMessageRunIndex1766800000000 implements MigrationInterface {
  name = 'ConversationMessageRunIndex1766800000000';
  /** An index only: code without it answers the same, more slowly. */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "IDX_conversation_message_run" ON "conversation_message" ("conversation_id", ("meta" ->> 'runId')) WHERE "meta" ? 'runId'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_conversation_message_run"`);
  }
}
