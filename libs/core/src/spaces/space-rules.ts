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

export const SPACE_NAME_MAX = 200;

export function normalizeSpaceName(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const name = raw.trim();
  return name.length === 0 || name.length > SPACE_NAME_MAX ? null : name;
}
