import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { isAbsolute, join } from 'node:path';
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
  mkdirSync(dest, { recursive: true, mode: 0o700 });
  chmodSync(dest, 0o700);
  const dump = Buffer.from(await (await db.dump()).arrayBuffer());
  writeFileSync(join(dest, DATABASE_DUMP), dump, { mode: 0o600 });
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
    { mode: 0o600 },
  );
  // A backup holds every record and the access password: readable by its owner only.
  ownerOnly(dest);
  return { path: dest, databaseBytes: dump.length, files };
}

/** Files 0600 and folders 0700 under `root` (links left alone). */
export function ownerOnly(root: string): void {
  const stat = lstatSync(root);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    chmodSync(root, 0o700);
    for (const name of readdirSync(root)) ownerOnly(join(root, name));
  } else chmodSync(root, 0o600);
}

/** What a restore put in place. */
export interface RestoreReport {
  /** Spaces in the restored database. */
  spaces: number;
  /** Rows in all its tables. */
  records: number;
  /** Files and folders copied into the data folder. */
  files: number;
  /** Spaces whose folder is outside the data folder (a customPath) and was not found here. */
  missingFolders: Array<{ id: string; name: string; path: string }>;
}

/** Entries of a data folder that make it "not empty" for a restore (the lock is the restore's own). */
function dataFolderEntries(dataDir: string): string[] {
  if (!existsSync(dataDir)) return [];
  return readdirSync(dataDir).filter((name) => name !== 'server.lock');
}

/**
 * Restores a backup folder into an empty data folder: the database from its dump, then the
 * files. Refuses a folder that holds anything unless `force` (then its database is replaced and
 * the backup's files are written over). Says what it restored, and which spaces' folders outside
 * the data folder (a customPath) are not there.
 */
export async function restoreEmbeddedBackup(source: string, dataDir: string, force = false): Promise<RestoreReport> {
  if (!existsSync(join(source, MANIFEST)) || !existsSync(join(source, DATABASE_DUMP))) {
    throw new Error(`restore: ${source} is not a backup folder (no ${MANIFEST} or ${DATABASE_DUMP})`);
  }
  const present = dataFolderEntries(dataDir);
  if (present.length > 0 && !force) {
    const what = existsSync(join(dataDir, 'db'))
      ? 'already holds a database'
      : `is not empty (${present.slice(0, 5).join(', ')})`;
    throw new Error(`restore: ${dataDir} ${what}; restore into an empty data folder, or add --force to write over it`);
  }
  mkdirSync(dataDir, { recursive: true });
  if (force) rmSync(join(dataDir, 'db'), { recursive: true, force: true });
  const dump = new Blob([readFileSync(join(source, DATABASE_DUMP))]);
  // Loaded here, not with the server (whose database runs PGlite on a thread of its own).
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(join(dataDir, 'db'), { loadDataDir: dump });
  let spaces: Array<{ id: string; name: string; path: string }>;
  let records = 0;
  try {
    spaces = (await db.query<{ id: string; name: string; path: string }>(`SELECT "id", "name", "path" FROM "space"`))
      .rows;
    const tables = (
      await db.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'`)
    ).rows.map((r) => r.t);
    for (const table of tables) {
      const counted = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table.replace(/"/g, '""')}"`);
      records += Number(counted.rows[0]?.n ?? 0);
    }
  } finally {
    await db.close();
  }
  let files = 0;
  if (existsSync(join(source, FILES_FOLDER))) {
    cpSync(join(source, FILES_FOLDER), dataDir, {
      recursive: true,
      verbatimSymlinks: true,
      filter: () => {
        files++;
        return true;
      },
    });
  }
  // Folders inside the data folder are stored relative to it (or, from a release before that,
  // as `<old data>/spaces/<id>`, rewritten at the first start): only the others can be missing.
  const missingFolders = spaces.filter(
    (s) =>
      isAbsolute(s.path) && !s.path.endsWith(`/spaces/${s.id}`) && !s.path.endsWith('/temp') && !existsSync(s.path),
  );
  return { spaces: spaces.length, records, files, missingFolders };
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
