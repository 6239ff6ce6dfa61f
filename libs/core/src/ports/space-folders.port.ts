/** The few folder operations space management needs (files themselves go through FileStore). */
export abstract class SpaceFolders {
  abstract ensureFolder(path: string): Promise<void>;
  abstract isFolder(path: string): Promise<boolean>;
  /** Canonical path with symlinks resolved; the input when it does not exist. */
  abstract canonical(path: string): Promise<string>;
  abstract removeRecursive(path: string): Promise<void>;
}
