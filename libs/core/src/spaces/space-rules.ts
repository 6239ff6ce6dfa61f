import { isAbsolute, relative, resolve, sep } from 'node:path';

/** `child` is `parent` or lies inside it (lexically; pass canonical paths). */
export function isSameOrInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Deleting a space removes its folder recursively; never let that folder be the filesystem
 * root, the data folder itself or one of its parents.
 */
export function isUnsafeToRemove(folder: string, dataDir: string): boolean {
  const target = resolve(folder);
  return target === resolve('/') || isSameOrInside(resolve(dataDir), target);
}

/** System folders that are never a space folder, nor is anything inside them. */
const SYSTEM_TREES = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/run',
  '/sbin',
  '/sys',
  '/usr',
  '/var/lib',
  '/var/log',
  '/var/run',
  '/var/cache',
  '/var/spool',
];
/** Folders that hold other people's or the system's folders: refused themselves, their sub folders are fine. */
const SYSTEM_FOLDERS = ['/', '/home', '/root', '/tmp', '/var', '/var/tmp', '/mnt', '/media', '/opt', '/srv'];

export type SpaceFolderProblem = 'data-folder' | 'system-folder';

/**
 * Why `folder` cannot be a space's working folder (customPath, working-dir), or null. Pass
 * canonical paths. A folder inside the data folder (its database, spaces, trash) or
 * containing it would let deleting a space, or the assistant, destroy the service's records;
 * a system folder would hand the assistant the system.
 */
export function spaceFolderProblem(folder: string, dataDir: string): SpaceFolderProblem | null {
  const target = resolve(folder);
  const data = resolve(dataDir);
  if (isSameOrInside(target, data) || isSameOrInside(data, target)) return 'data-folder';
  if (SYSTEM_FOLDERS.includes(target)) return 'system-folder';
  if (SYSTEM_TREES.some((tree) => isSameOrInside(target, tree))) return 'system-folder';
  return null;
}

/** The message naming the field for a refused folder. */
export function spaceFolderMessage(field: string, problem: SpaceFolderProblem): string {
  return problem === 'data-folder'
    ? `${field}: the folder must lie outside the service's data folder (neither inside it nor containing it).`
    : `${field}: a system folder (such as /, /etc, /proc, /usr or /home itself) cannot be a space folder.`;
}

/**
 * Whether deleting a space removes its folder: only a folder the server created for it
 * (its default folder, or a customPath it had to create), never the data folder or a parent,
 * never a system folder. Pass canonical paths.
 */
export function mayRemoveSpaceFolder(
  folder: string,
  space: { ownsFolder: boolean; defaultFolder: string },
  dataDir: string,
): boolean {
  if (isUnsafeToRemove(folder, dataDir)) return false;
  if (resolve(folder) === resolve(space.defaultFolder)) return true;
  return space.ownsFolder && spaceFolderProblem(folder, dataDir) === null;
}

export const SPACE_NAME_MAX = 200;

export function normalizeSpaceName(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const name = raw.trim();
  return name.length === 0 || name.length > SPACE_NAME_MAX ? null : name;
}
