import type { StoreEntry } from '#contracts/store.js';

export interface RegistrySource {
  id: string;
  name: string;
  url: string;
  enabled: boolean;
  isDefault: boolean;
  sourceType: string | null;
  adapterConfig: Record<string, unknown> | null;
}

export type IndexLayout = 'split' | 'single';

/** What a source's catalog held when last read; kept in the database so replicas agree. */
export interface CachedIndex {
  registryId: string;
  /** Bumped on every change of `entries`: replicas reload their in-memory copy when it moves. */
  revision: number;
  layout: IndexLayout | null;
  /** Validators of each index file read (by file name). */
  validators: Record<string, { etag?: string; lastModified?: string }>;
  entries: StoreEntry[];
  skipped: number;
  /** The last read's failure (the entries of the last good read stay). */
  error: string | null;
  /** Last successful read or revalidation (epoch ms), null when never read. */
  checkedAtMs: number | null;
}

export type IndexState = Pick<CachedIndex, 'revision' | 'error' | 'skipped' | 'checkedAtMs'>;

export interface BundledSkill {
  id: string;
  files: Array<{ path: string; base64: string }>;
}

/** How an app came from the Store or a package: what updates and export need to know. */
export interface StoreInstall {
  appId: string;
  registryId: string | null;
  slug: string | null;
  /** The author's version of the spec as installed: user edits are the differences from it. */
  authorSpec: Record<string, unknown>;
  /** Files of bundled skills (and of a skill item), kept for export. */
  skills: BundledSkill[];
  ignoredVersions: string[];
}

export const DUPLICATE_URL = 'duplicate-url';

export abstract class StoreRepository {
  abstract listSources(): Promise<RegistrySource[]>;
  abstract findSource(id: string): Promise<RegistrySource | null>;
  abstract addSource(source: RegistrySource): Promise<RegistrySource | typeof DUPLICATE_URL>;
  abstract updateSource(
    id: string,
    changes: Partial<Pick<RegistrySource, 'enabled' | 'adapterConfig'>>,
  ): Promise<boolean>;
  abstract deleteSource(id: string): Promise<boolean>;
  /** Makes the built-in sources exactly these (kept enabled or disabled as they were); safe on many replicas. */
  abstract syncBuiltins(sources: RegistrySource[]): Promise<void>;

  /** State of every cached index without its entries, cheap: replicas compare revisions with what they hold. */
  abstract indexStates(): Promise<Map<string, IndexState>>;
  /** The cached index; `withEntries` false leaves `entries` empty (validators only: cheap). */
  abstract findIndex(registryId: string, withEntries?: boolean): Promise<CachedIndex | null>;
  /** Stores a read: `entries` present means the content changed (revision bumps). */
  abstract saveIndex(
    registryId: string,
    read: Omit<CachedIndex, 'registryId' | 'revision' | 'entries'> & { entries?: StoreEntry[] },
  ): Promise<void>;
  /** Drops a source's cached index (a full refresh reads everything again). */
  abstract clearIndex(registryId: string): Promise<void>;

  abstract saveInstall(install: StoreInstall): Promise<void>;
  abstract findInstall(appId: string): Promise<StoreInstall | null>;
  abstract listInstalls(): Promise<StoreInstall[]>;
}
