import { DataSource } from 'typeorm';
import { ENTITIES, MIGRATIONS } from './schema.js';
import { recordCompatibleMigrations } from './schema-status.js';

/** Arbitrary constant: the advisory lock key under which replicas take turns migrating. */
const MIGRATION_LOCK_KEY = 4_707_202_611;

/** `migrations`: a prefix of MIGRATIONS builds an older schema (upgrade tests). */
export function createDataSource(url: string, poolSize = 10, migrations: typeof MIGRATIONS = MIGRATIONS): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations,
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    migrationsRun: false,
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    logging: false,
    extra: { max: poolSize, connectionTimeoutMillis: 10_000 },
  });
}

/**
 * Runs pending migrations while holding a Postgres advisory lock, so replicas starting
 * together migrate one at a time and the later ones find nothing left to do.
 */
export async function migrateUnderLock(ds: DataSource): Promise<string[]> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await ds.runMigrations({ transaction: 'each' });
      // Older replicas still running find which of the newer migrations they may serve on.
      await recordCompatibleMigrations(
        ds,
        ds.migrations
          .filter((m) => (m as { backwardCompatible?: boolean }).backwardCompatible === true)
          .map((m) => m.name ?? m.constructor.name),
      );
      return applied.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}

/** SQL that would bring the database in line with the entities; empty when they agree. */
export async function pendingSchemaChanges(ds: DataSource): Promise<string[]> {
  const sql = await ds.driver.createSchemaBuilder().log();
  return sql.upQueries.map((q) => q.query);
}
