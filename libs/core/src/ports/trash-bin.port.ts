import type { GuardedPath } from './file-store.port.js';

/** One entry of the data folder's trash, as its `.trashinfo` records it. */
export interface TrashedItem {
  /** The entry's name in `trash/files` (its record is `trash/info/<id>.trashinfo`): a plain name. */
  id: string;
  /** Where it was: the absolute path the record holds (`Path=`, unescaped). */
  originalPath: string;
  /** When it was trashed (`DeletionDate=`). */
  deletedAt: Date;
  /** When the record was written, to the millisecond: orders entries trashed within one second. */
  recordedAt: number;
  kind: 'file' | 'folder' | 'other';
  /** Bytes of a file; 0 for anything else. */
  size: number;
}

/**
 * The trash of the data folder (freedesktop layout: `trash/files` and `trash/info/*.trashinfo`),
 * which `FileStore.trash` fills: reading it back, restoring and emptying entries. Ids are plain
 * names; anything else (a slash, `..`) is unknown, so no id reaches outside the trash.
 */
export abstract class TrashBin {
  /** Every entry whose record and content are both there, in no order. */
  abstract list(): Promise<TrashedItem[]>;

  /** The entry `id`, or null when there is none (or `id` is not a plain name). */
  abstract get(id: string): Promise<TrashedItem | null>;

  /**
   * Moves the entry back to `destination` (its parent must exist; the caller checks the
   * destination is free) and drops its record. DomainError not_found when it is gone meanwhile.
   */
  abstract restore(id: string, destination: GuardedPath): Promise<void>;

  /** Deletes the entry and its record for good. DomainError not_found when it is not there. */
  abstract purge(id: string): Promise<void>;
}
