import type { DataSource } from 'typeorm';
import { MIGRATIONS } from './schema.js';

/**
 * The settings row where a release lists its migrations that older code may run on (additive:
 * new tables or nullable columns nothing old reads). Written by every migrating process, read
 * by older replicas that find the schema ahead of them.
 */
export const COMPATIBLE_MIGRATIONS_KEY = 'svc.migrations.backward-compatible';

/** Migrations marked with `backwardCompatible = true`: code that lacks them may still serve. */
export function compatibleMigrationNames(migrations: typeof MIGRATIONS = MIGRATIONS): string[] {
  return migrations
    .map((M) => new M() as { name?: string; backwardCompatible?: boolean })
    .filter((m) => m.backwardCompatible === true && typeof m.name === 'string')
    .map((m) => m.name!);
}

/** How the database's applied migrations compare with this code's. */
export interface SchemaStatus {
  /** Current, or ahead only by migrations marked compatible. */
  ok: boolean;
  /** This code's migrations not applied yet (the schema is behind). */
  missing: string[];
  /** Applied migrations this code does not know (a newer release's). */
  newer: string[];
  /** Of `newer`, those the newer release did not mark compatible. */
  incompatible: string[];
}

/** Compares the `typeorm_migrations` rows with MIGRATIONS (a database with no table at all is behind). */
export async function schemaStatus(ds: DataSource, migrations: typeof MIGRATIONS = MIGRATIONS): Promise<SchemaStatus> {
  const known = migrations.map((M) => new M().name as string);
  const exists: Array<{ t: string | null }> = await ds.query(`SELECT to_regclass('typeorm_migrations')::text AS t`);
  const applied: string[] =
    exists[0]?.t === null || exists[0]?.t === undefined
      ? []
      : ((await ds.query(`SELECT "name" FROM "typeorm_migrations"`)) as Array<{ name: string }>).map((r) => r.name);
  const appliedSet = new Set(applied);
  const knownSet = new Set(known);
  const missing = known.filter((n) => !appliedSet.has(n));
  const newer = applied.filter((n) => !knownSet.has(n));
  let compatible = new Set<string>();
  if (newer.length > 0) {
    const rows: Array<{ value: unknown }> = await ds.query(`SELECT "value" FROM "app_setting" WHERE "key" = $1`, [
      COMPATIBLE_MIGRATIONS_KEY,
    ]);
    const value = rows[0]?.value;
    if (Array.isArray(value)) compatible = new Set(value.filter((v): v is string => typeof v === 'string'));
  }
  const incompatible = newer.filter((n) => !compatible.has(n));
  return { ok: missing.length === 0 && incompatible.length === 0, missing, newer, incompatible };
}

/** One line saying what is wrong with the schema (for logs and /readyz); null when it is fine. */
export function schemaProblem(status: SchemaStatus): string | null {
  if (status.missing.length > 0) {
    return `the database schema is behind this version: migrations not applied: ${status.missing.join(', ')} (run the migrate command)`;
  }
  if (status.incompatible.length > 0) {
    return `the database schema is ahead of this version: newer migrations not marked compatible: ${status.incompatible.join(', ')}`;
  }
  return null;
}

/** Records which of this code's migrations older code may run on (after migrating): `names` join the list. */
export async function recordCompatibleMigrations(ds: DataSource, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const rows: Array<{ value: unknown }> = await ds.query(`SELECT "value" FROM "app_setting" WHERE "key" = $1`, [
    COMPATIBLE_MIGRATIONS_KEY,
  ]);
  const kept = Array.isArray(rows[0]?.value) ? (rows[0]!.value as unknown[]).filter((v) => typeof v === 'string') : [];
  const all = [...new Set([...(kept as string[]), ...names])].sort();
  if (all.length === kept.length) return;
  await ds.query(
    `INSERT INTO "app_setting" ("key", "value", "updated_at") VALUES ($1, $2::jsonb, now())
     ON CONFLICT ("key") DO UPDATE SET "value" = EXCLUDED."value", "updated_at" = now()`,
    [COMPATIBLE_MIGRATIONS_KEY, JSON.stringify(all)],
  );
}
