/** Where a backup was written, and what it holds. */
export interface BackupReport {
  /** Absolute path of the backup folder. */
  path: string;
  /** Bytes of the database dump. */
  databaseBytes: number;
  /** Files copied from the data folder (spaces, temporary space, trash, password file). */
  files: number;
}

/**
 * Backups of an embedded installation taken by the running server (the only process that
 * may open its database). With DATABASE_URL the database is backed up with pg_dump instead.
 */
export abstract class Backups {
  /** Whether this server can take a backup itself (embedded database). */
  abstract available(): boolean;
  abstract backupNow(): Promise<BackupReport>;
}
