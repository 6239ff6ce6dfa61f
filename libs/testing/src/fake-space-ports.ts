import { dirname, resolve, sep } from 'node:path';
import { AppCleanup } from '#core/ports/app-cleanup.port.js';
import { ConversationCleanup } from '#core/ports/conversation-cleanup.port.js';
import { SpaceActivity } from '#core/ports/space-activity.port.js';
import { SpaceFolders } from '#core/ports/space-folders.port.js';

const inside = (path: string, folder: string): boolean => path === folder || path.startsWith(folder + sep);

/**
 * A folder tree in memory: folders exist once created (or `add`ed), symlinks (`link`) resolve
 * in `canonical`, removal takes everything below, and temporary files of cut-short writes
 * (`addTempFile`) are swept by age.
 */
export class FakeSpaceFolders extends SpaceFolders {
  readonly folders = new Set<string>(['/']);
  /** Link path → target, both absolute. */
  readonly links = new Map<string, string>();
  /** Every folder `removeRecursive` was asked to remove, in order. */
  readonly removed: string[] = [];
  readonly tempFiles: Array<{ path: string; ageMs: number }> = [];

  /** Creates the folder and its parents (no record of who created it). */
  add(...paths: string[]): this {
    for (const path of paths) for (let p = resolve(path); !this.folders.has(p); p = dirname(p)) this.folders.add(p);
    return this;
  }

  /** Makes `path` a symlink to `target`. */
  link(path: string, target: string): this {
    this.links.set(resolve(path), resolve(target));
    return this;
  }

  addTempFile(path: string, ageMs: number): this {
    this.tempFiles.push({ path: resolve(path), ageMs });
    return this;
  }

  async ensureFolder(path: string): Promise<boolean> {
    const target = await this.canonical(path);
    if (this.folders.has(target)) return false;
    this.add(target);
    return true;
  }

  async isFolder(path: string): Promise<boolean> {
    return this.folders.has(await this.canonical(path));
  }

  async canonical(path: string): Promise<string> {
    let current = resolve(path);
    for (let hops = 0; hops < 40; hops++) {
      const link = [...this.links.keys()].find((l) => inside(current, l));
      if (link === undefined) return current;
      current = resolve(this.links.get(link)! + current.slice(link.length));
    }
    throw new Error(`too many levels of symbolic links: ${path}`);
  }

  async removeRecursive(path: string): Promise<void> {
    const target = resolve(path);
    this.removed.push(target);
    for (const folder of [...this.folders]) if (inside(folder, target)) this.folders.delete(folder);
    for (let i = this.tempFiles.length - 1; i >= 0; i--) {
      if (inside(this.tempFiles[i].path, target)) this.tempFiles.splice(i, 1);
    }
  }

  async removeOrphanedTempFiles(path: string, olderThanMs: number): Promise<number> {
    const folder = await this.canonical(path);
    let count = 0;
    for (let i = this.tempFiles.length - 1; i >= 0; i--) {
      const file = this.tempFiles[i];
      if (inside(file.path, folder) && file.ageMs >= olderThanMs) {
        this.tempFiles.splice(i, 1);
        count++;
      }
    }
    return count;
  }
}

/** Spaces marked busy by the test (`busy.add(id)`); every other space is idle. */
export class FakeSpaceActivity extends SpaceActivity {
  readonly busy = new Set<string>();

  async isBusy(spaceId: string): Promise<boolean> {
    return this.busy.has(spaceId);
  }
}

/** Records the spaces whose conversations were deleted. */
export class RecordingConversationCleanup extends ConversationCleanup {
  readonly deletedSpaces: string[] = [];

  async deleteAllInSpace(spaceId: string): Promise<void> {
    this.deletedSpaces.push(spaceId);
  }
}

/** Records the spaces whose digital humans were deleted. */
export class RecordingAppCleanup extends AppCleanup {
  readonly deletedSpaces: string[] = [];

  async deleteAllInSpace(spaceId: string): Promise<void> {
    this.deletedSpaces.push(spaceId);
  }
}
