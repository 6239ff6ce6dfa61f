import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Spaces' default folders are stored relative to the data folder (`spaces/<id>`, and `temp`
 * for the temporary space), so a data folder can move, be restored elsewhere or be mounted at
 * another path; the absolute folder is computed when read. Rows written by earlier releases
 * held `<data>/spaces/<id>` and `<data>/temp`: rewritten here. Other folders (a `customPath`,
 * a `working-dir`) keep their absolute path. Down leaves the rows as they are: older code
 * cannot read a relative path, so restore a backup to go back.
 */
export class SpacePathsRelative1766000000100 implements MigrationInterface {
  name = 'SpacePathsRelative1766000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE "space" SET "path" = 'spaces/' || "id"
       WHERE right("path", length('/spaces/' || "id")) = '/spaces/' || "id" AND left("path", 1) = '/'`,
    );
    await q.query(`UPDATE "space" SET "path" = 'temp' WHERE "is_temp" AND right("path", 5) = '/temp'`);
  }

  async down(): Promise<void> {
    // Nothing: see above.
  }
}
