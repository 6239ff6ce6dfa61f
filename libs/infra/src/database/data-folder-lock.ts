import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
}

/**
 * Exclusive ownership of a data folder by one process. The embedded database and the
 * in-process event bus cannot be shared, so a second process on the same folder must
 * refuse to start. A lock left by a process that died (same host, pid gone) is taken over.
 */
export class DataFolderLock {
  private constructor(private readonly file: string) {}

  static acquire(dataDir: string): DataFolderLock {
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, 'server.lock');
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(file, 'wx', 0o600);
        const owner: LockOwner = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
        writeSync(fd, JSON.stringify(owner));
        closeSync(fd);
        return new DataFolderLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const owner = readOwner(file);
        if (owner && isAlive(owner)) {
          throw new Error(
            `The data folder ${dataDir} is in use by another svc-server process (pid ${owner.pid} on ${owner.hostname}). ` +
              'Without REDIS_URL and DATABASE_URL only one process may use a data folder.',
            { cause: err },
          );
        }
        try {
          unlinkSync(file); // stale: its owner is gone
        } catch {
          /* another starter removed it first; retry */
        }
      }
    }
    throw new Error(`Could not lock the data folder ${dataDir}`);
  }

  /** Whether a live process holds the folder (a running server, for tools that must go through it). */
  static isHeld(dataDir: string): boolean {
    const owner = readOwner(join(dataDir, 'server.lock'));
    return owner !== null && isAlive(owner);
  }

  release(): void {
    try {
      const owner = readOwner(this.file);
      if (owner?.pid === process.pid) unlinkSync(this.file);
    } catch {
      /* already gone */
    }
  }
}

function readOwner(file: string): LockOwner | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockOwner;
  } catch {
    return null;
  }
}

function isAlive(owner: LockOwner): boolean {
  if (owner.hostname !== hostname()) return true; // cannot tell: assume alive
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
