import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import { FileStore } from '../ports/file-store.port.js';
import { SpaceFolders } from '../ports/space-folders.port.js';
import { SpaceRepository } from '../ports/space.repository.port.js';
import type { Space } from '../kernel/space.js';

/** Where an app keeps its data inside its space folder (docs/api.md, "Files on disk"). */
export const appDataPath = (appId: string): string => `.svc/apps/${appId}`;

/** Files of the app's memory inside its data folder. */
const MEMORY_ENTRIES = ['memory.md', 'memory'];
/** The most of the memory file a turn's prompt carries. */
const MEMORY_MAX_BYTES = 64 * 1024;

/**
 * An app's data folder `<space folder>/.svc/apps/<appId>/`. A global app keeps its data in the
 * temporary space's folder. Every path goes through the FileStore guard, so nothing here can
 * touch a file outside the space folder (purge, move) or outside the app folder (memory).
 */
@Injectable()
export class AppData {
  constructor(
    private readonly files: FileStore,
    private readonly folders: SpaceFolders,
    private readonly spaces: SpaceRepository,
  ) {}

  /** Deletes the whole data folder; nothing there is fine. */
  async purge(appId: string, spaceId: string | null): Promise<void> {
    const root = await this.spaceFolder(spaceId);
    if (root === null) return;
    const target = await this.files.resolve({ roots: [root], path: appDataPath(appId), base: root });
    if (await this.files.stat(target)) await this.folders.removeRecursive(target.entry);
  }

  /** Deletes the memory file and folder; the rest of the data stays. */
  async clearMemory(appId: string, spaceId: string | null): Promise<void> {
    const root = await this.spaceFolder(spaceId);
    if (root === null) return;
    const appFolder = join(root, appDataPath(appId));
    if (!(await this.folders.isFolder(appFolder))) return;
    for (const name of MEMORY_ENTRIES) {
      const target = await this.files.resolve({ roots: [appFolder], path: name, base: appFolder });
      if (await this.files.stat(target)) await this.folders.removeRecursive(target.entry);
    }
  }

  /** The app's memory file (`memory.md` in its data folder), or null when there is none. */
  async readMemory(appId: string, spaceId: string | null, known?: Space): Promise<string | null> {
    // A turn that read the app's space already hands it over (`known`): one read less.
    const root =
      known !== undefined && known.id === (spaceId ?? TEMP_SPACE_ID) ? known.path : await this.spaceFolder(spaceId);
    if (root === null) return null;
    try {
      const target = await this.files.resolve({ roots: [root], path: `${appDataPath(appId)}/memory.md`, base: root });
      if (!(await this.files.stat(target))) return null;
      const data = await this.files.readFile(target, MEMORY_MAX_BYTES);
      return data === 'too-large' ? null : data.toString('utf8');
    } catch {
      return null;
    }
  }

  /** Moves the data folder with the app to another place; an existing folder there is kept. */
  async move(appId: string, from: string | null, to: string | null): Promise<void> {
    const [source, destination] = await Promise.all([this.spaceFolder(from), this.spaceFolder(to)]);
    if (source === null || destination === null || source === destination) return;
    const origin = await this.files.resolve({ roots: [source], path: appDataPath(appId), base: source });
    if (!(await this.files.stat(origin))) return;
    for (const segment of ['.svc', '.svc/apps']) {
      await this.files.makeFolder(await this.files.resolve({ roots: [destination], path: segment, base: destination }));
    }
    const target = await this.files.resolve({ roots: [destination], path: appDataPath(appId), base: destination });
    if (await this.files.stat(target)) return;
    await this.files.move(origin, target);
  }

  private async spaceFolder(spaceId: string | null): Promise<string | null> {
    const space = await this.spaces.findById(spaceId ?? TEMP_SPACE_ID);
    return space ? space.path : null;
  }
}
