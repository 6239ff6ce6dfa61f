import { ErrorCodes } from '#contracts/errors.js';
import type { TrashEntry } from '#contracts/artifacts.js';
import { posix } from 'node:path';
import { Injectable } from '@nestjs/common';
import { DomainError } from '../errors/domain-error.js';
import { FileStore, type GuardedPath } from '../ports/file-store.port.js';
import { type TrashedItem, TrashBin } from '../ports/trash-bin.port.js';
import { SpacesService } from '../spaces/spaces.service.js';
import { ArtifactErrors } from './artifacts.service.js';
import { isInServiceFolder, isPlainName, relativeInside, toPosix } from './path-rules.js';

export const TrashErrors = {
  missingId: 'id is required',
  badId: 'Invalid trash id',
  notInTrash: "Not in this space's trash",
} as const;

/**
 * A space's trash (docs/api.md, "Trash"): the entries of the data folder's trash that came
 * from this space's folder, put back where they were (or elsewhere in the space) or deleted
 * for good. Restored files reach clients as the usual file events: the watcher sees them arrive.
 */
@Injectable()
export class TrashService {
  constructor(
    private readonly spaces: SpacesService,
    private readonly files: FileStore,
    private readonly bin: TrashBin,
  ) {}

  /** The space's trashed entries, newest first. */
  async list(spaceId: string): Promise<TrashEntry[]> {
    const root = (await this.spaces.get(spaceId)).path;
    const mine: Array<{ item: TrashedItem; path: string }> = [];
    for (const item of await this.bin.list()) {
      const path = fromSpace(root, item);
      if (path !== null) mine.push({ item, path });
    }
    mine.sort(
      (a, b) =>
        b.item.deletedAt.getTime() - a.item.deletedAt.getTime() ||
        b.item.recordedAt - a.item.recordedAt ||
        (a.item.id < b.item.id ? -1 : a.item.id > b.item.id ? 1 : 0),
    );
    return mine.map(({ item, path }) => ({
      id: item.id,
      path,
      deletedAt: item.deletedAt.toISOString(),
      isDirectory: item.kind === 'folder',
      ...(item.kind === 'file' ? { size: item.size } : {}),
    }));
  }

  /**
   * Puts the entry `id` back at its original path, or at `path` (absolute inside the space, or
   * relative to its folder), creating the folders on the way. 409 when something is there now.
   */
  async restore(
    spaceId: string,
    input: { id?: string; path?: string },
  ): Promise<{ path: string; relativePath: string }> {
    const root = (await this.spaces.get(spaceId)).path;
    const { original } = await this.entryOf(root, input.id);
    const wanted = typeof input.path === 'string' && input.path !== '' ? input.path : original;
    const target = await this.inSpace(root, wanted);
    if (await this.files.stat(target)) {
      throw new DomainError(
        'conflict',
        `A file or folder already exists at ${target.relativePath}; restore it under another path`,
        ErrorCodes.ALREADY_EXISTS,
      );
    }
    await this.makeParents(root, target);
    await this.bin.restore(input.id!, target);
    return { path: target.path, relativePath: target.relativePath };
  }

  /** Deletes the entry `id` for good. */
  async purge(spaceId: string, id: string | undefined): Promise<void> {
    const root = (await this.spaces.get(spaceId)).path;
    await this.entryOf(root, id);
    await this.bin.purge(id!);
  }

  // ---- helpers ---------------------------------------------------------------------------

  /** The entry `id` of this space's trash, with its original path relative to the space. */
  private async entryOf(root: string, id: string | undefined): Promise<{ item: TrashedItem; original: string }> {
    if (typeof id !== 'string' || id === '') throw DomainError.invalid(TrashErrors.missingId);
    if (!isPlainName(id)) throw DomainError.invalid(TrashErrors.badId);
    const item = await this.bin.get(id);
    const original = item ? fromSpace(root, item) : null;
    if (!item || original === null) throw DomainError.notFound(TrashErrors.notInTrash, ErrorCodes.FILE_NOT_FOUND);
    return { item, original };
  }

  private async inSpace(root: string, path: string): Promise<GuardedPath> {
    const target = await this.files.resolve({ roots: [root], path, base: root, allowRoot: false });
    if (isInServiceFolder(target.realRoot, target.entry) || isInServiceFolder(target.realRoot, target.real)) {
      throw DomainError.forbidden(ArtifactErrors.reserved);
    }
    return target;
  }

  /** Creates the missing folders between the space's folder and `target`. */
  private async makeParents(root: string, target: GuardedPath): Promise<void> {
    const parts = target.relativePath.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) {
      const folder = await this.inSpace(root, parts.slice(0, i).join('/'));
      const info = await this.files.stat(folder);
      if (!info) await this.files.makeFolder(folder);
      else if (info.kind !== 'folder') {
        throw new DomainError(
          'conflict',
          `${folder.relativePath} is a file now, so nothing can be restored into it`,
          ErrorCodes.ALREADY_EXISTS,
        );
      }
    }
  }
}

/** The item's original path relative to the space's folder, or null when it came from elsewhere (or from `.svc`). */
function fromSpace(root: string, item: TrashedItem): string | null {
  const rel = relativeInside(root, item.originalPath);
  if (rel === null || rel === '' || isInServiceFolder(root, item.originalPath)) return null;
  return posix.normalize(toPosix(rel));
}
