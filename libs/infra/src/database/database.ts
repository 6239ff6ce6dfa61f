import { randomUUID } from 'node:crypto';
import { DataSource, type QueryRunner } from 'typeorm';
import { ENTITIES, MIGRATIONS } from './schema.js';
import { recordCompatibleMigrations } from './schema-status.js';

/** Arbitrary constant: the advisory lock key under which replicas take turns migrating. */
const MIGRATION_LOCK_KEY = 4_707_202_611;

/**
 * Connections the pool keeps open once it has them, and the start opens and warms
 * (warmConnections): as many as a server at a person's pace uses at once (a message's request
 * beside its turn's reads and writes used five). A new Postgres connection is dear: its opening
 * (a backend forked, ~10-15 ms on a 2-core machine), then the first statements that touch each
 * table or call each function (the backend's catalog caches filled, the function compiled and
 * planned: a message's first `submit_user_message` on a new backend took 9-18 ms, against
 * 0.3-0.6 ms after). pg's pool closes a connection idle for 10 s: a server used now and then
 * paid that again and again. Those above this many (up to the pool's size) still close when idle.
 */
export const KEPT_CONNECTIONS = 6;

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
    // `min`: idle connections up to it are kept (pg's pool closes only those above).
    extra: { max: poolSize, min: Math.min(poolSize, KEPT_CONNECTIONS), connectionTimeoutMillis: 10_000 },
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

/**
 * Warms a new connection for the turns it will serve: a user's message submitted, the reply
 * appended and the turn completed, for a space and a conversation of its own, in a transaction
 * rolled back (nothing is written, no other session sees it). On a new backend the first of
 * each costs 10-20 ms (catalog caches of the tables and their indexes, the functions compiled,
 * their statements and the foreign keys' checks planned); after this, ~3 ms against ~1.5 warm.
 */
async function warmUp(runner: QueryRunner): Promise<void> {
  const id = `warm-up-${randomUUID()}`;
  await runner.startTransaction();
  try {
    await runner.query(
      `INSERT INTO "space" ("id", "name", "icon", "path", "sort_order", "preferences") VALUES ($1, '', '', $1, 0, '{}')`,
      [id],
    );
    await runner.query(`INSERT INTO "conversation" ("id", "space_id", "title") VALUES ($1, $1, '')`, [id]);
    const [submitted] = (await runner.query(
      `SELECT "outcome", "turn" FROM "submit_user_message"($1::text, gen_random_uuid(), '', '{}'::jsonb, '{}'::jsonb,
        gen_random_uuid(), 'chat', $1::text, $1::text, '{}'::jsonb, $1::text, false, NULL::jsonb, NULL::jsonb)`,
      [id],
    )) as Array<{ outcome: string; turn: { id: string } | null }>;
    if (submitted?.outcome !== 'queued' || !submitted.turn)
      throw new Error(`submit_user_message: ${submitted?.outcome}`);
    await runner.query(`SELECT "id" FROM "append_message"($1::text, 'assistant', '', '{}'::jsonb)`, [id]);
    // A reply with thoughts goes through the function's other form.
    await runner.query(`SELECT "id" FROM "append_message"($1::text, 'assistant', '', '{}'::jsonb, '[{}]'::jsonb)`, [
      id,
    ]);
    await runner.query(`SELECT "ended" FROM "complete_turn"($1::uuid, gen_random_uuid(), false)`, [submitted.turn.id]);
  } finally {
    await runner.rollbackTransaction();
  }
}

/**
 * Opens `count` of the pool's connections at once and warms each (warmUp), so the first turns
 * after a start find them open and warm (the pool keeps them). For a Postgres server:
 * the embedded database is one backend behind its socket, warmed by its first use. Answers why
 * any connection could not be warmed (nothing on a current schema).
 */
export async function warmConnections(ds: DataSource, count = KEPT_CONNECTIONS): Promise<string[]> {
  const runners = Array.from({ length: count }, () => ds.createQueryRunner());
  const failed: string[] = [];
  try {
    await Promise.all(
      runners.map(async (runner) => {
        await runner.connect();
        await warmUp(runner).catch((err: unknown) => failed.push(err instanceof Error ? err.message : String(err)));
      }),
    );
  } finally {
    await Promise.all(runners.map((runner) => runner.release()));
  }
  return failed;
}
