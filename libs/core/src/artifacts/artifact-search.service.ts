import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { DomainError } from '../errors/domain-error.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { FILE_CHANGE_TYPES, FileTreeScanner } from '../ports/file-watcher.port.js';
import type { Space } from '../kernel/space.js';
import { ARTIFACT_CHANGED_BATCH } from '#contracts/artifacts.js';
import { SPACE_CHANGED } from '#contracts/spaces.js';
import { SpacesService } from '../spaces/spaces.service.js';
import { type IndexedPath, PathIndex } from './path-index.js';
import { relativeInside, toPosix } from './path-rules.js';
import { type ArtifactChange, ignoreUnder, isIgnoredRelative, relativeUnder } from './watch-events.js';

/** Injection token of ArtifactSearchOptions. */
export const ARTIFACT_SEARCH_OPTIONS = Symbol('ARTIFACT_SEARCH_OPTIONS');

export interface ArtifactSearchOptions {
  /** Most paths indexed per space; beyond it answers say `truncated`. */
  indexLimit?: number;
  /** An index nobody queried for this long is dropped (rebuilt on the next query). */
  idleEvictMs?: number;
  /** Paths per search snapshot (PathIndex). */
  segmentSize?: number;
  /** Changes held while a build runs; more restart the build. */
  maxBufferedChanges?: number;
}

export const DEFAULT_INDEX_LIMIT = 200_000;
export const DEFAULT_QUERY_LIMIT = 50;
/** Larger limits are lowered to this. */
export const MAX_QUERY_LIMIT = 1_000;

const DEFAULTS: Required<ArtifactSearchOptions> = {
  indexLimit: DEFAULT_INDEX_LIMIT,
  idleEvictMs: 30 * 60_000,
  segmentSize: 8_192,
  maxBufferedChanges: 50_000,
};

/** Answer of `GET /api/spaces/:spaceId/artifacts/query`. */
export interface ArtifactQueryResult {
  items: IndexedPath[];
  /** The space has more paths than the index holds. */
  truncated: boolean;
  /** The index is being built; a repeated query may find more. */
  indexing: boolean;
}

interface Build {
  index: PathIndex;
  abort: AbortController;
  /** Changes heard while walking, applied once the walk is over. */
  buffered: ArtifactChange[];
  done: Promise<void>;
}

interface SpaceIndex {
  spaceId: string;
  root: string;
  /** The last complete index (null until the first build finishes). */
  current: PathIndex | null;
  build: Build | null;
  lastUsedAt: number;
  /** A reconcile on this replica rebuilt the index already: skip the resync event it publishes. */
  skipResyncUntil: number;
}

/**
 * File search (`artifacts/query`) over a per-replica, in-memory index of each space's paths.
 * An index is built on the first query by walking the folder in the background (answers say
 * `indexing: true` meanwhile, with what was found so far), and kept current by the
 * `artifact:changed-batch` events every replica hears on the bus (a `resync` rebuilds it).
 */
@Injectable()
export class ArtifactSearchService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ArtifactSearch');
  private readonly options: Required<ArtifactSearchOptions>;
  private readonly indexes = new Map<string, SpaceIndex>();
  private unsubscribe: (() => void) | null = null;
  private evictTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly spaces: SpacesService,
    private readonly scanner: FileTreeScanner,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    @Optional() @Inject(ARTIFACT_SEARCH_OPTIONS) options?: ArtifactSearchOptions,
  ) {
    this.options = { ...DEFAULTS, ...stripUndefined(options ?? {}) };
  }

  onModuleInit(): void {
    this.unsubscribe = this.bus.subscribe((event) => {
      if (event.channel === ARTIFACT_CHANGED_BATCH) this.onBatch(event.data);
      else if (event.channel === SPACE_CHANGED) this.onSpaceChanged(event.data);
    });
    this.evictTimer = setInterval(() => this.evictIdle(), Math.min(60_000, this.options.idleEvictMs));
    this.evictTimer.unref?.();
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    if (this.evictTimer) clearInterval(this.evictTimer);
    for (const spaceId of [...this.indexes.keys()]) this.drop(spaceId);
  }

  async query(spaceId: string, rawQuery: unknown, rawLimit: unknown): Promise<ArtifactQueryResult> {
    const query = parseQuery(rawQuery);
    const limit = parseLimit(rawLimit);
    const state = this.stateFor(await this.spaces.get(spaceId));
    state.lastUsedAt = this.clock.now();
    const index = state.current ?? state.build?.index;
    if (!index) return { items: [], truncated: false, indexing: state.build !== null };
    return {
      items: index.search(query, limit).map((hit) => hit.item),
      truncated: index.truncated,
      indexing: state.build !== null,
    };
  }

  /** Rebuilds the space's index from disk now and waits for it (reconcile). */
  async reconcile(spaceId: string): Promise<void> {
    const state = this.stateFor(await this.spaces.get(spaceId), false);
    state.lastUsedAt = this.clock.now();
    state.skipResyncUntil = this.clock.now() + 5_000;
    await this.startBuild(state).done;
  }

  /** Whether this replica holds an index of the space (tests, diagnostics). */
  hasIndex(spaceId: string): boolean {
    return this.indexes.has(spaceId);
  }

  private stateFor(space: Space, buildIfNew = true): SpaceIndex {
    let state = this.indexes.get(space.id);
    if (state && state.root !== space.path) {
      this.drop(space.id);
      state = undefined;
    }
    if (!state) {
      state = {
        spaceId: space.id,
        root: space.path,
        current: null,
        build: null,
        lastUsedAt: this.clock.now(),
        skipResyncUntil: 0,
      };
      this.indexes.set(space.id, state);
      if (buildIfNew) this.startBuild(state);
    }
    return state;
  }

  /** Starts a fresh build (abandoning one in progress); queries keep the current index meanwhile. */
  private startBuild(state: SpaceIndex): Build {
    state.build?.abort.abort();
    const { root } = state;
    const relative = relativeUnder(root);
    const index = new PathIndex({ limit: this.options.indexLimit, segmentSize: this.options.segmentSize });
    const abort = new AbortController();
    const build: Build = { index, abort, buffered: [], done: Promise.resolve() };
    state.build = build;
    const started = this.clock.now();
    build.done = this.scanner
      .walk({
        root,
        ignore: ignoreUnder(root),
        limit: this.options.indexLimit,
        signal: abort.signal,
        onEntries: (entries) => {
          for (const entry of entries) {
            const rel = relative(entry.path);
            if (rel === null || rel === '') continue;
            index.add({ name: entry.name, type: entry.type, path: entry.path, relativePath: rel });
          }
        },
      })
      .then(({ truncated }) => {
        if (abort.signal.aborted || state.build !== build) return;
        if (truncated) index.truncated = true;
        for (const change of build.buffered) index.apply(change);
        state.current = index;
        state.build = null;
        this.logger.debug('search index built', {
          spaceId: state.spaceId,
          paths: index.size,
          ms: this.clock.now() - started,
        });
      })
      .catch((err: Error) => {
        if (state.build === build) state.build = null;
        this.logger.warn('search index build failed', { spaceId: state.spaceId, error: err.message });
      });
    return build;
  }

  private onBatch(data: Record<string, unknown>): void {
    const spaceId = data.spaceId;
    if (typeof spaceId !== 'string') return;
    const state = this.indexes.get(spaceId);
    if (!state) return;
    if (data.resync === true) {
      if (this.clock.now() < state.skipResyncUntil) {
        state.skipResyncUntil = 0;
        return;
      }
      this.startBuild(state);
      return;
    }
    if (!Array.isArray(data.changes)) return;
    for (const raw of data.changes as unknown[]) {
      const change = validChange(raw, state.root);
      if (!change) continue;
      state.current?.apply(change);
      const build = state.build;
      if (!build) continue;
      build.buffered.push(change);
      if (build.buffered.length > this.options.maxBufferedChanges) {
        this.startBuild(state);
      }
    }
  }

  private onSpaceChanged(data: Record<string, unknown>): void {
    if (typeof data.spaceId !== 'string') return;
    // A renamed space keeps its files; a deleted or re-pointed one does not.
    if (data.change === 'updated' || data.change === 'created') return;
    this.drop(data.spaceId);
  }

  private drop(spaceId: string): void {
    const state = this.indexes.get(spaceId);
    if (!state) return;
    state.build?.abort.abort();
    state.build = null;
    this.indexes.delete(spaceId);
  }

  private evictIdle(): void {
    const before = this.clock.now() - this.options.idleEvictMs;
    for (const [spaceId, state] of this.indexes) if (state.lastUsedAt < before) this.drop(spaceId);
  }
}

const CHANGE_TYPES: ReadonlySet<string> = new Set(FILE_CHANGE_TYPES);

/** A change event entry from the bus, checked: right shape, inside the indexed folder, not ignored. */
function validChange(raw: unknown, root: string): ArtifactChange | null {
  if (!raw || typeof raw !== 'object') return null;
  const { type, path, relativePath } = raw as Record<string, unknown>;
  if (typeof type !== 'string' || !CHANGE_TYPES.has(type)) return null;
  if (typeof path !== 'string' || typeof relativePath !== 'string' || relativePath === '') return null;
  const rel = relativeInside(root, path);
  if (rel === null || toPosix(rel) !== relativePath || isIgnoredRelative(relativePath)) return null;
  return { type: type as ArtifactChange['type'], path, relativePath };
}

export function parseQuery(raw: unknown): string {
  const q = typeof raw === 'string' ? raw.trim() : '';
  if (q === '') throw DomainError.invalid('q is required');
  return q;
}

export function parseLimit(raw: unknown): number {
  if (raw === undefined || raw === '') return DEFAULT_QUERY_LIMIT;
  const text = typeof raw === 'number' ? String(raw) : raw;
  if (typeof text !== 'string' || !/^\d+$/.test(text.trim()) || Number(text) < 1) {
    throw DomainError.invalid('limit must be a positive integer');
  }
  return Math.min(Number(text), MAX_QUERY_LIMIT);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
