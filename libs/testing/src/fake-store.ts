import type { StoreEntry } from '#contracts/store.js';
import {
  type CachedIndex,
  DUPLICATE_URL,
  type IndexState,
  type RegistrySource,
  StoreRepository,
  type StoreInstall,
} from '#core/ports/store.repository.port.js';

/**
 * Store records in memory with the database's rules: a source URL is unique (a second add is
 * DUPLICATE_URL), built-in sources come first and `syncBuiltins` makes them exactly the given
 * ones (keeping each one's enabled flag, pushing aside a user source of the same URL), a
 * source's cached index goes with it, and saving an index with entries bumps its revision.
 * Records handed out are copies.
 */
export class FakeStoreRepository extends StoreRepository {
  /** In insertion order. */
  readonly sources = new Map<string, RegistrySource>();
  readonly indexes = new Map<string, CachedIndex>();
  readonly installs = new Map<string, StoreInstall>();

  async listSources(): Promise<RegistrySource[]> {
    const all = [...this.sources.values()];
    return structuredClone([...all.filter((s) => s.isDefault), ...all.filter((s) => !s.isDefault)]);
  }

  async findSource(id: string): Promise<RegistrySource | null> {
    const source = this.sources.get(id);
    return source ? structuredClone(source) : null;
  }

  async addSource(source: RegistrySource): Promise<RegistrySource | typeof DUPLICATE_URL> {
    if ([...this.sources.values()].some((s) => s.url === source.url)) return DUPLICATE_URL;
    this.sources.set(source.id, structuredClone(source));
    return source;
  }

  async updateSource(
    id: string,
    changes: Partial<Pick<RegistrySource, 'enabled' | 'adapterConfig'>>,
  ): Promise<boolean> {
    const source = this.sources.get(id);
    if (!source) return false;
    if (changes.enabled !== undefined) source.enabled = changes.enabled;
    if (changes.adapterConfig !== undefined) source.adapterConfig = structuredClone(changes.adapterConfig);
    return true;
  }

  async deleteSource(id: string): Promise<boolean> {
    this.indexes.delete(id);
    return this.sources.delete(id);
  }

  async syncBuiltins(builtins: RegistrySource[]): Promise<void> {
    const ids = builtins.map((b) => b.id);
    for (const source of [...this.sources.values()]) {
      if (source.isDefault && !ids.includes(source.id)) await this.deleteSource(source.id);
    }
    for (const b of builtins) {
      for (const other of [...this.sources.values()]) {
        if (other.url === b.url && other.id !== b.id) await this.deleteSource(other.id);
      }
      const current = this.sources.get(b.id);
      this.sources.set(b.id, {
        ...structuredClone(b),
        isDefault: true,
        enabled: current ? current.enabled : b.enabled,
        adapterConfig: current?.adapterConfig ?? null,
      });
    }
  }

  async indexStates(): Promise<Map<string, IndexState>> {
    return new Map(
      [...this.indexes].map(([id, index]) => [
        id,
        { revision: index.revision, error: index.error, skipped: index.skipped, checkedAtMs: index.checkedAtMs },
      ]),
    );
  }

  async findIndex(registryId: string, withEntries = true): Promise<CachedIndex | null> {
    const index = this.indexes.get(registryId);
    if (!index) return null;
    return structuredClone(withEntries ? index : { ...index, entries: [] });
  }

  async saveIndex(
    registryId: string,
    read: Omit<CachedIndex, 'registryId' | 'revision' | 'entries'> & { entries?: StoreEntry[] },
  ): Promise<void> {
    const current = this.indexes.get(registryId);
    const { entries, ...rest } = structuredClone(read);
    this.indexes.set(registryId, {
      ...rest,
      registryId,
      revision: current ? current.revision + (entries === undefined ? 0 : 1) : 1,
      entries: entries ?? current?.entries ?? [],
    });
  }

  async clearIndex(registryId: string): Promise<void> {
    this.indexes.delete(registryId);
  }

  async saveInstall(install: StoreInstall): Promise<void> {
    this.installs.set(install.appId, structuredClone(install));
  }

  async findInstall(appId: string): Promise<StoreInstall | null> {
    const install = this.installs.get(appId);
    return install ? structuredClone(install) : null;
  }

  async listInstalls(): Promise<StoreInstall[]> {
    return structuredClone([...this.installs.values()]);
  }
}
