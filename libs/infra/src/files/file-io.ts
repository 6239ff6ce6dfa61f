import {
  closeSync,
  type Dirent,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { lstat, open, readdir, readlink, realpath, statfs } from 'node:fs/promises';
import type { FileIoMode } from '#core/config/app-config.js';

/** An opened file or folder, as the path guard and a read by path use it (a FileHandle is one). */
export interface OpenedEntry {
  readonly fd: number;
  stat(): Promise<Stats>;
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  close(): Promise<void>;
}

/**
 * The file-system calls of the path guard and of looking at and reading a file by path. Each call
 * through libuv's thread pool (`POOL_IO`) costs the process some 30-50 µs of CPU (queued, a pool
 * thread woken, the answer back through the event loop) for a system call that takes a few µs on a
 * local disk, and a read by path makes a dozen of them. `DIRECT_IO` makes the same calls on the
 * event loop: only for folders on a local file system (fileIoChooser), where they answer from the
 * kernel's caches and never wait on a network.
 */
export interface FileIo {
  realpath(path: string): Promise<string>;
  lstat(path: string): Promise<Stats>;
  readlink(path: string): Promise<string>;
  readdir(path: string): Promise<Dirent[]>;
  open(path: string, flags: number): Promise<OpenedEntry>;
}

export const POOL_IO: FileIo = {
  realpath: (path) => realpath(path),
  lstat: (path) => lstat(path),
  readlink: (path) => readlink(path),
  readdir: (path) => readdir(path, { withFileTypes: true }),
  open: (path, flags) => open(path, flags),
};

class DirectEntry implements OpenedEntry {
  constructor(readonly fd: number) {}
  async stat(): Promise<Stats> {
    return fstatSync(this.fd);
  }
  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    return { bytesRead: readSync(this.fd, buffer, offset, length, position) };
  }
  async close(): Promise<void> {
    closeSync(this.fd);
  }
}

export const DIRECT_IO: FileIo = {
  // The system's realpath(3), as fs/promises' realpath is (the default realpathSync walks in JavaScript).
  realpath: async (path) => realpathSync.native(path),
  lstat: async (path) => lstatSync(path),
  readlink: async (path) => readlinkSync(path),
  readdir: async (path) => readdirSync(path, { withFileTypes: true }),
  open: async (path, flags) => new DirectEntry(openSync(path, flags)),
};

/** Files up to this size are read on the event loop where DIRECT_IO serves their folder; larger ones through the pool. */
export const DIRECT_READ_MAX_BYTES = 256 * 1024;

/** Whose calls open and read a file of `size` bytes in a folder `io` serves: a larger one's read would hold up the event loop. */
export function readerFor(io: FileIo, size: number): FileIo {
  return size <= DIRECT_READ_MAX_BYTES ? io : POOL_IO;
}

/** The FileIo for paths under a folder (a space's folder, a root of the path guard). */
export type FileIoFor = (folder: string) => FileIo;

export const POOL_EVERYWHERE: FileIoFor = () => POOL_IO;

/**
 * `statfs` type numbers (Linux's magic.h) of file systems on a local disk or in memory. Anything
 * else (NFS, SMB, CephFS, FUSE, …) may wait on a network: its calls stay in the pool.
 */
const LOCAL_FILE_SYSTEMS = new Set([
  0xef53, // ext2, ext3, ext4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x2fc12fc1, // zfs
  0xf2f52010, // f2fs
  0x01021994, // tmpfs
  0x858458f6, // ramfs
  0x794c7630, // overlayfs (a container's own layer)
]);

/** Whether `folder` lies on a local file system; undefined where that cannot be told (not there yet). */
export async function onLocalFileSystem(folder: string): Promise<boolean | undefined> {
  if (process.platform !== 'linux') return false;
  try {
    return LOCAL_FILE_SYSTEMS.has((await statfs(folder)).type);
  } catch {
    return undefined;
  }
}

/**
 * The FileIo per folder for a mode (`SVC_FILE_IO`). `auto` answers POOL_IO for a folder until its file system is
 * known (asked once, in the pool, without waiting for it), then DIRECT_IO for a local one; a folder
 * whose file system could not be told is asked again on a later call.
 */
export function fileIoChooser(mode: FileIoMode, isLocal = onLocalFileSystem): FileIoFor {
  if (mode === 'direct') return () => DIRECT_IO;
  if (mode === 'pool') return POOL_EVERYWHERE;
  const known = new Map<string, FileIo>();
  return (folder) => {
    const io = known.get(folder);
    if (io !== undefined) return io;
    known.set(folder, POOL_IO);
    void isLocal(folder).then(
      (local) => {
        if (local === true) known.set(folder, DIRECT_IO);
        else if (local === undefined) known.delete(folder);
      },
      () => known.delete(folder),
    );
    return POOL_IO;
  };
}
