import { constants } from 'node:fs';
import { basename, dirname } from 'node:path';
import { isInside } from '#core/artifacts/path-rules.js';
import { DomainError } from '#core/errors/domain-error.js';
import { type FileIo, POOL_IO } from './file-io.js';
import { ACCESS_DENIED } from './path-guard.js';

/**
 * Check-then-use without the gap. The path guard vouches for a path at one moment; a
 * folder on the way can be swapped for a symlink right after. So every operation opens the
 * folder it acts in once, checks where that open folder really is (inside the root), and
 * names its entries through the open handle (`/proc/self/fd/<n>/<name>`, which the kernel
 * resolves to the folder that was opened, whatever its path leads to now). The last
 * component is opened with O_NOFOLLOW. A racing swap can then only make the request fail.
 * `io`: whose calls open and check the folder (POOL_IO unless the caller knows the folder is local).
 */

/** Where an open folder's entries can be named on this platform (Linux: through /proc). */
const FD_FOLDER = process.platform === 'linux' ? '/proc/self/fd' : null;

/** Flags for reading a file whose last component must not be a symlink. */
export const READ_NO_FOLLOW = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);
/** Flags for creating a fresh file (never an existing one, never through a symlink). */
export const CREATE_NO_FOLLOW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/**
 * Where an opened folder really is. On Linux the handle's link in /proc already names it without
 * symlinks (the kernel's own path of the folder), one `readlink` where `realpath` would walk every
 * component of that path again; a folder deleted meanwhile (the link then ends in " (deleted)")
 * is resolved as elsewhere, which fails as a missing folder does.
 */
async function whereOpened(fdPath: string, io: FileIo): Promise<string> {
  return (FD_FOLDER ? await kernelLink(fdPath, io) : null) ?? io.realpath(fdPath);
}

/** The kernel's link of an opened handle in /proc, or null for one deleted meanwhile (or not a path). */
async function kernelLink(fdPath: string, io: FileIo): Promise<string | null> {
  const link = await io.readlink(fdPath);
  return link.startsWith('/') && !link.endsWith(' (deleted)') ? link : null;
}

/** Whether an opened file's place can be read from its handle (whereFileOpened) on this platform. */
export const OPENED_FILES_NAMED = FD_FOLDER !== null;

/**
 * Where an opened file really is (the kernel's link of its handle), or null where that cannot be
 * read that way (no /proc, the file deleted meanwhile).
 */
export function whereFileOpened(fd: number, io: FileIo): Promise<string | null> {
  return FD_FOLDER ? kernelLink(`${FD_FOLDER}/${fd}`, io) : Promise.resolve(null);
}

const deny = (): never => {
  throw DomainError.forbidden(ACCESS_DENIED);
};

/** An entry named through its opened folder. */
export type EntryAt = (name: string) => string;

/**
 * Opens `folder`, checks that the opened folder lies inside `realRoot` (the root itself
 * included), and runs `work` with a function naming entries of exactly that folder.
 */
export async function inFolder<T>(
  folder: string,
  realRoot: string,
  work: (at: EntryAt) => Promise<T>,
  io: FileIo = POOL_IO,
): Promise<T> {
  const handle = await io.open(folder, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    const fdPath = FD_FOLDER ? `${FD_FOLDER}/${handle.fd}` : folder;
    if (!isInside(realRoot, await whereOpened(fdPath, io), true)) deny();
    return await work((name) => `${fdPath}/${name}`);
  } finally {
    await handle.close();
  }
}

/** `work` on the entry `path` (its folder opened and checked, its own name kept). */
export function atEntry<T>(
  path: string,
  realRoot: string,
  work: (entry: string) => Promise<T>,
  io: FileIo = POOL_IO,
): Promise<T> {
  if (path === realRoot) return work(path);
  return inFolder(dirname(path), realRoot, (at) => work(at(basename(path))), io);
}
