import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** `db.migrated-<time>`: an embedded database moved to Postgres (kept, never opened again by itself). */
export const EMBEDDED_MIGRATED_PREFIX = 'db.migrated-';

/**
 * Why this data folder must not start an embedded database: its database was moved to Postgres
 * (`db` gone, `db.migrated-*` there). Null when it may.
 */
export function movedToPostgresProblem(dataDir: string): string | null {
  if (existsSync(join(dataDir, 'db')) || !existsSync(dataDir)) return null;
  const moved = readdirSync(dataDir)
    .filter((n) => n.startsWith(EMBEDDED_MIGRATED_PREFIX))
    .sort();
  if (moved.length === 0) return null;
  return (
    `this data folder's embedded database was moved to Postgres (migrate-to-postgres; kept as ${moved.at(-1)}): ` +
    'start with DATABASE_URL set to that Postgres. To go back to the embedded copy as it was before the move, ' +
    `rename ${join(dataDir, moved.at(-1)!)} to ${join(dataDir, 'db')}`
  );
}
