/**
 * Files inside the allowed roots (spaces' working folders). Every operation takes a
 * GuardedPath, and the only way to get one is `resolve`, the one path guard shared by the
 * file API and the agent's tools: it resolves `..`, refuses absolute paths outside the
 * roots, resolves symlinks (for a path that does not exist yet, those of its nearest
 * existing ancestor) and accepts only what stays inside a root.
 */

export interface PathRequest {
  /** Absolute folders the path must stay inside (one space, or every space). */
  roots: readonly string[];
  /** The path as the client sent it: absolute, or relative to `base` when there is one. */
  path: string;
  /** Folder a relative `path` is taken from; without it a relative path is refused. */
  base?: string;
  /** Whether the root itself is acceptable (listing it: yes; deleting it: no). */
  allowRoot?: boolean;
}

/** A path the guard accepted. Produced by `FileStore.resolve` (or `childOf` for a listed real folder). */
export interface GuardedPath {
  /** The root it lies in, as given in the request (a space's `path`). */
  readonly root: string;
  /** That root with its symlinks resolved. */
  readonly realRoot: string;
  /** What clients see: `root` joined with `relativePath`. */
  readonly path: string;
  /** Inside the root, forward slashes; '' for the root itself. */
  readonly relativePath: string;
  /** The entry itself: its folder with symlinks resolved, plus its own name (a symlink stays a symlink). Used to move, rename or delete it. */
  readonly entry: string;
  /** Every symlink resolved: what reading or writing it touches. Inside an allowed root. */
  readonly real: string;
}

export type FileKind = 'file' | 'folder' | 'other';

export interface FileInfo {
  kind: FileKind;
  size: number;
  /** Identity on disk (device and inode), to tell "same entry" from "another entry with that name". */
  identity: string;
  /** Whether the entry itself is a symlink (its target is what `kind` and `size` describe). */
  symlink: boolean;
}

export interface DirEntry {
  name: string;
  kind: 'file' | 'folder';
  size: number;
  /** A symlink whose target lies inside the same root; listings do not descend into it. */
  symlink: boolean;
}

export abstract class FileStore {
  /** The path guard. Throws DomainError forbidden 'Access denied' for anything outside the roots (existing or not), NUL bytes included. */
  abstract resolve(request: PathRequest): Promise<GuardedPath>;

  /** What is at the path (following symlinks), or null when nothing is. */
  abstract stat(target: GuardedPath): Promise<FileInfo | null>;

  /**
   * The entries of a folder, unsorted. Symlinks pointing outside the folder's root (or
   * nowhere) and entries that are neither files nor folders are left out.
   */
  abstract readDir(folder: GuardedPath): Promise<DirEntry[]>;

  /** Up to `bytes` bytes from the start of a file. */
  abstract readHead(file: GuardedPath, bytes: number): Promise<Buffer>;

  /** The whole file, or 'too-large' when it holds more than `maxBytes`. */
  abstract readFile(file: GuardedPath, maxBytes: number): Promise<Buffer | 'too-large'>;

  /**
   * What `stat` says of the path and, when that is a file of at most `readUpTo` bytes, the file
   * as `readFile(file, maxBytes)` reads it (`data`; absent otherwise). A store may do both in one
   * visit of the file's folder; this default looks, then reads.
   */
  async statAndRead(
    target: GuardedPath,
    readUpTo: number,
    maxBytes: number,
  ): Promise<{ info: FileInfo | null; data?: Buffer | 'too-large' }> {
    const info = await this.stat(target);
    if (info?.kind !== 'file' || info.size > readUpTo) return { info };
    return { info, data: await this.readFile(target, maxBytes) };
  }

  /**
   * Replaces (or creates) a file atomically: a temporary file in the same folder is written,
   * flushed to disk and renamed over the target; an existing file keeps its mode.
   */
  abstract writeAtomic(file: GuardedPath, content: string | Buffer): Promise<void>;

  /**
   * `writeAtomic` for content that arrives in chunks (an upload): nothing replaces the target
   * until every chunk is on disk, and more than `maxBytes` leaves the target untouched and
   * answers 'too-large'. Otherwise the byte count written.
   */
  abstract writeAtomicFrom(file: GuardedPath, chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<number | 'too-large'>;

  /** A regular file opened for reading from the start (a download): its size and its bytes in chunks. */
  abstract openRead(file: GuardedPath): Promise<{ size: number; chunks: AsyncIterable<Buffer> }>;

  /** Creates one folder (its parent must exist); an existing folder is fine. */
  abstract makeFolder(folder: GuardedPath): Promise<void>;

  /** Moves an entry (the entry itself, not a symlink's target); across devices by copy then remove. The caller checks the destination is free. */
  abstract move(from: GuardedPath, to: GuardedPath): Promise<void>;

  /** Moves an entry to the trash of the data folder (freedesktop layout: `trash/files` and `trash/info/*.trashinfo`). */
  abstract trash(target: GuardedPath): Promise<void>;
}
