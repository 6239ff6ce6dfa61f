import { basename, dirname, join, resolve, sep } from 'node:path';
import {
  hasNulByte,
  isNormalizedAbsolute,
  normalizeRequest,
  relativeInsideNormalized,
  toPosix,
} from '#core/artifacts/path-rules.js';
import { DomainError } from '#core/errors/domain-error.js';
import { nameLengthProblem } from '#core/errors/text-rules.js';
import type { GuardedPath, PathRequest } from '#core/ports/file-store.port.js';
import { type FileIo, type FileIoFor, POOL_EVERYWHERE, POOL_IO } from './file-io.js';

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
 * does not. `io`: whose calls walk (POOL_IO unless the path is known to be on a local disk).
 */
export function canonicalPath(path: string, hops = 0, walks?: Walks, io: FileIo = POOL_IO): Promise<string> {
  if (walks === undefined || hops > 0) return resolveCanonical(path, hops, walks, io);
  let walk = walks.get(path);
  if (walk === undefined) {
    walk = resolveCanonical(path, hops, walks, io);
    walks.set(path, walk);
  }
  return walk;
}

async function resolveCanonical(path: string, hops: number, walks: Walks | undefined, io: FileIo): Promise<string> {
  try {
    return await io.realpath(path);
  } catch (err) {
    const code = errorCode(err);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  let link: string | null = null;
  try {
    const st = await io.lstat(path);
    if (st.isSymbolicLink()) link = await io.readlink(path);
  } catch {
    // Not there (or not reachable): resolve the ancestors and append the name.
  }
  const realParent = await canonicalPath(parent, hops, walks, io);
  if (link === null) return join(realParent, basename(path));
  if (hops >= MAX_LINK_HOPS) throw Object.assign(new Error('Too many symbolic links'), { code: 'ELOOP' });
  // Where a symlink leads may be another file system: the pool's calls from there on.
  return canonicalPath(resolve(realParent, link), hops + 1, undefined, POOL_IO);
}

/** Roots in one folder from this many on are resolved through one listing of it (canonicalRoots). */
const SHARED_FOLDER_ROOTS = 3;
/**
 * Entries a listing may hold per root it resolves: past that, listing the folder costs more than
 * resolving its roots one by one (a customPath space in a big folder).
 */
const ENTRIES_PER_ROOT = 16;
/** The number of entries each listed folder had when last listed: a stale count only picks the slower way. */
const listedSizes = new Map<string, number>();

/**
 * The canonical paths of the roots, as `canonicalPath` gives them, recorded in `walks` for the
 * entry's walks to share. Each root costs one `realpath`, so a guard over every space's folder
 * cost one call per space on each read by path; roots that share a folder (the spaces under the
 * data folder) are instead resolved through one listing of that folder with its entries' types:
 * an entry that is not a symlink (or is missing) resolves to the folder's canonical path and its
 * own name, exactly what `canonicalPath` answers for it. A symlink, or a folder that cannot be
 * listed, sends its roots through `canonicalPath` one by one, as before; so does a folder whose
 * last listing was much larger than its roots. Each root and listed folder is walked with its own
 * FileIo (`ioFor`).
 */
async function canonicalRoots(roots: readonly string[], walks: Walks, ioFor: FileIoFor): Promise<string[]> {
  const byFolder = new Map<string, string[]>();
  for (const root of new Set(roots)) {
    const folder = dirname(root);
    if (folder === root || walks.has(root)) continue;
    const members = byFolder.get(folder);
    if (members === undefined) byFolder.set(folder, [root]);
    else members.push(root);
  }
  for (const [folder, members] of byFolder) {
    if (members.length < SHARED_FOLDER_ROOTS) continue;
    if ((listedSizes.get(folder) ?? 0) > members.length * ENTRIES_PER_ROOT) continue;
    const listing = resolveThroughListing(folder, members, walks, ioFor);
    members.forEach((root, k) =>
      walks.set(
        root,
        listing.then((paths) => paths[k]!),
      ),
    );
  }
  return Promise.all(roots.map((root) => canonicalPath(root, 0, walks, ioFor(root))));
}

/** The canonical paths of `roots`, all entries of `folder` (see canonicalRoots). */
async function resolveThroughListing(
  folder: string,
  roots: readonly string[],
  walks: Walks,
  ioFor: FileIoFor,
): Promise<string[]> {
  let listing: FolderListing;
  try {
    listing = await listingOf(folder, walks, ioFor(folder));
  } catch {
    return Promise.all(roots.map((root) => resolveCanonical(root, 0, walks, ioFor(root))));
  }
  return Promise.all(
    roots.map((root) => {
      const name = basename(root);
      return listing.symlinks.has(name)
        ? resolveCanonical(root, 0, walks, ioFor(root))
        : Promise.resolve(childPath(listing.realFolder, name));
    }),
  );
}

/** `join(folder, name)` for a canonical folder and an entry's name, without normalizing the result again. */
function childPath(folder: string, name: string): string {
  if (sep !== '/') return join(folder, name);
  return folder === '/' ? `/${name}` : `${folder}/${name}`;
}

/** What resolveThroughListing needs of a folder: its entries that are symlinks, and its canonical path. */
interface FolderListing {
  /** The folder's device, inode, modification and change times when it was listed. */
  stamp: string;
  symlinks: ReadonlySet<string>;
  realFolder: string;
}

/** Listings kept between checks, by folder; one is used while the folder's stamp is unchanged. */
const keptListings = new Map<string, FolderListing>();
/**
 * A listing is kept only of a folder unchanged for this long: the file system's clock is coarse,
 * and a change in the same tick as the listing would leave the stamp as it was.
 */
const SETTLED_MS = 1000;

/**
 * A folder's listing: one `lstat` of the folder where a kept listing has its stamp, else the
 * folder listed again. A kept listing that has gone stale (the folder or a folder above it swapped
 * meanwhile, in a tick the stamp missed) can only refuse: an entry it takes for no symlink has
 * `realFolder/name` as its canonical path, and where that name is a symlink now, no canonical path
 * lies inside it, so nothing is found inside that root (a fresh walk of the entry decides the rest).
 */
async function listingOf(folder: string, walks: Walks, io: FileIo): Promise<FolderListing> {
  const folderStat = await io.lstat(folder);
  const stamp = `${folderStat.dev}:${folderStat.ino}:${folderStat.mtimeMs}:${folderStat.ctimeMs}`;
  const kept = keptListings.get(folder);
  if (kept?.stamp === stamp) return kept;
  const entries = await io.readdir(folder);
  listedSizes.set(folder, entries.length);
  const listing: FolderListing = {
    stamp,
    symlinks: new Set(entries.filter((e) => e.isSymbolicLink()).map((e) => e.name)),
    realFolder: await canonicalPath(folder, 0, walks, io),
  };
  if (Date.now() - Math.max(folderStat.mtimeMs, folderStat.ctimeMs) > SETTLED_MS) keptListings.set(folder, listing);
  else keptListings.delete(folder);
  return listing;
}

/** `resolve(path)`, skipping the work for a path already absolute and normalized (a space's folder). */
function resolved(path: string): string {
  return sep === '/' && isNormalizedAbsolute(path) ? path : resolve(path);
}

/** Picks the deepest root containing `target` (nested spaces: the innermost one). */
function deepestRoot(realRoots: readonly string[], target: string, allowRoot: boolean): number {
  let best = -1;
  realRoots.forEach((root, i) => {
    const rel = relativeInsideNormalized(root, target);
    if (rel === null || (!allowRoot && rel === '')) return;
    if (best === -1 || root.length > realRoots[best]!.length) best = i;
  });
  return best;
}

/**
 * The path guard. The request is checked lexically first (nothing outside the roots is
 * even looked at on disk), then with symlinks resolved: both the entry itself (its folder
 * resolved, its own name kept) and what it points to must lie inside an allowed root.
 * `ioFor`: the FileIo of each root's folder; a path is walked with that of the root it lies in as
 * written (the pool's for one named through a root's canonical form).
 */
export async function guardPath(request: PathRequest, ioFor: FileIoFor = POOL_EVERYWHERE): Promise<GuardedPath> {
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
  const roots = request.roots.map(resolved);

  let realRoots: string[];
  let real: string;
  let realParent: string;
  try {
    const walks: Walks = new Map();
    const rootAsWritten = deepestRoot(roots, lexical, true);
    if (rootAsWritten !== -1) {
      const io = ioFor(roots[rootAsWritten]!);
      // Inside a root as written: the entry is resolved first. A path whose canonical form is
      // itself has no symlink on the way (nor, then, does its folder, or a root it lies in), so
      // its folder needs no walk of its own, nor do the roots it lies in: one call in all for a
      // space's own paths, the common case.
      real = await canonicalPath(lexical, 0, walks, io);
      if (real === lexical) {
        realParent = dirname(lexical);
        for (const root of roots)
          if (relativeInsideNormalized(root, lexical) !== null) walks.set(root, Promise.resolve(root));
        realRoots = await canonicalRoots(roots, walks, ioFor);
      } else {
        [realRoots, realParent] = await Promise.all([
          canonicalRoots(roots, walks, ioFor),
          canonicalPath(dirname(lexical), 0, walks, io),
        ]);
      }
    } else {
      // Perhaps inside a root's canonical form (a root reached through a symlink, named by its target).
      realRoots = await canonicalRoots(roots, walks, ioFor);
      if (!realRoots.some((r) => relativeInsideNormalized(r, lexical) !== null)) deny();
      // The entry and its folder side by side, sharing what they have in common with each other
      // and with the roots (the entry's walk up passes through its folder).
      [real, realParent] = await Promise.all([
        canonicalPath(lexical, 0, walks),
        canonicalPath(dirname(lexical), 0, walks),
      ]);
    }
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
  const rel = relativeInsideNormalized(realRoots[index]!, entry) ?? deny();
  return {
    root: roots[index]!,
    realRoot: realRoots[index]!,
    path: rel === '' ? roots[index]! : join(roots[index]!, rel),
    relativePath: toPosix(rel),
    entry,
    real,
  };
}
