import { cpSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AppConfig } from '#core/config/app-config.js';
import type { BackupReport } from '#core/ports/backup.port.js';
import { DataFolderLock } from '../database/data-folder-lock.js';
import { EmbeddedPostgres } from '../database/embedded-postgres.js';
import { deploymentOf } from '../deployment.js';
import type { AppLogger } from '../logging/logger.js';
import { ownerOnly, type RestoreReport, restoreEmbeddedBackup, writeEmbeddedBackup } from './embedded-backup.js';

export class CommandError extends Error {}

const PG_DUMP_HINT =
  'DATABASE_URL is set: back up the database with pg_dump (pg_dump -Fc "$DATABASE_URL" > svc.dump) ' +
  'and the data volume (spaces and files); see README, "Backups"';

/**
 * `svc-server backup [folder]`: a backup of an embedded installation. While the server runs
 * it asks the server (the only process that may open the database) over HTTP; otherwise it
 * opens the database itself. Without a folder the backup stays under `<data>/backups/`.
 */
export async function runBackupCommand(
  config: AppConfig,
  password: string,
  target: string | undefined,
  logger: AppLogger,
): Promise<BackupReport> {
  if (deploymentOf(config).mode !== 'embedded') throw new CommandError(PG_DUMP_HINT);
  let report: BackupReport;
  if (DataFolderLock.isHeld(config.dataDir)) {
    const url = `http://127.0.0.1:${config.port}${config.basePath}/api/system/backup`;
    const res = await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${password}` } });
    const body = (await res.json().catch(() => ({}))) as { success?: boolean; data?: BackupReport; error?: string };
    if (!res.ok || !body.success || !body.data) {
      throw new CommandError(`backup: the running server refused (${res.status}): ${body.error ?? 'no answer'}`);
    }
    report = body.data;
    if (target) {
      cpSync(report.path, resolve(target), { recursive: true, verbatimSymlinks: true });
      rmSync(report.path, { recursive: true, force: true });
      ownerOnly(resolve(target));
      report = { ...report, path: resolve(target) };
    }
  } else {
    const lock = DataFolderLock.acquire(config.dataDir);
    const db = await EmbeddedPostgres.start(config.dataDir);
    try {
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const dest = target ? resolve(target) : join(config.dataDir, 'backups', stamp);
      report = await writeEmbeddedBackup(db, config.dataDir, dest, config.version);
    } finally {
      await db.stop();
      lock.release();
    }
  }
  logger.info('backup written', { ...report });
  return report;
}

/**
 * `svc-server restore <folder> [--force]`: into an empty SVC_DATA_DIR (or over a used one with
 * `--force`), with the server stopped. Says what it restored and which spaces' folders outside
 * the data folder it could not find.
 */
export async function runRestoreCommand(
  config: AppConfig,
  source: string | undefined,
  logger: AppLogger,
  force = false,
): Promise<RestoreReport> {
  if (deploymentOf(config).mode !== 'embedded') {
    throw new CommandError('DATABASE_URL is set: restore the database with pg_restore and the data volume');
  }
  if (!source) throw new CommandError('restore: name the backup folder (svc-server restore <folder> [--force])');
  const lock = DataFolderLock.acquire(config.dataDir);
  let report: RestoreReport;
  try {
    report = await restoreEmbeddedBackup(resolve(source), config.dataDir, force).catch((err: Error) => {
      throw new CommandError(err.message);
    });
  } finally {
    lock.release();
  }
  logger.info('backup restored', {
    from: resolve(source),
    dataDir: config.dataDir,
    spaces: report.spaces,
    records: report.records,
    files: report.files,
  });
  if (report.missingFolders.length > 0) {
    logger.warn(
      `${report.missingFolders.length} space folder(s) outside the data folder were not found here; ` +
        'copy them to the same path (or change the spaces’ folders) before using those spaces',
      { spaces: report.missingFolders },
    );
  }
  return report;
}
