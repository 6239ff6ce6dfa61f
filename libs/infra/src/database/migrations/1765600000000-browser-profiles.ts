import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Browser profiles: one encrypted storage state per profile (a space by default). */
export class BrowserProfiles1765600000000 implements MigrationInterface {
  name = 'BrowserProfiles1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "browser_profile" ("profile" text NOT NULL, "state" bytea NOT NULL, "updated_ms" bigint NOT NULL, CONSTRAINT "PK_browser_profile" PRIMARY KEY ("profile"))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "browser_profile"`);
  }
}
