import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Conversation ids become text, so `app-chat:<appId>` and ids callers choose can exist.
 * Generated as drop-and-add columns, which would lose every message; reviewed into type
 * changes in place, which keep the rows (a uuid's text is its lower-case form, as before).
 * The foreign key is set aside while both ends change type.
 */
export class ConversationTextIds1764000000100 implements MigrationInterface {
  name = 'ConversationTextIds1764000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "conversation_message" DROP CONSTRAINT "FK_conversation_message_conversation"`);
    await q.query(`ALTER TABLE "conversation" ALTER COLUMN "id" TYPE text USING "id"::text`);
    await q.query(
      `ALTER TABLE "conversation_message" ALTER COLUMN "conversation_id" TYPE text USING "conversation_id"::text`,
    );
    await q.query(
      `ALTER TABLE "conversation_message" ADD CONSTRAINT "FK_conversation_message_conversation" FOREIGN KEY ("conversation_id") REFERENCES "conversation"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  /** Fails while a conversation has an id that is not a UUID: delete those first. */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "conversation_message" DROP CONSTRAINT "FK_conversation_message_conversation"`);
    await q.query(
      `ALTER TABLE "conversation_message" ALTER COLUMN "conversation_id" TYPE uuid USING "conversation_id"::uuid`,
    );
    await q.query(`ALTER TABLE "conversation" ALTER COLUMN "id" TYPE uuid USING "id"::uuid`);
    await q.query(
      `ALTER TABLE "conversation_message" ADD CONSTRAINT "FK_conversation_message_conversation" FOREIGN KEY ("conversation_id") REFERENCES "conversation"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }
}
