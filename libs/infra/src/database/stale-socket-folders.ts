import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SOCKET_FOLDER_PREFIX = 'svc-pg-';
export const SOCKET_NAME = '.s.PGSQL.5432';

/** Whether something listens on the unix socket (a live embedded database of another process). */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(true); // slow, not dead: leave it
    });
  });
}

/**
 * Removes `svc-pg-*` socket folders that embedded databases of killed processes left in the
 * temporary folder: only those older than `minAgeMs` (a starting process creates its folder
 * a moment before it listens) whose socket no longer answers. Answers how many went.
 */
export async function removeStaleSocketFolders(dir = tmpdir(), minAgeMs = 60_000): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(SOCKET_FOLDER_PREFIX));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const folder = join(dir, name);
    try {
      const info = lstatSync(folder);
      if (!info.isDirectory() || Date.now() - info.mtimeMs < minAgeMs) continue;
      if (await answers(join(folder, SOCKET_NAME))) continue;
      rmSync(folder, { recursive: true, force: true });
      removed++;
    } catch {
      /* not ours, or gone already */
    }
  }
  return removed;
}
