import { mkdir, realpath, rm, stat } from 'node:fs/promises';
import { SpaceFolders } from '#core/ports/space-folders.port.js';

export class NodeSpaceFolders extends SpaceFolders {
  async ensureFolder(path: string): Promise<void> {
    await mkdir(path, { recursive: true });
  }

  async isFolder(path: string): Promise<boolean> {
    try {
      return (await stat(path)).isDirectory();
    } catch {
      return false;
    }
  }

  async canonical(path: string): Promise<string> {
    try {
      return await realpath(path);
    } catch {
      return path;
    }
  }

  async removeRecursive(path: string): Promise<void> {
    await rm(path, { recursive: true, force: true });
  }
}
