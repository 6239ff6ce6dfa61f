import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '#core/config/app-config.js';
import type { AppLogger } from '../logging/logger.js';
import { DataFolderLock } from './data-folder-lock.js';
import { createDataSource, migrateUnderLock } from './database.js';
import { EmbeddedPostgres } from './embedded-postgres.js';
import { EMBEDDED_MIGRATED_PREFIX } from './moved-to-postgres.js';
import { COMPATIBLE_MIGRATIONS_KEY } from './schema-status.js';

const BATCH_ROWS = 500;

/**
 * `svc-server migrate-to-postgres`: copies an embedded installation's records (the data
 * folder's PGlite database) into the Postgres at DATABASE_URL, which must have no records
 * yet. The target gets the same migrations first, so tables and columns match; rows are
 * copied table by table in dependency order, each table in one transaction, as JSON so
 * every column type survives the trip. Files (spaces, trash) stay in the data folder: keep
 * SVC_DATA_DIR pointing at it. The server must be stopped (the data folder lock says so).
 */
export async function runMoveToPostgres(config: AppConfig, logger: AppLogger): Promise<Record<string, number>> {
  if (config.databaseUrl === null) {
    throw new Error('migrate-to-postgres: set DATABASE_URL to the target Postgres');
  }
  if (!existsSync(join(config.dataDir, 'db'))) {
    throw new Error(`migrate-to-postgres: no embedded database under ${config.dataDir}/db`);
  }
  const lock = DataFolderLock.acquire(config.dataDir);
  const embedded = await EmbeddedPostgres.start(config.dataDir);
  const source = createDataSource(embedded.url, 2);
  const target = createDataSource(config.databaseUrl, 2);
  const copied: Record<string, number> = {};
  try {
    await source.initialize();
    await target.initialize();
    // Both at the current schema: the source may come from an older release.
    await migrateUnderLock(source);
    await migrateUnderLock(target);
    // Migrating wrote which migrations are backward compatible: not a record of the target's;
    // the source's own copy of it is copied below.
    await target.query(`DELETE FROM "app_setting" WHERE "key" = $1`, [COMPATIBLE_MIGRATIONS_KEY]);
    const tables = source.entityMetadatas.map((m) => m.tableName);
    for (const table of tables) {
      const [{ count }] = (await target.query(`SELECT count(*)::int AS count FROM "${table}"`)) as Array<{
        count: number;
      }>;
      if (count > 0)
        throw new Error(`migrate-to-postgres: the target already has records in "${table}"; use an empty database`);
    }
    for (const table of tables) {
      const rows = (await source.query(`SELECT row_to_json(t) AS row FROM "${table}" t`)) as Array<{ row: unknown }>;
      await target.transaction(async (tx) => {
        for (let i = 0; i < rows.length; i += BATCH_ROWS) {
          const batch = rows.slice(i, i + BATCH_ROWS).map((r) => r.row);
          await tx.query(`INSERT INTO "${table}" SELECT * FROM json_populate_recordset(NULL::"${table}", $1::json)`, [
            JSON.stringify(batch),
          ]);
        }
      });
      copied[table] = rows.length;
    }
    logger.info('embedded records copied to Postgres', { tables: copied });
  } finally {
    if (source.isInitialized) await source.destroy();
    if (target.isInitialized) await target.destroy();
    await embedded.stop();
  }
  try {
    // Out of the way, so a start without DATABASE_URL cannot serve the pre-migration copy.
    const moved = `${EMBEDDED_MIGRATED_PREFIX}${new Date().toISOString().replace(/[:.]/g, '-')}`;
    renameSync(join(config.dataDir, 'db'), join(config.dataDir, moved));
    logger.info(`the embedded database was renamed ${moved}; start the server with DATABASE_URL from now on`);
  } finally {
    lock.release();
  }
  return copied;
}
