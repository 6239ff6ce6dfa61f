import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Conversations record the digital human whose thread they are (`app_id`), so the space's
 * list leaves them out and deleting the app deletes them. Existing threads are found by
 * their fixed ids (`app-chat:<appId>`, `app-run:<appId>`) and, for ids a caller chose, by
 * the app their turns name.
 */
export class AppConversations1765100000000 implements MigrationInterface {
  name = 'AppConversations1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "conversation" ADD "app_id" text`);
    await q.query(`CREATE INDEX "IDX_conversation_app" ON "conversation" ("app_id") `);
    await q.query(
      `UPDATE "conversation" SET "app_id" = substring("id" from position(':' in "id") + 1)
       WHERE "id" LIKE 'app-chat:%' OR "id" LIKE 'app-run:%'`,
    );
    await q.query(
      `UPDATE "conversation" c SET "app_id" = t."request"->>'appId'
       FROM "agent_turn" t
       WHERE c."app_id" IS NULL AND t."conversation_id" = c."id"
         AND t."kind" IN ('app-chat', 'app-run') AND t."request"->>'appId' IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "public"."IDX_conversation_app"`);
    await q.query(`ALTER TABLE "conversation" DROP COLUMN "app_id"`);
  }
}
