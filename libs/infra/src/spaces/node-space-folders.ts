import { lstat, mkdir, readdir, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ATOMIC_TEMP_SUFFIX } from '#core/artifacts/path-rules.js';
import { SpaceFolders } from '#core/ports/space-folders.port.js';
import { canonicalPath } from '../files/path-guard.js';

export class NodeSpaceFolders extends SpaceFolders {
  async ensureFolder(path: string): Promise<boolean> {
    // mkdir answers the first folder it created, undefined when all were there.
    return (await mkdir(path, { recursive: true })) !== undefined;
  }

  async isFolder(path: string): Promise<boolean> {
    try {
      return (await stat(path)).isDirectory();
    } catch {
      return false;
    }
  }

  async canonical(path: string): Promise<string> {
    // A folder that does not exist yet: its nearest existing ancestor resolved, so a symlink
    // on the way (into the data folder, say) is seen before the folder is created through it.
    try {
      return await canonicalPath(path);
    } catch {
      return path;
    }
  }

  async removeRecursive(path: string): Promise<void> {
    await rm(path, { recursive: true, force: true });
  }

  async removeOrphanedTempFiles(path: string, olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    const folders = [path];
    let removed = 0;
    // Iterative, symlinks not followed: only what lies in the space's own tree.
    while (folders.length > 0) {
      const folder = folders.pop()!;
      let entries;
      try {
        entries = await readdir(folder, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        const full = join(folder, entry.name);
        if (entry.isDirectory()) folders.push(full);
        else if (entry.isFile() && entry.name.endsWith(ATOMIC_TEMP_SUFFIX)) {
          try {
            if ((await lstat(full)).mtimeMs > cutoff) continue;
            await unlink(full);
            removed++;
          } catch {
            /* gone already, or not ours to remove */
          }
        }
      }
    }
    return removed;
  }
}
