import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { findRoot, hasNulByte, normalizeRequest, relativeInside, toPosix } from '#core/artifacts/path-rules.js';
import { DomainError } from '#core/errors/domain-error.js';
import { nameLengthProblem } from '#core/errors/text-rules.js';
import type { GuardedPath, PathRequest } from '#core/ports/file-store.port.js';

/** The text of every refusal, whether the path exists or not (nothing is revealed about outside paths). */
export const ACCESS_DENIED = 'Access denied';

/** Symlinks followed in one resolution before giving up, like the kernel's ELOOP limit. */
const MAX_LINK_HOPS = 40;

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** Canonical paths being resolved within one guard check, by path (see canonicalPath). */
type Walks = Map<string, Promise<string>>;

/**
 * The canonical path of `path` with every symlink resolved. For a path that does not exist
 * (yet), the nearest existing ancestor is resolved and the rest appended; a dangling symlink
 * on the way is followed to where it points, so writing through it cannot land elsewhere.
 * `walks`: the resolutions of one guard check, shared, so that its walks (the roots, the entry,
 * its folder) resolve a path they have in common once; a path that does not exist yet costs a
 * failed `realpath` and `lstat` at each missing level. Only the walk up through the ancestors
 * shares (a shorter path each time, so no walk ever waits for itself); following a symlink
 * does not.
 */
export function canonicalPath(path: string, hops = 0, walks?: Walks): Promise<string> {
  if (walks === undefined || hops > 0) return resolveCanonical(path, hops, walks);
  let walk = walks.get(path);
  if (walk === undefined) {
    walk = resolveCanonical(path, hops, walks);
    walks.set(path, walk);
  }
  return walk;
}

async function resolveCanonical(path: string, hops: number, walks: Walks | undefined): Promise<string> {
  try {
    return await realpath(path);
  } catch (err) {
    const code = errorCode(err);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  let link: string | null = null;
  try {
    const st = await lstat(path);
    if (st.isSymbolicLink()) link = await readlink(path);
  } catch {
    // Not there (or not reachable): resolve the ancestors and append the name.
  }
  const realParent = await canonicalPath(parent, hops, walks);
  if (link === null) return join(realParent, basename(path));
  if (hops >= MAX_LINK_HOPS) throw Object.assign(new Error('Too many symbolic links'), { code: 'ELOOP' });
  return canonicalPath(resolve(realParent, link), hops + 1);
}

/** Picks the deepest root containing `target` (nested spaces: the innermost one). */
function deepestRoot(realRoots: readonly string[], target: string, allowRoot: boolean): number {
  let best = -1;
  realRoots.forEach((root, i) => {
    if (relativeInside(root, target) === null) return;
    if (!allowRoot && relativeInside(root, target) === '') return;
    if (best === -1 || root.length > realRoots[best]!.length) best = i;
  });
  return best;
}

/**
 * The path guard. The request is checked lexically first (nothing outside the roots is
 * even looked at on disk), then with symlinks resolved: both the entry itself (its folder
 * resolved, its own name kept) and what it points to must lie inside an allowed root.
 */
export async function guardPath(request: PathRequest): Promise<GuardedPath> {
  const deny = (): never => {
    throw DomainError.forbidden(ACCESS_DENIED);
  };
  const allowRoot = request.allowRoot ?? false;
  if (request.roots.length === 0 || request.roots.some((r) => hasNulByte(r))) deny();
  const lexical = normalizeRequest(request.path, request.base) ?? deny();
  // Refused the same way whether or not the path exists (the filesystem would say ENAMETOOLONG).
  for (const segment of lexical.split(sep)) {
    const tooLong = nameLengthProblem(segment);
    if (tooLong) throw DomainError.invalid(tooLong);
  }
  const roots = request.roots.map((r) => resolve(r));

  let realRoots: string[];
  let real: string;
  let realParent: string;
  try {
    const walks: Walks = new Map();
    realRoots = await Promise.all(roots.map((r) => canonicalPath(r, 0, walks)));
    if (findRoot([...roots, ...realRoots], lexical, true) === null) deny();
    // The entry and its folder side by side, sharing what they have in common with each other
    // and with the roots (the entry's walk up passes through its folder).
    [real, realParent] = await Promise.all([
      canonicalPath(lexical, 0, walks),
      canonicalPath(dirname(lexical), 0, walks),
    ]);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    // ELOOP, EACCES and the like: the guard cannot vouch for the path.
    return deny();
  }

  const rootOfReal = deepestRoot(realRoots, real, true);
  if (rootOfReal === -1) deny();
  let entry: string;
  let index: number;
  if (realRoots[rootOfReal] === real) {
    // The root itself (possibly named through a symlink to it).
    if (!allowRoot) deny();
    entry = real;
    index = rootOfReal;
  } else {
    entry = dirname(lexical) === lexical ? real : join(realParent, basename(lexical));
    index = deepestRoot(realRoots, entry, false);
    if (index === -1) deny();
  }
  const rel = relativeInside(realRoots[index]!, entry) ?? deny();
  return {
    root: roots[index]!,
    realRoot: realRoots[index]!,
    path: rel === '' ? roots[index]! : join(roots[index]!, rel),
    relativePath: toPosix(rel),
    entry,
    real,
  };
}
