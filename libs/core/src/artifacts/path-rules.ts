import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { GuardedPath } from '../ports/file-store.port.js';
import { SERVICE_FOLDER } from '../kernel/space.js';

/**
 * The pure half of the path guard: lexical rules that need no disk access. The infra
 * adapter applies them twice, to the request as written and again once symlinks are
 * resolved, so a path is accepted only when both views stay inside an allowed root.
 */

/** Suffix of the temporary files an atomic write leaves for an instant beside its target. */
export const ATOMIC_TEMP_SUFFIX = '.svc-tmp';

export function hasNulByte(path: string): boolean {
  return path.includes('\0');
}

/**
 * The absolute, normalized form of a requested path (`..` and `.` resolved lexically).
 * A relative path is taken relative to `base` when there is one (an operation that names
 * its space); without a base it is refused (null), because relative to the server's own
 * working folder would mean nothing to the caller.
 */
export function normalizeRequest(requested: string, base?: string): string | null {
  if (hasNulByte(requested)) return null;
  if (isAbsolute(requested)) return resolve(requested);
  if (base === undefined || !isAbsolute(base)) return null;
  return resolve(base, requested);
}

const SLASH = 0x2f;
/** `//`, or a `.` or `..` segment. */
const NOT_NORMALIZED = /\/\/|\/\.\.?(?:\/|$)/;

/** Whether `path` is absolute and normalized where the separator is `/` (what `resolve` leaves as it is). */
export function isNormalizedAbsolute(path: string): boolean {
  return (
    path.charCodeAt(0) === SLASH &&
    (path.length === 1 || path.charCodeAt(path.length - 1) !== SLASH) &&
    !NOT_NORMALIZED.test(path)
  );
}

/**
 * Where `target` lies relative to `root`: `''` for the root itself, a relative path
 * (platform separators) inside it, or null outside. Both must be absolute and normalized.
 */
export function relativeInside(root: string, target: string): string | null {
  if (sep === '/' && isNormalizedAbsolute(root) && isNormalizedAbsolute(target))
    return relativeInsideNormalized(root, target);
  const rel = relative(root, target);
  if (rel === '') return '';
  if (isAbsolute(rel)) return null;
  if (rel === '..' || rel.startsWith(`..${sep}`)) return null;
  return rel;
}

/**
 * `relativeInside` for paths the caller knows to be absolute and normalized (resolved or canonical:
 * the path guard's own): where the separator is `/`, a prefix test answers what `relative` would,
 * without building a relative path (the guard asks this of every space's folder on each read).
 */
export function relativeInsideNormalized(root: string, target: string): string | null {
  if (sep !== '/') return relativeInside(root, target);
  if (target === root) return '';
  if (root === '/') return target.slice(1);
  return target.length > root.length && target.charCodeAt(root.length) === SLASH && target.startsWith(root)
    ? target.slice(root.length + 1)
    : null;
}

/** Whether `target` is inside `root` (the root itself only when `allowRoot`). */
export function isInside(root: string, target: string, allowRoot = false): boolean {
  const rel = relativeInside(root, target);
  return rel === null ? false : rel !== '' || allowRoot;
}

/** The first root containing `target` (root itself only when `allowRoot`), or null. */
export function findRoot(roots: readonly string[], target: string, allowRoot = false): string | null {
  for (const root of roots) if (isInside(root, target, allowRoot)) return root;
  return null;
}

/**
 * Whether `target` is the service's own folder at the top of `root` or anything inside it:
 * the file API never reads, writes, moves, renames or deletes there (the assistant's tools may).
 */
export function isInServiceFolder(root: string, target: string): boolean {
  const rel = relativeInside(root, target);
  return rel !== null && (rel === SERVICE_FOLDER || rel.startsWith(`${SERVICE_FOLDER}${sep}`));
}

/**
 * Why a search pattern (Glob's `pattern`, Grep's `glob`) is refused, or null. Searches only
 * walk the workspace, so a pattern cannot reach outside anyway; these are refused outright so
 * the model learns that at once: absolute patterns, `..` segments (with a slash or a backslash as
 * the separator), a home folder (`~`) and NUL bytes.
 */
export function searchPatternProblem(pattern: string): string | null {
  if (hasNulByte(pattern)) return 'must not contain NUL bytes';
  if (/^([/\\~]|[A-Za-z]:)/.test(pattern)) return 'must be relative to the workspace folder';
  if (pattern.split(/[/\\{},]/).some((segment) => segment === '..')) return 'must not contain .. segments';
  return null;
}

/**
 * A name that is one path segment: not empty, no separator, no NUL, not `.` or `..`.
 * Backslashes are refused too, so a name means the same thing to every client.
 */
export function isPlainName(name: string): boolean {
  if (name.length === 0 || name.length > 255) return false;
  if (name === '.' || name === '..') return false;
  return !/[/\\\0]/.test(name);
}

/** A relative path with forward slashes, the form clients see in `relativePath`. */
export function toPosix(rel: string): string {
  return sep === '/' ? rel : rel.split(sep).join('/');
}

/** Whether moving `source` under `destinationFolder` would put a folder inside itself. */
export function isSelfOrDescendant(source: string, destinationFolder: string): boolean {
  return isInside(source, destinationFolder, true);
}

/** The path a moved entry gets: `folder/<name of source>`. */
export function movedPath(source: string, destinationFolder: string): string {
  return join(destinationFolder, basename(source));
}

/**
 * The guarded path of an entry listed in `folder`. Only for names read from that folder
 * that are not symlinks (a symlink's target must go through the guard again).
 */
export function childOf(folder: GuardedPath, name: string): GuardedPath {
  const child = join(folder.real, name);
  return {
    root: folder.root,
    realRoot: folder.realRoot,
    path: join(folder.path, name),
    relativePath: folder.relativePath ? `${folder.relativePath}/${name}` : name,
    entry: child,
    real: child,
  };
}
