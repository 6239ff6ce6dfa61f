/** Wire shapes of spaces (docs/api.md, "Workspaces and files"). */

export const TEMP_SPACE_ID = 'svc-temp';

export type MemoryCadence = 'diligent' | 'balanced' | 'economical';
export const MEMORY_CADENCES: readonly MemoryCadence[] = ['diligent', 'balanced', 'economical'];

export interface MemoryPreferences {
  enabled: boolean;
  autoConsolidate: boolean;
  cadence: MemoryCadence;
}

export interface SpacePreferences {
  memory: MemoryPreferences;
}

export const DEFAULT_MEMORY_PREFERENCES: Readonly<MemoryPreferences> = {
  enabled: true,
  autoConsolidate: true,
  cadence: 'diligent',
};

export interface SpaceDto {
  id: string;
  name: string;
  /** Absolute working folder. */
  path: string;
  icon: string;
  color?: string;
  isTemp: boolean;
  preferences: SpacePreferences;
  createdAt: string;
  updatedAt: string;
}

export interface MemoryState {
  exists: boolean;
  totalBytes: number;
  topicCount: number;
  lastConsolidatedAt: string | null;
  lastAttempt: { at: string; outcome: string; reason?: string } | null;
  consolidating: boolean;
}

/** A workspace was created, updated, deleted or its folder changed (to every connection). */
export const SPACE_CHANGED = 'space:changed';
export type SpaceChange = 'created' | 'updated' | 'deleted' | 'folder-changed';
export interface SpaceChangedEvent {
  spaceId: string;
  change: SpaceChange;
}
