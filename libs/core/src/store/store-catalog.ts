import { ErrorCodes } from '#contracts/errors.js';
import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { type SourceStatusDto, StoreChannels, type StoreEntry, type StoreSyncStatusEvent } from '#contracts/store.js';
import { APP_CONFIG, type AppConfig, DEFAULT_STORE_SOURCE, type PublicCatalogProtocol } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { CatalogFetcher } from '../ports/catalog-fetcher.port.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { type IndexState, type RegistrySource, StoreRepository } from '../ports/store.repository.port.js';
import { CatalogReader, type ReadMode, sourceUrl } from './catalog-reader.js';
import { StoreErrors } from './store-errors.js';
import { type SourcedEntry, sourced } from './store-query.js';

/** A cached index older than this is revalidated in the background on the next read. */
export const INDEX_TTL_MS = 60 * 60 * 1000;
/** A source that has never been read is read on first use, waiting at most this long. */
const FIRST_READ_WAIT_MS = 15_000;
/** How long a replica reuses its view of the sources and index revisions (others' changes show within it). */
const VIEW_TTL_MS = 2000;
/** A stale or failing source is read again in the background at most this often per replica. */
const RETRY_AFTER_MS = 60_000;
/** Largest spec.yaml, README or skill file fetched from a source. */
export const ITEM_FILE_MAX_BYTES = 5 * 1024 * 1024;

export interface Catalog {
  /** Shared between queries until a source changes: never mutated. */
  entries: readonly SourcedEntry[];
  sources: SourceStatusDto[];
}

export interface FoundEntry {
  source: RegistrySource;
  entry: StoreEntry;
}

/** The items of a source not read yet (one array, so the merged catalog stays cached). */
const NO_ITEMS: SourcedEntry[] = [];

const PUBLIC_CATALOG_NAMES: Record<PublicCatalogProtocol, string> = {
  'mcp-registry': 'MCP Registry',
  smithery: 'Smithery',
  'claude-skills': 'Claude Skills Registry',
  skillhub: 'SkillHub',
};

/** Built-in source ids are derived from the URL, so every replica seeds the same rows. */
export function builtinId(url: string): string {
  return url === DEFAULT_STORE_SOURCE
    ? 'official'
    : `builtin-${createHash('sha256').update(url).digest('hex').slice(0, 10)}`;
}

/**
 * The federated catalog: enabled sources, each read by CatalogReader into the database, held
 * in memory per replica and reloaded when the stored revision moves (so replicas agree and a
 * restart reads no network). A failing source never fails the others.
 */
@Injectable()
export class StoreCatalog implements OnApplicationBootstrap {
  private readonly log = new Logger('Store');
  private readonly held = new Map<string, { revision: number; items: SourcedEntry[] }>();
  private readonly reading = new Map<string, Promise<boolean>>();
  /** When this replica last started a background read of a source (failing sources are retried slowly). */
  private readonly attempted = new Map<string, number>();
  /** Never-read sources whose first read failed or outran FIRST_READ_WAIT_MS: queries stop waiting for them. */
  private readonly firstReadGaveUp = new Map<string, number>();
  private snapshot: { at: number; sources: RegistrySource[]; states: Map<string, IndexState> } | null = null;
  private builtinsReady: Promise<void> | null = null;
  /** The last merged catalog and the per-source lists it was merged from. */
  private merged: { lists: SourcedEntry[][]; entries: readonly SourcedEntry[] } | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repo: StoreRepository,
    private readonly reader: CatalogReader,
    private readonly fetcher: CatalogFetcher,
    private readonly clock: Clock,
    private readonly bus: EventBus,
  ) {}

  onApplicationBootstrap(): void {
    void this.builtins().catch(() => undefined);
  }

  /** Seeds the built-in sources of SVC_STORE_SOURCES once per process (idempotent across replicas). */
  builtins(): Promise<void> {
    this.builtinsReady ??= this.repo
      .syncBuiltins([
        ...this.config.storeSources.map((item, i) => {
          const storeServer = item.startsWith('dhp-v2+');
          const url = item.replace(/^dhp-v2\+/, '');
          return {
            id: builtinId(url),
            name:
              url === DEFAULT_STORE_SOURCE ? 'Digital Human Protocol' : `Built-in catalog ${i + 1} (${hostOf(url)})`,
            url: url.replace(/\/+$/, ''),
            enabled: true,
            isDefault: true,
            sourceType: storeServer ? 'dhp-v2' : 'svc',
            adapterConfig: null,
          };
        }),
        // The public catalogs: the protocol is the id (one of each), seeded on or off as configured.
        ...(this.config.storeCatalogs ?? []).map((c) => ({
          id: c.protocol,
          name: PUBLIC_CATALOG_NAMES[c.protocol],
          url: c.url,
          enabled: c.enabled,
          isDefault: true,
          sourceType: c.protocol,
          adapterConfig: null,
        })),
      ])
      .catch((err: unknown) => {
        this.builtinsReady = null;
        throw err;
      });
    return this.builtinsReady;
  }

  async sources(): Promise<RegistrySource[]> {
    await this.builtins();
    return this.repo.listSources();
  }

  async source(id: string): Promise<RegistrySource> {
    await this.builtins();
    const source = await this.repo.findSource(id);
    if (!source) throw DomainError.notFound(StoreErrors.sourceNotFound(id), ErrorCodes.REGISTRY_SOURCE_NOT_FOUND);
    return source;
  }

  /** Every entry of the enabled sources (first source wins a repeated slug) and each source's status. */
  async catalog(): Promise<Catalog> {
    let { sources, states } = await this.view();
    // A source never read is waited for once; one whose first read failed or outran the wait is
    // read again in the background meanwhile, and queries answer at once with what is held.
    const now = this.clock.now();
    const neverRead = sources.filter((s) => !states.has(s.id));
    const unread = neverRead.filter((s) => !this.firstReadGaveUp.has(s.id));
    for (const s of neverRead) {
      if (!this.firstReadGaveUp.has(s.id) || now - (this.attempted.get(s.id) ?? 0) <= RETRY_AFTER_MS) continue;
      this.attempted.set(s.id, now);
      void this.readOnce(s, 'conditional').catch(() => false);
    }
    if (unread.length > 0) {
      await Promise.all(
        unread.map((s) =>
          this.readOnce(s, 'conditional', FIRST_READ_WAIT_MS).catch(() => {
            this.firstReadGaveUp.set(s.id, this.clock.now());
            return false;
          }),
        ),
      );
      this.invalidate();
      ({ sources, states } = await this.view());
    }
    const loaded = [];
    for (const source of sources) loaded.push(await this.load(source, states.get(source.id)));
    return { entries: this.merge(loaded.map((held) => held.items)), sources: loaded.map((held) => held.status) };
  }

  /**
   * The enabled sources' entries in one list, first source winning a repeated slug. Merging
   * 10,000 entries took most of a warm query, so the list is kept until a source's held items
   * change (a new revision read, a source turned on or off): compared by identity, per source.
   */
  private merge(lists: SourcedEntry[][]): readonly SourcedEntry[] {
    const last = this.merged;
    if (last && last.lists.length === lists.length && last.lists.every((list, i) => list === lists[i])) {
      return last.entries;
    }
    const entries: SourcedEntry[] = [];
    const seen = new Set<string>();
    for (const items of lists) {
      for (const item of items) {
        if (seen.has(item.entry.slug)) continue;
        seen.add(item.entry.slug);
        entries.push(item);
      }
    }
    this.merged = { lists, entries };
    return entries;
  }

  /** The entry of a slug among the enabled sources. */
  async find(slug: string): Promise<FoundEntry> {
    const { entries } = await this.catalog();
    const item = entries.find((e) => e.entry.slug === slug);
    if (!item) throw DomainError.notFound(StoreErrors.notFound(slug), ErrorCodes.STORE_ITEM_NOT_FOUND);
    return { source: await this.source(item.registryId), entry: item.entry };
  }

  /** Revalidates (conditional) or re-reads (full) every enabled source; true when any index moved. */
  async readAll(mode: ReadMode): Promise<boolean> {
    const sources = (await this.sources()).filter((s) => s.enabled);
    if (mode === 'full') for (const s of sources) this.held.delete(s.id);
    const results = await Promise.all(
      sources.map((s) =>
        this.readOnce(s, mode).catch((err: unknown) => {
          this.log.warn({ msg: 'store source read failed', registryId: s.id, error: String(err) });
          return false;
        }),
      ),
    );
    return results.some(Boolean);
  }

  /** A file of an entry (`<path>/<relative>`, or a full URL), or null when the source has no such file. */
  async itemFile(source: RegistrySource, urlOrRelative: string, entryPath?: string): Promise<Uint8Array | null> {
    const url = /^https?:\/\//i.test(urlOrRelative)
      ? urlOrRelative
      : sourceUrl(source.url, entryPath ? `${entryPath}/${urlOrRelative}` : urlOrRelative);
    try {
      const res = await this.fetcher.fetch({ url, maxBytes: ITEM_FILE_MAX_BYTES, publicOnly: !source.isDefault });
      return res.status === 'ok' ? res.body : null;
    } catch (err) {
      throw new DomainError(
        'unavailable',
        StoreErrors.sourceFailed(source.url, err instanceof Error ? err.message : String(err)),
        ErrorCodes.STORE_SERVER_FAILED,
      );
    }
  }

  forget(registryId: string): void {
    this.held.delete(registryId);
    this.firstReadGaveUp.delete(registryId);
    this.invalidate();
  }

  /** After a change on this replica: the next read looks at the database again. */
  invalidate(): void {
    this.snapshot = null;
  }

  /**
   * The enabled sources and the state of their cached indexes, looked up at most every
   * VIEW_TTL_MS per replica (two small queries that would otherwise dominate a warm query).
   */
  private async view(): Promise<{ sources: RegistrySource[]; states: Map<string, IndexState> }> {
    const now = this.clock.now();
    if (this.snapshot && now - this.snapshot.at < VIEW_TTL_MS) return this.snapshot;
    const [sources, states] = await Promise.all([this.sources(), this.repo.indexStates()]);
    this.snapshot = { at: now, sources: sources.filter((s) => s.enabled), states };
    return this.snapshot;
  }

  /** One read of a source at a time per replica; others wait for it. */
  private readOnce(source: RegistrySource, mode: ReadMode, waitMs?: number): Promise<boolean> {
    let running = this.reading.get(source.id);
    if (!running) {
      running = this.reader
        .read(source, mode)
        .then(
          (changed) => {
            this.announce({ registryId: source.id, status: 'ok', changed });
            return changed;
          },
          (err: unknown) => {
            const error = err instanceof Error ? err.message : String(err);
            this.announce({ registryId: source.id, status: 'error', changed: false, error });
            throw err;
          },
        )
        .finally(() => {
          this.reading.delete(source.id);
          this.invalidate();
        });
      this.reading.set(source.id, running);
    }
    if (waitMs === undefined) return running;
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      running,
      new Promise<boolean>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), waitMs))),
    ]).finally(() => clearTimeout(timer));
  }

  /** `store:sync-status-changed` to every connection (a failure to publish is only logged). */
  private announce(event: StoreSyncStatusEvent): void {
    this.bus.publish(StoreChannels.syncStatusChanged, event).catch((err: unknown) => {
      this.log.warn({ msg: 'store event not published', error: String(err) });
    });
  }

  private async load(
    source: RegistrySource,
    index: IndexState | undefined,
  ): Promise<{ items: SourcedEntry[]; status: SourceStatusDto }> {
    const registryId = source.id;
    let held = this.held.get(registryId);
    if (index !== undefined && held?.revision !== index.revision) {
      const full = await this.repo.findIndex(registryId);
      held = { revision: full?.revision ?? 0, items: (full?.entries ?? []).map((e) => sourced(registryId, e)) };
      this.held.set(registryId, held);
    }
    const now = this.clock.now();
    const stale = index !== undefined && (index.checkedAtMs === null || now - index.checkedAtMs > INDEX_TTL_MS);
    if (stale && now - (this.attempted.get(registryId) ?? 0) > RETRY_AFTER_MS) {
      this.attempted.set(registryId, now);
      void this.readOnce(source, 'conditional').catch(() => false);
    }
    const status: SourceStatusDto = {
      registryId,
      status: index?.error || !index ? 'error' : 'ok',
      ...(index?.error ? { error: index.error } : !index ? { error: 'not read yet' } : {}),
      ...(index?.skipped ? { skipped: index.skipped } : {}),
    };
    return { items: held?.items ?? NO_ITEMS, status };
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
