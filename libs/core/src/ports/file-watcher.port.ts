/**
 * Watching spaces' folders and reading their trees, for change events and the search index.
 * Paths are absolute; what a space's files look like to clients (relative paths, ignored
 * folders) is decided in core (`artifacts/watch-events.ts`), not by the adapters.
 */

import type { FileChangeType, TreeEntryType } from '#contracts/artifacts.js';

/** What chokidar-style watchers report; `path` is absolute. */
export type { FileChangeType, TreeEntryType };

export const FILE_CHANGE_TYPES: readonly FileChangeType[] = ['add', 'change', 'unlink', 'addDir', 'unlinkDir'];

export interface RawFileChange {
  type: FileChangeType;
  /** Absolute path of the entry that changed. */
  path: string;
}

export interface WatchListener {
  change(change: RawFileChange): void;
  /** The watcher lost or may have lost events (overflow, permission, too many watches). */
  error(error: Error): void;
}

/** One running recursive watch; `close` stops it and reports nothing afterwards. */
export interface FolderWatch {
  close(): Promise<void>;
}

export interface WatchRequest {
  /** Absolute folder watched recursively. */
  root: string;
  /** Entries for which this answers true are neither reported nor descended into. */
  ignore: (absolutePath: string) => boolean;
}

/** Recursive folder watching (chokidar on the native watcher, or polling for network volumes). */
export abstract class FileWatcher {
  /**
   * Starts watching; resolves once the initial scan is done, so every change made after it
   * resolves is reported. Existing entries are not reported. Rejects when `root` is not a folder.
   */
  abstract watch(request: WatchRequest, listener: WatchListener): Promise<FolderWatch>;
}

export interface TreeEntry {
  name: string;
  type: TreeEntryType;
  /** Absolute path. */
  path: string;
}

export interface WalkRequest {
  root: string;
  /** Entries for which this answers true are skipped, folders with everything below them. */
  ignore: (absolutePath: string) => boolean;
  /** Stop after this many entries. */
  limit: number;
  /** Aborting stops the walk (it then resolves with what it reported). */
  signal?: AbortSignal;
  /** Receives the entries in batches, parents before their children. */
  onEntries(entries: TreeEntry[]): void;
}

/** Reading folder trees without following symlinks out of them. */
export abstract class FileTreeScanner {
  /** The entries of one folder (ignored ones left out), or null when it is not a folder any more. */
  abstract listFolder(folder: string, ignore: (absolutePath: string) => boolean): Promise<TreeEntry[] | null>;

  /**
   * Walks `root` (not included) asynchronously, yielding to the event loop between folders.
   * `truncated` is true when entries were left because of `limit`. Unreadable folders are
   * skipped; symlinks are reported as files and never followed.
   */
  abstract walk(request: WalkRequest): Promise<{ count: number; truncated: boolean }>;
}
