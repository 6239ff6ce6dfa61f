import type { AppConfig } from '#core/config/app-config.js';
import type { AppLogger } from '../logging/logger.js';
import { DataFolderLock } from './data-folder-lock.js';
import { createDataSource, migrateUnderLock } from './database.js';
import { EmbeddedPostgres } from './embedded-postgres.js';
import { deploymentOf } from '../deployment.js';
import { CommandError } from '../backup/backup-commands.js';
import { schemaProblem, schemaStatus } from './schema-status.js';

/**
 * `svc-server migrate`: applies pending migrations and exits, for a Kubernetes Job (or a
 * release step) while the api pods run with SVC_MIGRATIONS=skip. Takes the same advisory
 * lock as a starting server, so it is safe next to running replicas.
 */
export async function runMigrateCommand(config: AppConfig, logger: AppLogger): Promise<void> {
  let embedded: EmbeddedPostgres | null = null;
  let lock: DataFolderLock | null = null;
  let url = config.databaseUrl;
  if (deploymentOf(config).mode === 'embedded' || url === null) {
    lock = DataFolderLock.acquire(config.dataDir);
    embedded = await EmbeddedPostgres.start(config.dataDir);
    url = embedded.url;
  }
  // Two connections: one holds the advisory lock while the other migrates.
  const dataSource = createDataSource(url, 2);
  try {
    await dataSource.initialize();
    const started = Date.now();
    const applied = await migrateUnderLock(dataSource);
    if (applied.length > 0) logger.info('migrations applied', { migrations: applied, ms: Date.now() - started });
    else logger.info('database schema is current; no migrations to apply');
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
    lock?.release();
  }
}

/**
 * `svc-server wait-for-migrations`: waits until the database's applied migrations match this
 * version (or are ahead only by compatible ones), then exits 0. The api and worker pods' init
 * container, so none of them serves before the migrations Job ran. DATABASE_URL only.
 */
export async function runWaitForMigrations(config: AppConfig, logger: AppLogger, everyMs = 2_000): Promise<void> {
  if (config.databaseUrl === null)
    throw new CommandError('wait-for-migrations needs DATABASE_URL (the embedded database migrates at start)');
  const dataSource = createDataSource(config.databaseUrl, 1);
  let said: string | null = null;
  try {
    for (;;) {
      let problem: string | null;
      try {
        if (!dataSource.isInitialized) await dataSource.initialize();
        problem = schemaProblem(await schemaStatus(dataSource));
      } catch (err) {
        problem = `the database does not answer: ${(err as Error).message}`;
      }
      if (problem === null) {
        logger.info('the database schema matches this version');
        return;
      }
      if (problem !== said) logger.info(`waiting for the migrations: ${problem}`);
      said = problem;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}
