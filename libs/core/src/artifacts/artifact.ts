/** Shapes of files as the API shows them (docs/api.md, "Workspaces and files"). */

export type EntryType = 'file' | 'folder';

export interface ArtifactEntry {
  /** Stable within a space: the relative path. */
  id: string;
  name: string;
  type: EntryType;
  /** Absolute path (under the space's working folder). */
  path: string;
  /** Inside the space, forward slashes. */
  relativePath: string;
  /** Lower case, without the dot; '' for folders and names without one. */
  extension: string;
  /** Bytes for files, 0 for folders. */
  size: number;
}

/** A children entry: folders say whether their children are included (never, here). */
export interface ChildEntry extends ArtifactEntry {
  childrenLoaded?: boolean;
}

export interface TreeNode extends ArtifactEntry {
  /** Folders only: false means load them with the children operation. */
  childrenLoaded?: boolean;
  /** Folders whose childrenLoaded is true. */
  children?: TreeNode[];
}

export interface ArtifactTree {
  workspaceRoot: string;
  nodes: TreeNode[];
}

export interface FileContent {
  content: string;
  mimeType: string;
  encoding: 'utf-8' | 'base64';
  size: number;
}
