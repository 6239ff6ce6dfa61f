import type { AppConfig } from '#core/config/app-config.js';
import { describeError } from '../logging/describe-error.js';
import type { AppLogger } from '../logging/logger.js';
import { DataFolderLock } from './data-folder-lock.js';
import { EmbeddedPostgres } from './embedded-postgres.js';
import { freshSnapshot } from './fresh-database-snapshot.js';
import { movedToPostgresProblem } from './moved-to-postgres.js';

/** The embedded database being started, with the data folder lock taken before it. */
export interface EmbeddedStart {
  readonly lock: DataFolderLock;
  readonly database: Promise<EmbeddedPostgres>;
  /** When the start began (Date.now()), for the "embedded database started" log line. */
  readonly startedAt: number;
}

/**
 * Locks the data folder (throws at once when another process holds it: nothing touches the
 * database before that) and starts the embedded database on its thread. Light to import, so
 * the server's entry can begin it before loading the rest of the server (seconds that PGlite's
 * own start then overlaps); Infrastructure takes it from there.
 */
export function startEmbeddedDatabase(config: AppConfig, logger: AppLogger): EmbeddedStart {
  const startedAt = Date.now();
  const moved = movedToPostgresProblem(config.dataDir);
  if (moved !== null) throw new Error(moved);
  const lock = DataFolderLock.acquire(config.dataDir);
  const database = EmbeddedPostgres.start(config.dataDir, {
    // A new data folder starts from the migrated database built with the code.
    seed: config.migrations === 'run' ? (freshSnapshot() ?? undefined) : undefined,
    onFailure: (err) => logger.error('embedded database failed', { err: describeError(err) }),
  });
  // Awaited by Infrastructure later; a failure meanwhile is no unhandled rejection.
  database.catch(() => undefined);
  return { lock, database, startedAt };
}
