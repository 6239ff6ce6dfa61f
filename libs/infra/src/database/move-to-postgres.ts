import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
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
    // Every table of the application's schema, not only those with a TypeORM entity: the
    // knowledge, channel and team records are kept through plain SQL repositories.
    const tables = await tablesInCopyOrder(source);
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
    await resumeSequences(target);
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

/** The application's tables (schema `public`, less the migrations ledger), parents before children. */
async function tablesInCopyOrder(db: DataSource): Promise<string[]> {
  const names = (
    (await db.query(
      `SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'typeorm_migrations'
        ORDER BY table_name`,
    )) as Array<{ name: string }>
  ).map((r) => r.name);
  const references = (await db.query(
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE c.contype = 'f' AND n.nspname = 'public'`,
  )) as Array<{ child: string; parent: string }>;
  return orderParentsFirst(
    names,
    references.map((r) => ({ child: unquote(r.child), parent: unquote(r.parent) })),
  );
}

const unquote = (name: string): string => name.replace(/^"(.*)"$/, '$1');

/** Parents before the tables that reference them; a self-reference or a cycle keeps name order. */
export function orderParentsFirst(names: string[], references: Array<{ child: string; parent: string }>): string[] {
  const ordered: string[] = [];
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const visit = (name: string): void => {
    if (placed.has(name) || visiting.has(name)) return;
    visiting.add(name);
    for (const r of references) if (r.child === name && r.parent !== name && names.includes(r.parent)) visit(r.parent);
    visiting.delete(name);
    placed.add(name);
    ordered.push(name);
  };
  for (const name of names) visit(name);
  return ordered;
}

/** Copied rows carry their serial values: each sequence continues after the largest one copied. */
async function resumeSequences(db: DataSource): Promise<void> {
  const serials = (await db.query(
    `SELECT c.table_name AS "table", c.column_name AS "column",
            pg_get_serial_sequence(format('%I', c.table_name), c.column_name) AS "sequence"
       FROM information_schema.columns c
      WHERE c.table_schema = 'public' AND pg_get_serial_sequence(format('%I', c.table_name), c.column_name) IS NOT NULL`,
  )) as Array<{ table: string; column: string; sequence: string }>;
  for (const s of serials) {
    await db.query(
      `SELECT setval($1, COALESCE((SELECT max("${s.column}") FROM "${s.table}"), 0) + 1, false)`,
      [s.sequence],
    );
  }
}
