import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { cp, type FileHandle, lstat, mkdir, open, readdir, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { ATOMIC_TEMP_SUFFIX, isInside } from '#core/artifacts/path-rules.js';
import { DomainError } from '#core/errors/domain-error.js';
import { NAME_TOO_LONG } from '#core/errors/text-rules.js';
import {
  type DirEntry,
  type FileInfo,
  FileStore,
  type GuardedPath,
  type PathRequest,
} from '#core/ports/file-store.port.js';
import {
  atEntry,
  CREATE_NO_FOLLOW,
  inFolder,
  OPENED_FILES_NAMED,
  READ_NO_FOLLOW,
  whereFileOpened,
} from './anchored-folder.js';
import { type FileIo, type FileIoFor, type OpenedEntry, POOL_EVERYWHERE, readerFor } from './file-io.js';
import { ACCESS_DENIED, guardPath } from './path-guard.js';

export interface NodeFileStoreOptions {
  /** The trash folder (`<dataDir>/trash`), holding `files/` and `info/`. */
  trashDir: string;
  /** Deletion time source (tests pin it). */
  now?: () => Date;
  /** Rename primitive; tests replace it to simulate a cross-device move. */
  rename?: (from: string, to: string) => Promise<void>;
  /**
   * The calls that guard a path, look at an entry and read a small file, per space folder
   * (fileIoChooser: on the event loop where that folder is on a local disk). Default: the pool.
   */
  fileIo?: FileIoFor;
}

/** An entry's FileInfo from its own `lstat` and that of what it leads to (itself, unless a symlink). */
function fileInfo(own: Stats, target: Stats = own): FileInfo {
  const kind = target.isDirectory() ? 'folder' : target.isFile() ? 'file' : 'other';
  return {
    kind,
    size: kind === 'file' ? target.size : 0,
    identity: `${own.dev}:${own.ino}`,
    symlink: own.isSymbolicLink(),
  };
}

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

const isMissing = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes(errorCode(err) ?? '');

export const READ_ONLY_FOLDER = 'The folder is on a read-only file system; nothing was written.';

/** File-system failures as domain errors; anything unexpected stays a 500. */
export function toDomainError(err: unknown): unknown {
  if (err instanceof DomainError) return err;
  switch (errorCode(err)) {
    case 'ENOENT':
    case 'ENOTDIR':
      return DomainError.notFound('File not found');
    case 'EACCES':
    case 'EPERM':
    case 'ELOOP':
      return DomainError.forbidden(ACCESS_DENIED);
    case 'EEXIST':
    case 'ENOTEMPTY':
      return new DomainError('conflict', 'A file or folder already exists at that path');
    case 'EISDIR':
      return DomainError.invalid('Path is a directory');
    case 'ENAMETOOLONG':
      return DomainError.invalid(NAME_TOO_LONG);
    case 'EROFS':
      // 403, as docs/api.md ("Limits and failures") has it for what this server cannot do here.
      return DomainError.forbidden(READ_ONLY_FOLDER);
    case 'ENOSPC':
    case 'EDQUOT':
      return new DomainError('internal', 'No space left on the server');
    default:
      return err;
  }
}

export async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw toDomainError(err);
  }
}

/** `YYYY-MM-DDThh:mm:ss` in local time, as the freedesktop trash wants it. */
export function trashDate(date: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())}` +
    `T${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`
  );
}

/** An absolute path, URL-escaped segment by segment (RFC 2396), for `Path=` of a .trashinfo. */
export function trashInfoPath(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}

/** `name`, then `stem.2.ext`, `stem.3.ext`, … */
function trashCandidate(name: string, n: number): string {
  if (n === 1) return name;
  const ext = extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  return `${stem}.${n}${ext}`;
}

/** FileStore on the local file system (a shared volume when several replicas serve). */
export class NodeFileStore extends FileStore {
  private readonly now: () => Date;
  private readonly renameImpl: (from: string, to: string) => Promise<void>;
  private readonly ioFor: FileIoFor;

  constructor(private readonly options: NodeFileStoreOptions) {
    super();
    this.now = options.now ?? (() => new Date());
    this.renameImpl = options.rename ?? rename;
    this.ioFor = options.fileIo ?? POOL_EVERYWHERE;
  }

  resolve(request: PathRequest): Promise<GuardedPath> {
    return guardPath(request, this.ioFor);
  }

  stat(target: GuardedPath): Promise<FileInfo | null> {
    const io = this.ioFor(target.root);
    return mapped(async () => {
      let own;
      try {
        own = await atEntry(target.entry, target.realRoot, (entry) => io.lstat(entry), io);
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
      if (!own.isSymbolicLink()) return fileInfo(own);
      // What it leads to, as the guard resolved it; a symlink swapped in there since is no file
      // (`fileInfo(own)` of a symlink: kind 'other', size 0).
      let led;
      try {
        led = await atEntry(target.real, target.realRoot, (real) => io.lstat(real), io);
      } catch (err) {
        if (isMissing(err)) return fileInfo(own);
        throw err;
      }
      return fileInfo(own, led.isSymbolicLink() ? own : led);
    });
  }

  readDir(folder: GuardedPath): Promise<DirEntry[]> {
    return mapped(() =>
      inFolder(folder.real, folder.realRoot, async (at) => {
        const dirents = await readdir(at('.'), { withFileTypes: true });
        const entries = await Promise.all(
          dirents.map(async (d): Promise<DirEntry | null> => {
            try {
              if (d.isDirectory()) return { name: d.name, kind: 'folder', size: 0, symlink: false };
              if (d.isFile())
                return { name: d.name, kind: 'file', size: (await lstat(at(d.name))).size, symlink: false };
              if (!d.isSymbolicLink()) return null;
              // A symlink is shown only when it leads somewhere inside the same root.
              const target = await realpath(at(d.name));
              if (!isInside(folder.realRoot, target, true)) return null;
              const st = await stat(target);
              if (st.isDirectory()) return { name: d.name, kind: 'folder', size: 0, symlink: true };
              if (st.isFile()) return { name: d.name, kind: 'file', size: st.size, symlink: true };
              return null;
            } catch {
              return null; // gone meanwhile, dangling or unreadable
            }
          }),
        );
        return entries.filter((e): e is DirEntry => e !== null);
      }),
    );
  }

  /**
   * One visit of the folder for an entry that is no symlink (the common case: a file read by
   * path): its `lstat` (what `stat` answers for it), then, for a file within `readUpTo`, its read
   * through the same opened folder, where looking and reading apart open and check it twice. The file is opened
   * without following a symlink and without waiting (a FIFO swapped in would otherwise block), and
   * read only if it is the very entry looked at; anything else takes the two steps.
   */
  override async statAndRead(
    target: GuardedPath,
    readUpTo: number,
    maxBytes: number,
  ): Promise<{ info: FileInfo | null; data?: Buffer | 'too-large' }> {
    if (target.entry !== target.real || target.entry === target.realRoot)
      return super.statAndRead(target, readUpTo, maxBytes);
    const io = this.ioFor(target.root);
    const quick = await readByCanonicalPath(target.entry, readUpTo, maxBytes, io);
    if (quick !== null) return quick;
    const visit = await mapped(async () => {
      try {
        return await atEntry(
          target.entry,
          target.realRoot,
          async (entry) => {
            const own = await io.lstat(entry);
            // Swapped for a symlink since the guard looked: the two steps, as `stat` follows it.
            if (own.isSymbolicLink()) return null;
            const info = fileInfo(own);
            if (info.kind !== 'file' || own.size > readUpTo) return { info };
            const handle = await readerFor(io, own.size).open(entry, READ_NO_FOLLOW | (constants.O_NONBLOCK ?? 0));
            try {
              const opened = await handle.stat();
              if (!opened.isFile() || opened.ino !== own.ino || opened.dev !== own.dev) return null;
              return { info, data: await readOpened(handle, opened.size, maxBytes) };
            } finally {
              await handle.close();
            }
          },
          io,
        );
      } catch (err) {
        if (isMissing(err)) return { info: null };
        throw err;
      }
    });
    return visit ?? super.statAndRead(target, readUpTo, maxBytes);
  }

  readHead(file: GuardedPath, bytes: number): Promise<Buffer> {
    return mapped(async () => {
      const handle = await openForReading(file);
      try {
        const buffer = Buffer.alloc(bytes);
        const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
        return buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    });
  }

  readFile(file: GuardedPath, maxBytes: number): Promise<Buffer | 'too-large'> {
    return mapped(async () => {
      const handle = await openForReading(file);
      try {
        return await readOpened(handle, (await handle.stat()).size, maxBytes);
      } finally {
        await handle.close();
      }
    });
  }

  async writeAtomic(file: GuardedPath, content: string | Buffer): Promise<void> {
    await this.replaceAtomically(file, async (handle) => {
      await handle.writeFile(content);
      return 0;
    });
  }

  writeAtomicFrom(
    file: GuardedPath,
    chunks: AsyncIterable<Uint8Array>,
    maxBytes: number,
  ): Promise<number | 'too-large'> {
    return this.replaceAtomically(file, async (handle) => {
      let total = 0;
      for await (const chunk of chunks) {
        total += chunk.byteLength;
        if (total > maxBytes) return 'too-large';
        await handle.write(chunk);
      }
      return total;
    });
  }

  openRead(file: GuardedPath): Promise<{ size: number; chunks: AsyncIterable<Buffer> }> {
    return mapped(async () => {
      const handle = await openForReading(file);
      try {
        const info = await handle.stat();
        if (!info.isFile()) throw DomainError.invalid('Not a regular file');
        // The stream owns the handle from here and closes it when it ends or is destroyed.
        return { size: info.size, chunks: handle.createReadStream({ autoClose: true }) };
      } catch (err) {
        await handle.close();
        throw err;
      }
    });
  }

  /**
   * A temporary file in the target's folder is filled by `fill`, flushed and renamed over the
   * target (an existing file keeps its mode). When `fill` answers 'too-large' (or throws), the
   * temporary file is removed and the target stays as it was.
   */
  private replaceAtomically<T>(
    file: GuardedPath,
    fill: (handle: FileHandle) => Promise<T | 'too-large'>,
  ): Promise<T | 'too-large'> {
    return mapped(() =>
      inFolder(dirname(file.real), file.realRoot, async (at) => {
        const target = at(basename(file.real));
        let mode: number | undefined;
        try {
          const current = await lstat(target);
          if (current.isFile()) mode = current.mode & 0o7777;
        } catch (err) {
          if (!isMissing(err)) throw err;
        }
        // The name's start only, so a 255-byte name still gets a temporary name within the limit.
        const temp = at(`.${basename(file.real).slice(0, 48)}.${randomBytes(6).toString('hex')}${ATOMIC_TEMP_SUFFIX}`);
        let created = false;
        let result: T | 'too-large';
        try {
          const handle = await open(temp, CREATE_NO_FOLLOW, mode ?? 0o666);
          created = true;
          try {
            result = await fill(handle);
            if (result !== 'too-large') {
              if (mode !== undefined) await handle.chmod(mode);
              await handle.sync();
            }
          } finally {
            await handle.close();
          }
          if (result === 'too-large') return result;
          // Replaces the name in the opened folder; a symlink put there meanwhile is replaced, not followed.
          await rename(temp, target);
          created = false;
        } finally {
          if (created) await unlink(temp).catch(() => undefined);
        }
        await syncFolder(at('.'));
        return result;
      }),
    );
  }

  makeFolder(folder: GuardedPath): Promise<void> {
    return mapped(async () => {
      await atEntry(folder.real, folder.realRoot, async (entry) => {
        try {
          await mkdir(entry);
        } catch (err) {
          if (errorCode(err) !== 'EEXIST') throw err;
          if (!(await lstat(entry)).isDirectory()) {
            throw new DomainError('conflict', 'A file already exists at that path');
          }
        }
      });
    });
  }

  move(from: GuardedPath, to: GuardedPath): Promise<void> {
    return mapped(() =>
      atEntry(from.entry, from.realRoot, (source) =>
        atEntry(to.entry, to.realRoot, (destination) => this.moveEntry(source, destination)),
      ),
    );
  }

  trash(target: GuardedPath): Promise<void> {
    return mapped(async () => {
      const filesDir = join(this.options.trashDir, 'files');
      const infoDir = join(this.options.trashDir, 'info');
      await mkdir(filesDir, { recursive: true, mode: 0o700 });
      await mkdir(infoDir, { recursive: true, mode: 0o700 });
      const name = basename(target.entry);
      const info = `[Trash Info]\nPath=${trashInfoPath(target.path)}\nDeletionDate=${trashDate(this.now())}\n`;
      for (let n = 1; ; n++) {
        const candidate = n <= 10_000 ? trashCandidate(name, n) : `${name}.${randomBytes(6).toString('hex')}`;
        if (await exists(join(filesDir, candidate))) continue;
        const infoPath = join(infoDir, `${candidate}.trashinfo`);
        // Claiming the info file with O_EXCL makes the name ours, even across replicas.
        let handle;
        try {
          handle = await open(infoPath, 'wx', 0o600);
        } catch (err) {
          if (errorCode(err) === 'EEXIST') continue;
          throw err;
        }
        try {
          await handle.writeFile(info);
          await handle.sync();
        } finally {
          await handle.close();
        }
        const destination = join(filesDir, candidate);
        if (await exists(destination)) {
          await unlink(infoPath).catch(() => undefined);
          continue;
        }
        try {
          await atEntry(target.entry, target.realRoot, (source) => this.moveEntry(source, destination));
        } catch (err) {
          await unlink(infoPath).catch(() => undefined);
          throw err;
        }
        return;
      }
    });
  }

  private moveEntry(from: string, to: string): Promise<void> {
    return moveEntry(from, to, this.renameImpl);
  }
}

/** rename(2), or copy then remove when source and destination are on different devices. */
export async function moveEntry(
  from: string,
  to: string,
  renameImpl: (from: string, to: string) => Promise<void> = rename,
): Promise<void> {
  try {
    await renameImpl(from, to);
    return;
  } catch (err) {
    if (errorCode(err) !== 'EXDEV') throw err;
  }
  if (await exists(to)) throw Object.assign(new Error('Destination exists'), { code: 'EEXIST' });
  try {
    await cp(from, to, {
      recursive: true,
      errorOnExist: true,
      force: false,
      preserveTimestamps: true,
      verbatimSymlinks: true,
    });
  } catch (err) {
    // Only a partial copy of ours can be there: the destination was free just before.
    await rm(to, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
  await rm(from, { recursive: true, force: true });
}

/** Opens a file the guard accepted: its folder checked after opening, its own name not followed. */
/**
 * An opened file's content (`size` as its stat said), or 'too-large' past `maxBytes`: one byte
 * more than the stat counted is asked for, so a file that grew past the limit since is refused.
 */
async function readOpened(handle: OpenedEntry, size: number, maxBytes: number): Promise<Buffer | 'too-large'> {
  if (size > maxBytes) return 'too-large';
  const buffer = Buffer.alloc(Math.min(size, maxBytes) + 1);
  let total = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, total, buffer.length - total, total);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total === buffer.length) {
      if (total > maxBytes) return 'too-large';
      break;
    }
    // Every byte its stat counted and no more came with them: the file as it was opened, without
    // one more read to find its end.
    if (total >= size) break;
  }
  return buffer.subarray(0, total);
}

/**
 * A regular file within `readUpTo` read by its canonical path: looked at (`lstat`), opened
 * without following a symlink or waiting on a FIFO, and kept only if the opened file is the entry
 * looked at and the kernel's link of its handle names exactly `path`, so a folder on the way
 * swapped for a symlink since the guard looked cannot lead the read elsewhere. Six calls, where
 * the visit of the opened folder takes eight, each of them naming the entry through /proc. Null
 * for anything else (not a regular file, too large, moved, swapped, a failure): the caller then
 * visits the folder, which answers those cases.
 */
async function readByCanonicalPath(
  path: string,
  readUpTo: number,
  maxBytes: number,
  io: FileIo,
): Promise<{ info: FileInfo; data: Buffer | 'too-large' } | null> {
  if (!OPENED_FILES_NAMED) return null;
  let handle: OpenedEntry | undefined;
  try {
    const own = await io.lstat(path);
    if (!own.isFile() || own.size > readUpTo) return null;
    handle = await readerFor(io, own.size).open(path, READ_NO_FOLLOW | (constants.O_NONBLOCK ?? 0));
    const opened = await handle.stat();
    if (!opened.isFile() || opened.ino !== own.ino || opened.dev !== own.dev || opened.size !== own.size) return null;
    if ((await whereFileOpened(handle.fd, io)) !== path) return null;
    return { info: fileInfo(own), data: await readOpened(handle, opened.size, maxBytes) };
  } catch {
    return null;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

function openForReading(file: GuardedPath) {
  return inFolder(dirname(file.real), file.realRoot, (at) => open(at(basename(file.real)), READ_NO_FOLLOW));
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

/** Flushes a folder's entries (the rename) to disk; not every platform allows it. */
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort
  }
}
