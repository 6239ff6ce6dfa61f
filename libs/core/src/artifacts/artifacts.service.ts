import { ErrorCodes } from '#contracts/errors.js';
import { isUtf8 } from 'node:buffer';
import { basename, dirname, extname, join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { DomainError } from '../errors/domain-error.js';
import { type DirEntry, FileStore, type GuardedPath } from '../ports/file-store.port.js';
import { SERVICE_FOLDER } from '../kernel/space.js';
import { SpacesService } from '../spaces/spaces.service.js';
import type { ArtifactEntry, ArtifactTree, ChildEntry, FileContent, TreeNode } from './artifact.js';
import { detectFileType, type FileTypeInfo, MAX_BINARY_BYTES, MAX_TEXT_BYTES, SNIFF_BYTES } from './file-types.js';
import { nameLengthProblem } from '../errors/text-rules.js';
import { ATOMIC_TEMP_SUFFIX, childOf, isInServiceFolder, isPlainName, isSelfOrDescendant } from './path-rules.js';

/** Default depth of a space listing: the root's entries and one level below. */
export const DEFAULT_LIST_DEPTH = 2;

/** An upload holds at most what a binary read returns: 50 MB. */
export const MAX_UPLOAD_BYTES = MAX_BINARY_BYTES;

export const ArtifactErrors = {
  missingPath: 'Missing file path',
  fileNotFound: 'File not found',
  folderNotFound: 'Folder not found',
  isDirectory: 'Path is a directory',
  notAFile: 'Not a regular file',
  tooLarge: 'File too large',
  uploadTooLarge: `File too large (the upload limit is ${MAX_BINARY_BYTES / 1024 / 1024} MB)`,
  reserved: `Access denied: ${SERVICE_FOLDER} is reserved for the service`,
} as const;

/** A file past its kind's read limit (text 10 MB, other 50 MB): the contract's internal error. */
const fileTooLarge = (): DomainError => new DomainError('internal', ArtifactErrors.tooLarge, ErrorCodes.INTERNAL);

const required = (value: string | undefined | null): value is string => typeof value === 'string' && value !== '';

/** Folders first, then by name (natural, case-insensitive; ties by code units). */
const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
function byFolderThenName(a: DirEntry, b: DirEntry): number {
  if (a.kind !== b.kind) return a.kind === 'folder' ? -1 : 1;
  return collator.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * Files of spaces: listings, trees, creating, moving, renaming, trashing, reading and
 * saving. Every path goes through the FileStore's guard: space operations stay inside that
 * space's working folder, the others inside any space's.
 */
@Injectable()
export class ArtifactsService {
  constructor(
    private readonly spaces: SpacesService,
    private readonly files: FileStore,
  ) {}

  // ---- space files -------------------------------------------------------------------

  /** Entries down to `maxDepth` levels below the root (1: the root's own entries; 0: none), depth first. */
  async list(spaceId: string, maxDepth: number = DEFAULT_LIST_DEPTH): Promise<ArtifactEntry[]> {
    if (!Number.isInteger(maxDepth) || maxDepth < 0) {
      throw DomainError.invalid('maxDepth must be a non-negative integer');
    }
    const spaceRoot = await this.spaceRoot(spaceId);
    const root = await this.existingFolder(await this.inSpace(spaceRoot, spaceRoot, true));
    const out: ArtifactEntry[] = [];
    const walk = async (folder: GuardedPath, depth: number): Promise<void> => {
      for (const item of await this.entriesOf(folder)) {
        out.push(toEntry(folder, item));
        if (item.kind === 'folder' && !item.symlink && depth < maxDepth) {
          await walk(childOf(folder, item.name), depth + 1);
        }
      }
    };
    if (maxDepth > 0) await walk(root, 1);
    return out;
  }

  async children(spaceId: string, dirPath: string | undefined): Promise<ChildEntry[]> {
    if (!required(dirPath)) throw DomainError.invalid('dirPath is required');
    const root = await this.spaceRoot(spaceId);
    const guarded = await this.inSpace(root, dirPath, true);
    this.refuseServiceFolder(guarded);
    const folder = await this.existingFolder(guarded);
    return (await this.entriesOf(folder)).map((item) => withChildrenFlag(toEntry(folder, item), item, false));
  }

  /** The root's entries; top-level folders carry their own entries, deeper folders are left to `children`. */
  async tree(spaceId: string): Promise<ArtifactTree> {
    const space = await this.spaces.get(spaceId);
    const root = await this.existingFolder(await this.inSpace(space.path, space.path, true));
    const nodes: TreeNode[] = [];
    for (const item of await this.entriesOf(root)) {
      const node: TreeNode = toEntry(root, item);
      if (item.kind === 'folder') {
        if (item.symlink) {
          node.childrenLoaded = false;
        } else {
          const folder = childOf(root, item.name);
          node.childrenLoaded = true;
          node.children = (await this.entriesOf(folder)).map((child) =>
            withChildrenFlag(toEntry(folder, child), child, false),
          );
        }
      }
      nodes.push(node);
    }
    return { workspaceRoot: space.path, nodes };
  }

  async createFile(
    spaceId: string,
    input: { name?: string; parentPath?: string; content?: string },
  ): Promise<{ path: string }> {
    const name = this.plainName(input.name, 'name');
    const root = await this.spaceRoot(spaceId);
    const parent = await this.parentFolder(root, input.parentPath, 'parentPath');
    const target = await this.inSpace(root, join(parent.path, name), false);
    this.refuseServiceFolder(target);
    const info = await this.files.stat(target);
    if (info?.kind === 'folder')
      throw new DomainError('conflict', 'A folder already exists at that path', ErrorCodes.ALREADY_EXISTS);
    await this.files.writeAtomic(target, input.content ?? '');
    return { path: target.path };
  }

  async createFolder(spaceId: string, input: { name?: string; parentPath?: string }): Promise<{ path: string }> {
    const name = this.plainName(input.name, 'name');
    const root = await this.spaceRoot(spaceId);
    const parent = await this.parentFolder(root, input.parentPath, 'parentPath');
    const target = await this.inSpace(root, join(parent.path, name), false);
    this.refuseServiceFolder(target);
    const info = await this.files.stat(target);
    if (info && info.kind !== 'folder')
      throw new DomainError('conflict', 'A file already exists at that path', ErrorCodes.ALREADY_EXISTS);
    if (!info) await this.files.makeFolder(target);
    return { path: target.path };
  }

  async move(spaceId: string, input: { oldPath?: string; newParentPath?: string }): Promise<{ path: string }> {
    if (!required(input.oldPath)) throw DomainError.invalid('oldPath is required');
    const root = await this.spaceRoot(spaceId);
    const source = await this.inSpace(root, input.oldPath, false);
    this.refuseServiceFolder(source);
    const info = await this.files.stat(source);
    if (!info) throw DomainError.notFound(ArtifactErrors.fileNotFound, ErrorCodes.FILE_NOT_FOUND);
    const destination = await this.parentFolder(root, input.newParentPath, 'newParentPath');
    if (info.kind === 'folder' && !info.symlink && isSelfOrDescendant(source.real, destination.real)) {
      throw DomainError.invalid('Cannot move a folder into itself');
    }
    const target = await this.inSpace(root, join(destination.path, basename(source.entry)), false);
    if (target.entry === source.entry) return { path: source.path };
    this.refuseServiceFolder(target);
    if (await this.files.stat(target)) {
      throw new DomainError(
        'conflict',
        'A file or folder with that name already exists in the destination',
        ErrorCodes.ALREADY_EXISTS,
      );
    }
    await this.files.move(source, target);
    return { path: target.path };
  }

  async rename(spaceId: string, input: { oldPath?: string; newName?: string }): Promise<{ path: string }> {
    if (!required(input.oldPath)) throw DomainError.invalid('oldPath is required');
    const newName = this.plainName(input.newName, 'newName');
    const root = await this.spaceRoot(spaceId);
    const source = await this.inSpace(root, input.oldPath, false);
    this.refuseServiceFolder(source);
    const info = await this.files.stat(source);
    if (!info) throw DomainError.notFound(ArtifactErrors.fileNotFound, ErrorCodes.FILE_NOT_FOUND);
    const target = await this.inSpace(root, join(dirname(source.path), newName), false);
    if (target.entry === source.entry) return { path: source.path };
    this.refuseServiceFolder(target);
    const existing = await this.files.stat(target);
    // The same entry under another spelling (a case-only rename on a case-insensitive disk) is no conflict.
    if (existing && existing.identity !== info.identity) {
      throw new DomainError('conflict', `A file or folder named ${newName} already exists`, ErrorCodes.ALREADY_EXISTS);
    }
    await this.files.move(source, target);
    return { path: target.path };
  }

  /** Moves a file or folder to the trash of the data folder. */
  async trash(spaceId: string, path: string | undefined): Promise<void> {
    if (!required(path)) throw DomainError.invalid(ArtifactErrors.missingPath);
    const root = await this.spaceRoot(spaceId);
    const target = await this.inSpace(root, path, false);
    this.refuseServiceFolder(target);
    if (!(await this.files.stat(target)))
      throw DomainError.notFound(ArtifactErrors.fileNotFound, ErrorCodes.FILE_NOT_FOUND);
    await this.files.trash(target);
  }

  /**
   * Writes raw bytes (an upload) to `path` in the space: absolute, or relative to the space
   * root. The parent folder must exist; an existing file is replaced atomically, a folder is
   * a conflict; more than MAX_UPLOAD_BYTES leaves nothing behind and answers 413.
   */
  async upload(
    spaceId: string,
    path: string | undefined,
    chunks: AsyncIterable<Uint8Array>,
  ): Promise<{ path: string; size: number }> {
    if (!required(path)) throw DomainError.invalid('path is required');
    const root = await this.spaceRoot(spaceId);
    const target = await this.inSpace(root, path, false);
    this.refuseServiceFolder(target);
    const tooLong = nameLengthProblem(basename(target.path));
    if (tooLong) throw DomainError.invalid(tooLong);
    const info = await this.files.stat(target);
    if (info && info.kind !== 'file')
      throw new DomainError('conflict', 'A folder already exists at that path', ErrorCodes.ALREADY_EXISTS);
    await this.parentFolder(root, dirname(target.path), 'path');
    const size = await this.files.writeAtomicFrom(target, chunks, MAX_UPLOAD_BYTES);
    if (size === 'too-large') throw new DomainError('too_large', ArtifactErrors.uploadTooLarge, ErrorCodes.TOO_LARGE);
    return { path: target.path, size };
  }

  // ---- files by absolute path (any space) --------------------------------------------------

  /** An existing file anywhere, to stream as a download: its name, type, size and bytes. */
  async openDownload(
    path: string | undefined,
  ): Promise<{ name: string; mimeType: string; size: number; chunks: AsyncIterable<Buffer> }> {
    const { target, type } = await this.inspect(path);
    const { size, chunks } = await this.files.openRead(target);
    return { name: basename(target.path), mimeType: type.mimeType, size, chunks };
  }

  /** A file exactly as stored: UTF-8 text, or base64 for binary content and text that is not valid UTF-8. */
  async readContent(path: string | undefined): Promise<FileContent> {
    // A file within the text limit is read as it is looked at (one visit of its folder).
    const { target, data: read } = await this.existingFile(path, { upTo: MAX_TEXT_BYTES, maxBytes: MAX_BINARY_BYTES });
    let type: FileTypeInfo;
    let data: Buffer | 'too-large';
    if (read !== undefined) {
      // Within either limit: read once, the type taken from the bytes read (a file that grew
      // past the text limit since is still refused as text).
      data = read;
      if (data === 'too-large') throw fileTooLarge();
      type = detectFileType(basename(target.path), data.subarray(0, SNIFF_BYTES));
      if (type.isText && data.length > MAX_TEXT_BYTES) throw fileTooLarge();
    } else {
      type = await this.typeOf(target);
      data = await this.files.readFile(target, type.isText ? MAX_TEXT_BYTES : MAX_BINARY_BYTES);
      if (data === 'too-large') throw fileTooLarge();
    }
    const utf8 = type.isText && isUtf8(data);
    return {
      content: data.toString(utf8 ? 'utf8' : 'base64'),
      mimeType: type.mimeType,
      encoding: utf8 ? 'utf-8' : 'base64',
      size: data.length,
    };
  }

  async detectType(path: string | undefined): Promise<FileTypeInfo> {
    return (await this.inspect(path)).type;
  }

  /** Replaces a whole file (or creates it in an existing folder), atomically. */
  async save(path: string | undefined, content: string | undefined): Promise<void> {
    if (!required(path)) throw DomainError.invalid(ArtifactErrors.missingPath);
    if (typeof content !== 'string') throw DomainError.invalid('content is required');
    const target = await this.anywhere(path, false);
    this.refuseServiceFolder(target);
    const info = await this.files.stat(target);
    if (info?.kind === 'folder') throw DomainError.invalid(ArtifactErrors.isDirectory);
    if (!info) {
      const parent = await this.anywhere(dirname(target.path), true);
      if ((await this.files.stat(parent))?.kind !== 'folder')
        throw DomainError.notFound(ArtifactErrors.folderNotFound, ErrorCodes.FOLDER_NOT_FOUND);
    }
    await this.files.writeAtomic(target, content);
  }

  // ---- helpers ---------------------------------------------------------------------------

  private async spaceRoot(spaceId: string): Promise<string> {
    return (await this.spaces.get(spaceId)).path;
  }

  private inSpace(root: string, path: string, allowRoot: boolean): Promise<GuardedPath> {
    return this.files.resolve({ roots: [root], path, base: root, allowRoot });
  }

  private async anywhere(path: string, allowRoot: boolean): Promise<GuardedPath> {
    const roots = await this.spaces.listFolders();
    return this.files.resolve({ roots, path, allowRoot });
  }

  /** An existing regular file anywhere, with its type from its name and first bytes. */
  private async inspect(path: string | undefined): Promise<{ target: GuardedPath; type: FileTypeInfo }> {
    const { target } = await this.existingFile(path);
    return { target, type: await this.typeOf(target) };
  }

  /**
   * An existing regular file anywhere, and its size when looked at; with `read`, also its content
   * when it holds at most `read.upTo` bytes (read with `readFile`'s limit `read.maxBytes`).
   */
  private async existingFile(
    path: string | undefined,
    read?: { upTo: number; maxBytes: number },
  ): Promise<{ target: GuardedPath; size: number; data?: Buffer | 'too-large' }> {
    if (!required(path)) throw DomainError.invalid(ArtifactErrors.missingPath);
    const target = await this.anywhere(path, true);
    this.refuseServiceFolder(target);
    const { info, data } =
      read === undefined
        ? { info: await this.files.stat(target), data: undefined }
        : await this.files.statAndRead(target, read.upTo, read.maxBytes);
    if (!info) throw DomainError.notFound(ArtifactErrors.fileNotFound, ErrorCodes.FILE_NOT_FOUND);
    if (info.kind === 'folder') throw DomainError.invalid(ArtifactErrors.isDirectory);
    if (info.kind !== 'file') throw DomainError.invalid(ArtifactErrors.notAFile);
    return { target, size: info.size, data };
  }

  /** A file's type from its name and first bytes. */
  private async typeOf(target: GuardedPath): Promise<FileTypeInfo> {
    return detectFileType(basename(target.path), await this.files.readHead(target, SNIFF_BYTES));
  }

  private async existingFolder(folder: GuardedPath): Promise<GuardedPath> {
    const info = await this.files.stat(folder);
    if (!info) throw DomainError.notFound(ArtifactErrors.folderNotFound, ErrorCodes.FOLDER_NOT_FOUND);
    if (info.kind !== 'folder') throw DomainError.invalid('Not a folder');
    return folder;
  }

  /** `parentPath` (absolute or relative to the space), or the space root when empty. */
  private async parentFolder(root: string, parentPath: string | undefined, field: string): Promise<GuardedPath> {
    const folder = await this.inSpace(root, required(parentPath) ? parentPath : root, true);
    const info = await this.files.stat(folder);
    if (!info) throw DomainError.notFound(ArtifactErrors.folderNotFound, ErrorCodes.FOLDER_NOT_FOUND);
    if (info.kind !== 'folder') throw DomainError.invalid(`${field} is not a folder`);
    return folder;
  }

  private plainName(value: string | undefined, field: string): string {
    if (!required(value)) throw DomainError.invalid(`${field} is required`);
    const tooLong = nameLengthProblem(value);
    if (tooLong) throw DomainError.invalid(tooLong);
    if (!isPlainName(value)) throw DomainError.invalid(`${field} must be a plain name without slashes`);
    return value;
  }

  /** `.svc` and everything in it belongs to the service: the file API neither shows nor touches it. */
  private refuseServiceFolder(target: GuardedPath): void {
    if (isInServiceFolder(target.realRoot, target.entry) || isInServiceFolder(target.realRoot, target.real)) {
      throw DomainError.forbidden(ArtifactErrors.reserved);
    }
  }

  /** A folder's entries as listings show them: no `.svc` at the root, no half-written temporary files, sorted. */
  private async entriesOf(folder: GuardedPath): Promise<DirEntry[]> {
    const atRoot = folder.relativePath === '';
    return (await this.files.readDir(folder))
      .filter((e) => !(atRoot && e.name === SERVICE_FOLDER) && !e.name.endsWith(ATOMIC_TEMP_SUFFIX))
      .sort(byFolderThenName);
  }
}

function toEntry(folder: GuardedPath, item: DirEntry): ArtifactEntry {
  const child = childOf(folder, item.name);
  return {
    id: child.relativePath,
    name: item.name,
    type: item.kind,
    path: child.path,
    relativePath: child.relativePath,
    extension: item.kind === 'file' ? extname(item.name).slice(1).toLowerCase() : '',
    size: item.kind === 'file' ? item.size : 0,
  };
}

function withChildrenFlag<T extends ArtifactEntry>(
  entry: T,
  item: DirEntry,
  loaded: boolean,
): T & { childrenLoaded?: boolean } {
  return item.kind === 'folder' ? { ...entry, childrenLoaded: loaded } : entry;
}
