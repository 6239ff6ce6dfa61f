import { basename, dirname, sep } from 'node:path';
import type { ArtifactChange, ArtifactTreeNode } from '#contracts/artifacts.js';
import type { FileChangeType, TreeEntryType } from '../ports/file-watcher.port.js';
import { SERVICE_FOLDER } from '../kernel/space.js';
import { ATOMIC_TEMP_SUFFIX, relativeInside, toPosix } from './path-rules.js';

export type {
  ArtifactChange,
  ArtifactChangeBatchEvent,
  ArtifactTreeNode,
  ArtifactTreeUpdateEvent,
} from '#contracts/artifacts.js';

/** Folder names skipped at any depth: never watched, indexed or reported. */
export const IGNORED_FOLDER_NAMES: ReadonlySet<string> = new Set(['.git', 'node_modules']);

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const IGNORED_ANYWHERE = new RegExp(`(?:^|/)(?:${[...IGNORED_FOLDER_NAMES].map(escapeRegExp).join('|')})(?:/|$)`);
const SERVICE_AT_TOP = new RegExp(`^${escapeRegExp(SERVICE_FOLDER)}(?:/|$)`);

/**
 * Whether a path inside a space (relative, forward slashes, not empty) is left out of
 * change events and the search index: `.git` and `node_modules` at any depth, the service's
 * own `.svc` folder at the top, and the temporary files of atomic writes.
 */
export function isIgnoredRelative(relativePath: string): boolean {
  return (
    IGNORED_ANYWHERE.test(relativePath) ||
    SERVICE_AT_TOP.test(relativePath) ||
    relativePath.endsWith(ATOMIC_TEMP_SUFFIX)
  );
}

/**
 * The relative path (forward slashes) of absolute paths under `root`: '' for the root, null
 * outside it. Fast for the normalized paths that walks and watchers produce (called for
 * every entry of a tree).
 */
export function relativeUnder(root: string): (absolutePath: string) => string | null {
  const prefix = root.endsWith(sep) ? root : root + sep;
  return (absolutePath) => {
    if (
      absolutePath.startsWith(prefix) &&
      !absolutePath.includes(`${sep}..`) &&
      !absolutePath.includes(`${sep}.${sep}`)
    ) {
      const rel = absolutePath.slice(prefix.length);
      return sep === '/' ? rel : toPosix(rel);
    }
    const rel = relativeInside(root, absolutePath);
    return rel === null ? null : toPosix(rel);
  };
}

/**
 * What a folder listing leaves out (the same as the file operations' listings): the `.svc`
 * folder at the top and the temporary files of atomic writes. Tree updates list children
 * this way, so `.git` or `node_modules` stay in a client's tree, although nothing inside
 * them is watched.
 */
export function hiddenFromListingUnder(root: string): (absolutePath: string) => boolean {
  return (absolutePath) => {
    const rel = relativeInside(root, absolutePath);
    if (rel === null || rel === '') return false;
    return toPosix(rel) === SERVICE_FOLDER || absolutePath.endsWith(ATOMIC_TEMP_SUFFIX);
  };
}

/** The ignore test for absolute paths under `root` (the root itself and paths outside it are not ignored). */
export function ignoreUnder(root: string): (absolutePath: string) => boolean {
  const relative = relativeUnder(root);
  return (absolutePath) => {
    const rel = relative(absolutePath);
    return rel !== null && rel !== '' && isIgnoredRelative(rel);
  };
}

/** The client form of a change under `root`, or null when it is outside, the root itself, or ignored. */
export function toArtifactChange(root: string, type: FileChangeType, absolutePath: string): ArtifactChange | null {
  const rel = relativeInside(root, absolutePath);
  if (rel === null || rel === '') return null;
  const relativePath = toPosix(rel);
  if (isIgnoredRelative(relativePath)) return null;
  return { type, path: absolutePath, relativePath };
}

/** Whether a change adds or removes an entry (so its folder's list of children changed). */
export function changesChildren(type: FileChangeType): boolean {
  return type !== 'change';
}

/**
 * The folders whose direct children changed, in first-seen order: the parent of every
 * added or removed entry (the space root included).
 */
export function foldersWithChangedChildren(changes: readonly ArtifactChange[]): string[] {
  const folders = new Set<string>();
  for (const change of changes) if (changesChildren(change.type)) folders.add(dirname(change.path));
  return [...folders];
}

/** A tree node for an entry found under `root`; its id is its relative path, as in the file listings. */
export function treeNode(root: string, entry: { name: string; type: TreeEntryType; path: string }): ArtifactTreeNode {
  const rel = relativeInside(root, entry.path);
  const relativePath = rel === null ? entry.path : toPosix(rel);
  return {
    id: relativePath,
    name: entry.name || basename(entry.path),
    type: entry.type,
    path: entry.path,
    relativePath,
    childrenLoaded: entry.type !== 'folder',
  };
}

/** Folders first, then by name (case-insensitive, then exact). */
export function compareTreeNodes(
  a: { name: string; type: TreeEntryType },
  b: { name: string; type: TreeEntryType },
): number {
  if (a.type !== b.type) return a.type === 'folder' ? -1 : 1;
  const la = a.name.toLowerCase();
  const lb = b.name.toLowerCase();
  if (la !== lb) return la < lb ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
