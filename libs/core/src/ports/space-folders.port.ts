/** The few folder operations space management needs (files themselves go through FileStore). */
export abstract class SpaceFolders {
  /** Creates the folder (and its parents) when missing; true when it was created now. */
  abstract ensureFolder(path: string): Promise<boolean>;
  abstract isFolder(path: string): Promise<boolean>;
  /** Canonical path with symlinks resolved; the input when it does not exist. */
  abstract canonical(path: string): Promise<string>;
  abstract removeRecursive(path: string): Promise<void>;
  /**
   * Removes temporary files of atomic writes (`*.svc-tmp`) that a killed process left under
   * `path`, older than `olderThanMs` (younger ones may belong to a write in progress on
   * another replica); answers how many were removed.
   */
  abstract removeOrphanedTempFiles(path: string, olderThanMs: number): Promise<number>;
}
