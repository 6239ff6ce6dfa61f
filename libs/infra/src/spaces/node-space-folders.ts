import { mkdir, rm, stat } from 'node:fs/promises';
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
}
