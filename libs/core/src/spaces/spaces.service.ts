import { ErrorCodes } from '#contracts/errors.js';
import { randomUUID } from 'node:crypto';
import { isAbsolute, join, resolve } from 'node:path';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import {
  DEFAULT_MEMORY_PREFERENCES,
  MEMORY_CADENCES,
  type MemoryCadence,
  SPACE_CHANGED,
  type SpaceChange,
  type SpaceDto,
  type SpacePreferences,
  TEMP_SPACE_ID,
} from '#contracts/spaces.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { AppCleanup } from '../ports/app-cleanup.port.js';
import { ConversationCleanup } from '../ports/conversation-cleanup.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { Replica } from '../ports/replica.port.js';
import { SpaceActivity } from '../ports/space-activity.port.js';
import { SpaceFolders } from '../ports/space-folders.port.js';
import { SpaceRepository } from '../ports/space.repository.port.js';
import { DEFAULT_SPACE_ICON, type Space } from '../kernel/space.js';
import {
  isSameOrInside,
  isUnsafeToRemove,
  mayRemoveSpaceFolder,
  normalizeSpaceName,
  spaceFolderMessage,
  spaceFolderProblem,
} from './space-rules.js';

/** With replicas, a temporary file this old is no write in progress any more (a write takes seconds). */
export const ORPHANED_TEMP_AGE_MS = 10 * 60_000;

export interface CreateSpaceInput {
  name?: unknown;
  icon?: unknown;
  customPath?: unknown;
  color?: unknown;
}

/**
 * Who asks for a space folder: the password holder over the API (`user`), or a turn through
 * the assistant's own listener (`assistant`), which may choose no folder outside the data
 * folder unless the operator names space roots.
 */
export type FolderCaller = 'user' | 'assistant';

export interface PreferencesPatch {
  memory?: { enabled?: unknown; autoConsolidate?: unknown; cadence?: unknown };
}

/** Texts the specification fixes, and the ones this service adds. */
export const SpaceErrors = {
  notFound: 'Space not found',
  folderMissing: 'That folder does not exist.',
  tempImmutable: 'The temporary space cannot change its working folder.',
  tempUndeletable: 'The temporary space cannot be deleted.',
  busy: 'Work is in progress in this space; try again when it has finished.',
  changing: 'Another change to this space is under way.',
  unsafeFolder: 'Refusing to use the filesystem root, the data folder or a parent of it as a space folder.',
  folderTaken: 'Another space already uses that folder.',
  nested: (field: string) =>
    `${field}: the folder lies inside another space's folder or contains one (deleting one space would delete the other's files).`,
  outsideRoots: (field: string, roots: readonly string[]) =>
    `${field}: the folder must lie inside one of the space roots the operator set (SVC_SPACE_ROOTS: ${roots.join(', ')}).`,
  assistantFolder: (field: string) =>
    `${field}: the assistant cannot choose a space folder; its spaces live under the data folder (leave ${field} out). The operator can name folders for spaces with SVC_SPACE_ROOTS.`,
} as const;

/** Workspaces: records, folders, order, working folder, preferences. */
@Injectable()
export class SpacesService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Spaces');
  private readonly listeners = new Set<(spaceId: string, change: SpaceChange) => void>();
  private readonly changing = new Set<string>();

  constructor(
    private readonly spaces: SpaceRepository,
    private readonly folders: SpaceFolders,
    private readonly activity: SpaceActivity,
    private readonly conversations: ConversationCleanup,
    private readonly apps: AppCleanup,
    private readonly bus: EventBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly replica: Replica,
  ) {}

  /** The temporary space always exists. */
  async onApplicationBootstrap(): Promise<void> {
    const path = join(this.config.dataDir, 'temp');
    await this.folders.ensureFolder(path);
    await this.spaces.insertIfMissing({
      id: TEMP_SPACE_ID,
      name: 'svc',
      icon: '💬',
      color: null,
      path,
      isTemp: true,
      preferences: {},
    });
    // The data folder may have moved (restored backup, new volume): follow it.
    const temp = await this.spaces.findById(TEMP_SPACE_ID);
    if (temp && temp.path !== path) await this.spaces.update(TEMP_SPACE_ID, { path });
    void this.sweepOrphanedTempFiles();
  }

  /**
   * Temporary files of atomic writes cut short by a kill, in the background at start. Alone
   * on its data folder (no REDIS_URL) every one is an orphan; with replicas, only those older
   * than ORPHANED_TEMP_AGE_MS (another replica may be writing a younger one now).
   */
  private async sweepOrphanedTempFiles(): Promise<void> {
    const olderThanMs = this.replica.shared ? ORPHANED_TEMP_AGE_MS : 0;
    try {
      let removed = 0;
      for (const space of await this.spaces.listAll()) {
        removed += await this.folders.removeOrphanedTempFiles(space.path, olderThanMs);
      }
      if (removed > 0) this.logger.log(`removed ${removed} orphaned temporary file(s) of interrupted writes`);
    } catch (err) {
      this.logger.warn(`could not sweep orphaned temporary files: ${(err as Error).message}`);
    }
  }

  /** Listens to space changes in this process (other replicas hear `space:changed` on the bus). */
  onChange(listener: (spaceId: string, change: SpaceChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  defaultPath(): string {
    return join(this.config.dataDir, 'spaces');
  }

  async get(spaceId: string): Promise<Space> {
    const space = await this.spaces.findById(spaceId);
    if (!space) throw DomainError.notFound(SpaceErrors.notFound, ErrorCodes.SPACE_NOT_FOUND);
    return space;
  }

  /** Every space, the temporary one included. */
  listAll(): Promise<Space[]> {
    return this.spaces.listAll();
  }

  /** Every space's folder, the temporary one's included: the roots a path anywhere may lie in. */
  listFolders(): Promise<string[]> {
    return this.spaces.listFolders();
  }

  /** User-created spaces in the user's order. */
  async list(): Promise<Space[]> {
    return (await this.spaces.listAll()).filter((s) => !s.isTemp);
  }

  async create(input: CreateSpaceInput, caller: FolderCaller = 'user'): Promise<Space> {
    const name = normalizeSpaceName(input.name);
    if (name === null) throw DomainError.invalid('name is required (1 to 200 characters)');
    const icon = optionalString(input.icon, 'icon') ?? DEFAULT_SPACE_ICON;
    const color = optionalString(input.color, 'color');
    const customPath = optionalString(input.customPath, 'customPath');
    const id = randomUUID();
    let path = join(this.defaultPath(), id);
    if (customPath !== null) {
      if (!isAbsolute(customPath)) throw DomainError.invalid('customPath must be an absolute path');
      path = resolve(customPath);
      await this.assertUsableFolder(path, null, 'customPath', caller);
    }
    const ownsFolder = await this.folders.ensureFolder(path);
    const space = await this.spaces.insert({
      id,
      name,
      icon,
      color,
      path,
      isTemp: false,
      ownsFolder,
      preferences: {},
    });
    await this.announce(id, 'created');
    return space;
  }

  async update(spaceId: string, input: { name?: unknown; icon?: unknown; color?: unknown }): Promise<Space> {
    await this.get(spaceId);
    const patch: { name?: string; icon?: string; color?: string | null } = {};
    if (input.name !== undefined) {
      const name = normalizeSpaceName(input.name);
      if (name === null) throw DomainError.invalid('name must be 1 to 200 characters');
      patch.name = name;
    }
    const icon = optionalString(input.icon, 'icon');
    if (icon !== null) patch.icon = icon;
    const color = optionalString(input.color, 'color');
    if (color !== null) patch.color = color;
    const updated = await this.spaces.update(spaceId, patch);
    if (!updated) throw DomainError.notFound(SpaceErrors.notFound, ErrorCodes.SPACE_NOT_FOUND);
    await this.announce(spaceId, 'updated');
    return updated;
  }

  /**
   * Removes the folder (recursively, no trash), every conversation and digital human of the
   * space and the record. The folder goes first: if that fails the space is still there to retry.
   */
  async delete(spaceId: string): Promise<void> {
    const space = await this.get(spaceId);
    if (space.isTemp) throw DomainError.forbidden(SpaceErrors.tempUndeletable);
    const folder = await this.folders.canonical(space.path);
    const dataDir = await this.folders.canonical(this.config.dataDir);
    if (isUnsafeToRemove(folder, dataDir)) throw DomainError.forbidden(SpaceErrors.unsafeFolder);
    const others = (await this.spaces.listAll()).filter((s) => s.id !== spaceId);
    const own = mayRemoveSpaceFolder(
      folder,
      { ownsFolder: space.ownsFolder, defaultFolder: await this.folders.canonical(join(this.defaultPath(), space.id)) },
      dataDir,
    );
    // A folder the space did not create, or one another space still uses, stays.
    if (own && !(await this.sharesFolder(folder, others))) await this.folders.removeRecursive(folder);
    await this.conversations.deleteAllInSpace(spaceId);
    await this.apps.deleteAllInSpace(spaceId);
    await this.spaces.remove(spaceId);
    await this.announce(spaceId, 'deleted');
  }

  /** Gives the listed spaces the listed order; the others keep their positions. */
  async reorder(spaceIds: readonly string[]): Promise<void> {
    const known = new Set((await this.spaces.listAll()).filter((s) => !s.isTemp).map((s) => s.id));
    await this.spaces.reorder([...new Set(spaceIds)].filter((id) => known.has(id)));
  }

  /**
   * Points the space at another existing folder. Nothing is moved, created or deleted.
   * Refused for the temporary space, for folders inside the data folder, outside the
   * operator's space roots, inside or around another space's folder, while work is in
   * progress in the space, and while another change to it is under way.
   */
  async setWorkingDir(spaceId: string, workingDir: unknown, caller: FolderCaller = 'user'): Promise<Space> {
    const space = await this.get(spaceId);
    if (space.isTemp) throw DomainError.forbidden(SpaceErrors.tempImmutable);
    if (typeof workingDir !== 'string' || workingDir.trim() === '') throw DomainError.invalid('workingDir is required');
    if (!isAbsolute(workingDir)) throw DomainError.invalid('workingDir must be an absolute path');
    if (!(await this.folders.isFolder(workingDir))) throw DomainError.invalid(SpaceErrors.folderMissing);
    const folder = await this.folders.canonical(workingDir);
    await this.assertUsableFolder(folder, spaceId, 'workingDir', caller);
    if (this.changing.has(spaceId)) throw new DomainError('conflict', SpaceErrors.changing, ErrorCodes.SPACE_BUSY);
    this.changing.add(spaceId);
    try {
      if (await this.activity.isBusy(spaceId))
        throw new DomainError('conflict', SpaceErrors.busy, ErrorCodes.SPACE_BUSY);
      // The user brought this folder: deleting the space later leaves it in place.
      const updated = await this.spaces.update(spaceId, { path: folder, ownsFolder: false });
      if (!updated) throw DomainError.notFound(SpaceErrors.notFound, ErrorCodes.SPACE_NOT_FOUND);
      await this.announce(spaceId, 'folder-changed');
      return updated;
    } finally {
      this.changing.delete(spaceId);
    }
  }

  /** Whether the space's working folder is there (it can vanish or be unmounted). */
  folderExists(space: Space): Promise<boolean> {
    return this.folders.isFolder(space.path);
  }

  preferencesOf(space: Space): SpacePreferences {
    return { memory: { ...DEFAULT_MEMORY_PREFERENCES, ...(space.preferences.memory ?? {}) } };
  }

  async updatePreferences(spaceId: string, patch: PreferencesPatch): Promise<Space> {
    const space = await this.get(spaceId);
    if (!patch || typeof patch !== 'object') throw DomainError.invalid('body must be an object like {memory:{...}}');
    const memory = patch.memory;
    if (memory !== undefined && (memory === null || typeof memory !== 'object' || Array.isArray(memory))) {
      throw DomainError.invalid('memory must be an object');
    }
    const next = { ...(space.preferences.memory ?? {}) };
    if (memory) {
      for (const key of ['enabled', 'autoConsolidate'] as const) {
        if (memory[key] === undefined) continue;
        if (typeof memory[key] !== 'boolean') throw DomainError.invalid(`memory.${key} must be a boolean`);
        next[key] = memory[key] as boolean;
      }
      if (memory.cadence !== undefined) {
        if (!MEMORY_CADENCES.includes(memory.cadence as MemoryCadence)) {
          throw DomainError.invalid(`memory.cadence must be one of ${MEMORY_CADENCES.join(', ')}`);
        }
        next.cadence = memory.cadence as MemoryCadence;
      }
    }
    const updated = await this.spaces.update(spaceId, { preferences: { ...space.preferences, memory: next } });
    if (!updated) throw DomainError.notFound(SpaceErrors.notFound, ErrorCodes.SPACE_NOT_FOUND);
    return updated;
  }

  toDto(space: Space): SpaceDto {
    return {
      id: space.id,
      name: space.name,
      path: space.path,
      icon: space.icon,
      ...(space.color ? { color: space.color } : {}),
      isTemp: space.isTemp,
      preferences: this.preferencesOf(space),
      createdAt: space.createdAt.toISOString(),
      updatedAt: space.updatedAt.toISOString(),
    };
  }

  /**
   * Refuses the data folder (inside or containing it) and system folders (400); a folder
   * outside the operator's space roots, or any folder the assistant asks for when there are
   * none (403); a folder another space uses, lies in or contains (409).
   */
  private async assertUsableFolder(
    folder: string,
    spaceId: string | null,
    field: string,
    caller: FolderCaller,
  ): Promise<void> {
    const canonical = await this.folders.canonical(folder);
    const problem = spaceFolderProblem(canonical, await this.folders.canonical(this.config.dataDir));
    if (problem !== null) throw DomainError.invalid(spaceFolderMessage(field, problem));
    const roots = this.config.spaceRoots;
    if (roots !== null) {
      const inside = await Promise.all(
        roots.map(async (root) => isSameOrInside(canonical, await this.folders.canonical(root))),
      );
      if (!inside.includes(true)) throw DomainError.forbidden(SpaceErrors.outsideRoots(field, roots));
    } else if (caller === 'assistant') {
      throw DomainError.forbidden(SpaceErrors.assistantFolder(field));
    }
    const others = (await this.spaces.listAll()).filter((s) => s.id !== spaceId);
    if (await this.sharesFolder(canonical, others))
      throw new DomainError('conflict', SpaceErrors.folderTaken, ErrorCodes.SPACE_FOLDER_TAKEN);
    for (const other of others) {
      const theirs = await this.folders.canonical(other.path);
      if (isSameOrInside(canonical, theirs) || isSameOrInside(theirs, canonical)) {
        throw new DomainError('conflict', SpaceErrors.nested(field), ErrorCodes.SPACE_FOLDER_TAKEN);
      }
    }
  }

  private async sharesFolder(folder: string, spaces: Space[]): Promise<boolean> {
    for (const other of spaces) {
      if ((await this.folders.canonical(other.path)) === folder) return true;
    }
    return false;
  }

  private async announce(spaceId: string, change: SpaceChange): Promise<void> {
    for (const listener of this.listeners) listener(spaceId, change);
    await this.bus.publish(SPACE_CHANGED, { spaceId, change });
  }
}

function optionalString(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw DomainError.invalid(`${field} must be a string`);
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}
