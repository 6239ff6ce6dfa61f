import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Records whether the server created a space's folder, so deleting a space never removes a
 * folder the user brought. Existing rows get false: only their default folder
 * (`<data>/spaces/<id>`) is still removed, by the rule in core.
 */
export class SpaceOwnsFolder1764200000000 implements MigrationInterface {
  name = 'SpaceOwnsFolder1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "space" ADD "owns_folder" boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "space" DROP COLUMN "owns_folder"`);
  }
}
