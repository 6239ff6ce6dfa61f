import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BackupReport, Backups } from '#core/ports/backup.port.js';
import type { EmbeddedPostgres } from '../database/embedded-postgres.js';

export const DATABASE_DUMP = 'database.tar.gz';
export const FILES_FOLDER = 'files';
const MANIFEST = 'backup.json';
/** Not copied: the live database (dumped instead), earlier backups, the process lock. */
const SKIPPED = new Set(['db', 'backups', 'server.lock']);

/**
 * Writes a backup folder: the database dump (consistent, taken while serving), the data
 * folder's files (spaces, temporary space, trash, access password; copied as they are at
 * that moment) and a manifest. Returns what it wrote.
 */
export async function writeEmbeddedBackup(
  db: EmbeddedPostgres,
  dataDir: string,
  dest: string,
  version: string,
): Promise<BackupReport> {
  mkdirSync(dest, { recursive: true });
  const dump = Buffer.from(await (await db.dump()).arrayBuffer());
  writeFileSync(join(dest, DATABASE_DUMP), dump);
  let files = 0;
  for (const name of readdirSync(dataDir)) {
    if (SKIPPED.has(name)) continue;
    cpSync(join(dataDir, name), join(dest, FILES_FOLDER, name), {
      recursive: true,
      verbatimSymlinks: true,
      filter: () => {
        files++;
        return true;
      },
    });
  }
  writeFileSync(
    join(dest, MANIFEST),
    JSON.stringify({ kind: 'svc-server embedded backup', version, createdAt: new Date().toISOString() }, null, 2),
  );
  return { path: dest, databaseBytes: dump.length, files };
}

/**
 * Restores a backup folder into an empty data folder: the database from its dump, then the
 * files. Refuses a folder that already holds a database.
 */
export async function restoreEmbeddedBackup(source: string, dataDir: string): Promise<void> {
  if (!existsSync(join(source, MANIFEST)) || !existsSync(join(source, DATABASE_DUMP))) {
    throw new Error(`restore: ${source} is not a backup folder (no ${MANIFEST} or ${DATABASE_DUMP})`);
  }
  if (existsSync(join(dataDir, 'db'))) {
    throw new Error(`restore: ${dataDir} already holds a database; restore into an empty data folder`);
  }
  mkdirSync(dataDir, { recursive: true });
  const dump = new Blob([readFileSync(join(source, DATABASE_DUMP))]);
  // Loaded here, not with the server (whose database runs PGlite on a thread of its own).
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(join(dataDir, 'db'), { loadDataDir: dump });
  await db.close();
  if (existsSync(join(source, FILES_FOLDER))) {
    cpSync(join(source, FILES_FOLDER), dataDir, { recursive: true, verbatimSymlinks: true });
  }
}

/** The Backups port for an embedded installation: folders under `<data>/backups/`. */
export class EmbeddedBackups extends Backups {
  constructor(
    private readonly db: EmbeddedPostgres | null,
    private readonly dataDir: string,
    private readonly version: string,
  ) {
    super();
  }

  available(): boolean {
    return this.db !== null;
  }

  async backupNow(): Promise<BackupReport> {
    if (!this.db) throw new Error('no embedded database');
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    return writeEmbeddedBackup(this.db, this.dataDir, join(this.dataDir, 'backups', stamp), this.version);
  }
}
