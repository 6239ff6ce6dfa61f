import type { Space } from '../kernel/space.js';

export type NewSpace = Omit<Space, 'createdAt' | 'updatedAt' | 'sortOrder' | 'ownsFolder'> & { ownsFolder?: boolean };
export type SpacePatch = Partial<Pick<Space, 'name' | 'icon' | 'color' | 'path' | 'preferences' | 'ownsFolder'>>;

/** Space records. */
export abstract class SpaceRepository {
  /** Every space, the temporary one included, in the user's order. */
  abstract listAll(): Promise<Space[]>;
  /** Every space's folder, the temporary one's included, in no particular order: the roots a path anywhere may lie in. */
  abstract listFolders(): Promise<string[]>;
  abstract findById(id: string): Promise<Space | null>;
  /** Appends at the end of the order. */
  abstract insert(space: NewSpace): Promise<Space>;
  /** Inserts the space unless one with its id exists (idempotent across replicas). */
  abstract insertIfMissing(space: NewSpace): Promise<void>;
  abstract update(id: string, patch: SpacePatch): Promise<Space | null>;
  abstract remove(id: string): Promise<boolean>;
  /** The listed ids take the first positions in that order; the others follow in their previous order. */
  abstract reorder(ids: readonly string[]): Promise<void>;
}
