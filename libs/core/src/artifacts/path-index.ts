import fuzzysort, { type Prepared, type SnapshotKey } from 'fuzzysort';
import type { TreeEntryType } from '../ports/file-watcher.port.js';
import type { ArtifactChange } from './watch-events.js';

/** A search item (docs/api.md, "Workspaces and files"). */
export interface IndexedPath {
  name: string;
  type: TreeEntryType;
  /** Absolute path. */
  path: string;
  /** Inside the space's folder, forward slashes. */
  relativePath: string;
}

export interface SearchHit {
  item: IndexedPath;
  /** fuzzysort's score: 1 exact, 0.5 good, towards 0 weak. */
  score: number;
}

interface Entry extends IndexedPath {
  dead: boolean;
  /** Prepared target while the entry waits in the tail, made at its first search (segments prepare their own). */
  prepared: Prepared | null;
}

interface Segment {
  entries: Entry[];
  snapshot: SnapshotKey<Entry>;
  dead: number;
}

export interface PathIndexOptions {
  /** Most paths held; further additions are refused and mark the index truncated. */
  limit: number;
  /** Paths per immutable search snapshot (see the class comment). */
  segmentSize?: number;
}

export const DEFAULT_SEGMENT_SIZE = 8_192;

/**
 * The paths of one space, searchable with fuzzysort, kept current change by change.
 *
 * fuzzysort is fastest on immutable snapshots, which prepare their targets in small slices
 * in the background; one snapshot of everything would have to be rebuilt (hundreds of ms for
 * 100,000 paths) after every change. So paths live in sealed segments of `segmentSize`, each
 * with its own snapshot, plus a small mutable tail searched with prepared targets. Removing
 * a path marks it dead (filtered out of results); a segment more than a quarter dead goes back
 * to the tail. A query searches every segment and the tail and merges the best hits.
 */
export class PathIndex {
  private readonly entries = new Map<string, Entry>();
  /** Relative path of a folder ('' for the root) → relative paths of its indexed children. */
  private readonly children = new Map<string, Set<string>>();
  private readonly segmentOf = new Map<Entry, Segment>();
  private segments: Segment[] = [];
  private tail = new Set<Entry>();
  private readonly limit: number;
  private readonly segmentSize: number;
  /** Paths were left out because of the limit. */
  truncated = false;

  constructor(options: PathIndexOptions) {
    this.limit = options.limit;
    this.segmentSize = Math.max(16, options.segmentSize ?? DEFAULT_SEGMENT_SIZE);
  }

  get size(): number {
    return this.entries.size;
  }

  has(relativePath: string): boolean {
    return this.entries.has(relativePath);
  }

  get(relativePath: string): IndexedPath | undefined {
    const entry = this.entries.get(relativePath);
    return entry ? toItem(entry) : undefined;
  }

  /** Adds (or retypes) a path; false when the index is full (it is then marked truncated). */
  add(item: IndexedPath): boolean {
    const existing = this.entries.get(item.relativePath);
    if (existing) {
      if (existing.type === item.type && existing.path === item.path) return true;
      this.remove(item.relativePath);
    }
    if (this.entries.size >= this.limit) {
      this.truncated = true;
      return false;
    }
    const entry: Entry = {
      name: item.name,
      type: item.type,
      path: item.path,
      relativePath: item.relativePath,
      dead: false,
      prepared: null,
    };
    this.entries.set(entry.relativePath, entry);
    const parent = parentOf(entry.relativePath);
    let siblings = this.children.get(parent);
    if (!siblings) this.children.set(parent, (siblings = new Set()));
    siblings.add(entry.relativePath);
    this.tail.add(entry);
    if (this.tail.size >= this.segmentSize) this.seal();
    return true;
  }

  /** Removes a path and, for a folder, everything indexed below it. Returns how many went. */
  remove(relativePath: string): number {
    let removed = 0;
    const entry = this.entries.get(relativePath);
    if (entry) {
      this.detach(entry);
      removed++;
    }
    const below = this.children.get(relativePath);
    if (below) {
      this.children.delete(relativePath);
      for (const child of below) removed += this.remove(child);
    }
    return removed;
  }

  /** Applies one change event. */
  apply(change: ArtifactChange): void {
    const name = nameOf(change.relativePath);
    switch (change.type) {
      case 'add':
        this.add({ name, type: 'file', path: change.path, relativePath: change.relativePath });
        return;
      case 'addDir':
        this.add({ name, type: 'folder', path: change.path, relativePath: change.relativePath });
        return;
      case 'change':
        if (!this.entries.has(change.relativePath)) {
          this.add({ name, type: 'file', path: change.path, relativePath: change.relativePath });
        }
        return;
      case 'unlink':
      case 'unlinkDir':
        this.remove(change.relativePath);
        return;
    }
  }

  /** The best `limit` matches of `query` against relative paths, best first. */
  search(query: string, limit: number): SearchHit[] {
    const q = query.trim();
    if (q === '' || limit <= 0) return [];
    const hits: SearchHit[] = [];
    for (const segment of this.segments) {
      const results = fuzzysort.go(q, segment.snapshot, { limit: limit + segment.dead, threshold: 0 });
      let taken = 0;
      for (const result of results) {
        if (result.obj.dead) continue;
        hits.push({ item: result.obj, score: result.score });
        if (++taken >= limit) break;
      }
    }
    if (this.tail.size > 0) {
      const tail = [...this.tail];
      for (const entry of tail) entry.prepared ??= fuzzysort.prepare(entry.relativePath);
      for (const result of fuzzysort.go(q, tail, { key: 'prepared', limit, threshold: 0 })) {
        hits.push({ item: result.obj, score: result.score });
      }
    }
    hits.sort(compareHits);
    return hits.slice(0, limit).map((hit) => ({ item: toItem(hit.item), score: hit.score }));
  }

  private detach(entry: Entry): void {
    this.entries.delete(entry.relativePath);
    this.children.get(parentOf(entry.relativePath))?.delete(entry.relativePath);
    entry.dead = true;
    if (this.tail.delete(entry)) return;
    const segment = this.segmentOf.get(entry);
    if (!segment) return;
    this.segmentOf.delete(entry);
    segment.dead++;
    if (segment.dead * 4 > segment.entries.length) this.dissolve(segment);
  }

  /** Seals the tail into a segment with its own snapshot. */
  private seal(): void {
    const entries = [...this.tail];
    this.tail = new Set();
    const segment: Segment = { entries, snapshot: fuzzysort.snapshot(entries, { key: 'relativePath' }), dead: 0 };
    for (const entry of entries) {
      entry.prepared = null;
      this.segmentOf.set(entry, segment);
    }
    this.segments.push(segment);
  }

  /** Moves a segment's live entries back to the tail (too many dead ones in it). */
  private dissolve(segment: Segment): void {
    this.segments = this.segments.filter((s) => s !== segment);
    for (const entry of segment.entries) {
      if (entry.dead) continue;
      this.segmentOf.delete(entry);
      this.tail.add(entry);
    }
    if (this.tail.size >= this.segmentSize) this.seal();
  }
}

function toItem(entry: IndexedPath): IndexedPath {
  return { name: entry.name, type: entry.type, path: entry.path, relativePath: entry.relativePath };
}

function parentOf(relativePath: string): string {
  const slash = relativePath.lastIndexOf('/');
  return slash < 0 ? '' : relativePath.slice(0, slash);
}

function nameOf(relativePath: string): string {
  return relativePath.slice(relativePath.lastIndexOf('/') + 1);
}

/** Best score first; equal scores: shorter path, then alphabetical, so results are stable. */
function compareHits(a: SearchHit, b: SearchHit): number {
  if (a.score !== b.score) return b.score - a.score;
  const pa = a.item.relativePath;
  const pb = b.item.relativePath;
  if (pa.length !== pb.length) return pa.length - pb.length;
  return pa < pb ? -1 : pa > pb ? 1 : 0;
}
