/** Wire shapes of file events (docs/api.md, "Files on disk": file events). */

/** Global file events. */
export const ARTIFACT_CHANGED_BATCH = 'artifact:changed-batch';
export const ARTIFACT_TREE_UPDATE = 'artifact:tree-update';

/** What happened to a path, as the watchers report it. */
export type FileChangeType = 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir';

export type TreeEntryType = 'file' | 'folder';

/** One change as clients see it. */
export interface ArtifactChange {
  type: FileChangeType;
  /** Absolute path. */
  path: string;
  /** Inside the space's folder, forward slashes. */
  relativePath: string;
}

/**
 * `artifact:changed-batch`. `resync: true` (with no changes) means changes were lost (a
 * burst over the limit, a watcher failure, a reconcile): anything in the space may have
 * changed, so holders of file state reload it.
 */
export interface ArtifactChangeBatchEvent {
  spaceId: string;
  changes: ArtifactChange[];
  resync?: true;
}

/** A tree node of a folder's direct children. */
export interface ArtifactTreeNode {
  id: string;
  name: string;
  type: TreeEntryType;
  path: string;
  relativePath: string;
  /** false for folders: their children are read with the children operation. */
  childrenLoaded: boolean;
}

/** `artifact:tree-update`: folders whose direct children changed, with their children now. */
export interface ArtifactTreeUpdateEvent {
  spaceId: string;
  updatedDirs: Array<{ dirPath: string; children: ArtifactTreeNode[] }>;
}

/** Between replicas only (never to sockets): the watching replica restarts a space's watcher. */
export const WATCH_RESTART_CHANNEL = 'internal:artifact-watch:restart';
export interface WatchRestartEvent {
  spaceId: string;
}

/**
 * An entry of a space's trash (docs/api.md, "Trash": an extension of the interface): what
 * `DELETE /api/spaces/:spaceId/artifacts` moved there from this space.
 */
export interface TrashEntry {
  /** The entry's name in the data folder's trash: what restore and delete take. */
  id: string;
  /** Where it was, relative to the space's folder (forward slashes). */
  path: string;
  /** When it was moved to the trash (ISO 8601). */
  deletedAt: string;
  isDirectory: boolean;
  /** Bytes, for a file. */
  size?: number;
}
