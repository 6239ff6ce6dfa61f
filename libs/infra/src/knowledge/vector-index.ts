/**
 * In-process vector index of knowledge bases (docs/api/knowledge.md, "Design note (vectors without
 * pgvector)"): each base's unit vectors of one length in one Float32Array, loaded from the database
 * on first use and scanned exactly in JS. The scores are the ones the SQL scan computes: `real`
 * values multiplied as doubles (exact) and summed in order, ties broken by chunk id; so results do
 * not change, only the time (no row decoding, no per-row SQL function calls).
 *
 * Correctness across replicas: each base carries a `chunk_version` bumped by every chunk write;
 * a search reads it (one indexed row) and reloads a matrix whose version differs. A memory cap
 * bounds what is held: the least recently used matrices are dropped, and a base too large for the
 * cap on its own answers `null` (the caller scans in SQL).
 */

/** What a chunk id (a 36-character string) costs in the heap, about. */
const ID_BYTES = 100;

/** One base's vectors of one length: chunk ids (sorted) and their vectors, row after row. */
export class VectorMatrix {
  readonly count: number;
  private constructor(
    readonly dims: number,
    readonly ids: string[],
    readonly data: Float32Array,
  ) {
    this.count = ids.length;
  }

  /** Rows of the given length only (others are of another model); `real` values kept as float32. */
  static from(dims: number, rows: Array<{ id: string; vector: ArrayLike<number> }>): VectorMatrix {
    const kept = rows.filter((r) => r.vector.length === dims);
    const data = new Float32Array(kept.length * dims);
    kept.forEach((r, i) => data.set(r.vector, i * dims));
    return new VectorMatrix(
      dims,
      kept.map((r) => r.id),
      data,
    );
  }

  /** Bytes held (vectors and an estimate for the ids). */
  get bytes(): number {
    return VectorMatrix.bytesFor(this.count, this.dims);
  }

  /** Bytes a matrix of `count` rows of `dims` values holds. */
  static bytesFor(count: number, dims: number): number {
    return count * (dims * 4 + ID_BYTES);
  }

  /**
   * The `limit` rows of highest dot product with `query`, best first, equal scores by id
   * (ascending, as Postgres orders uuids: their lower-case text).
   */
  top(query: ArrayLike<number>, limit: number): Array<{ id: string; score: number }> {
    const dims = this.dims;
    if (query.length !== dims || limit <= 0) return [];
    // The query as the SQL sees it: cast to real[].
    const q = Float64Array.from(query, (x) => Math.fround(x));
    const data = this.data;
    const ids = this.ids;
    // The best so far, worst last: a short sorted array (limit is at most a few hundred).
    const best: Array<{ index: number; score: number }> = [];
    const worse = (a: { index: number; score: number }, score: number, index: number): boolean =>
      score < a.score || (score === a.score && ids[index]! > ids[a.index]!);
    for (let i = 0, o = 0; i < this.count; i++, o += dims) {
      let s = 0;
      for (let d = 0; d < dims; d++) s += data[o + d]! * q[d]!;
      if (best.length === limit && worse(best[limit - 1]!, s, i)) continue;
      let at = best.length;
      while (at > 0 && !worse(best[at - 1]!, s, i)) at--;
      best.splice(at, 0, { index: i, score: s });
      if (best.length > limit) best.pop();
    }
    return best.map((b) => ({ id: ids[b.index]!, score: b.score }));
  }
}

interface Entry {
  version: string;
  matrix: VectorMatrix;
  used: number;
}

/** The matrices of several bases, by base, version and vector length, within a memory cap. */
export class VectorIndexCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<VectorMatrix | null>>();
  private tick = 0;

  /**
   * @param maxBytes the cap (0: never hold any; every search scans in SQL)
   * @param load reads a base's chunk ids and vectors of one length, or answers null without
   *   reading them when they would take more than the bytes it is given
   */
  constructor(
    readonly maxBytes: number,
    private readonly load: (kbId: string, dims: number, maxBytes: number) => Promise<VectorMatrix | null>,
  ) {}

  /** Bytes held now. */
  get heldBytes(): number {
    let sum = 0;
    for (const e of this.entries.values()) sum += e.matrix.bytes;
    return sum;
  }

  /**
   * The matrix of `kbId` at `version` (loaded when missing or of another version), or null when
   * it does not fit under the cap (then it is not tried again until its version changes).
   */
  async matrix(kbId: string, version: string, dims: number): Promise<VectorMatrix | null> {
    if (this.maxBytes <= 0) return null;
    const key = `${kbId}:${dims}`;
    const entry = this.entries.get(key);
    if (entry && entry.version === version) {
      entry.used = ++this.tick;
      return entry.matrix;
    }
    if (this.tooLarge.get(key) === version) return null;
    const loadKey = `${key}:${version}`;
    let pending = this.loading.get(loadKey);
    if (!pending) {
      pending = this.loadEntry(key, kbId, version, dims).finally(() => this.loading.delete(loadKey));
      this.loading.set(loadKey, pending);
    }
    return pending;
  }

  /** Bases whose vectors exceeded the cap, at the version seen. */
  private readonly tooLarge = new Map<string, string>();

  private async loadEntry(key: string, kbId: string, version: string, dims: number): Promise<VectorMatrix | null> {
    const matrix = await this.load(kbId, dims, this.maxBytes);
    if (matrix === null || matrix.bytes > this.maxBytes) {
      this.entries.delete(key);
      this.tooLarge.set(key, version);
      return null;
    }
    this.tooLarge.delete(key);
    this.entries.set(key, { version, matrix, used: ++this.tick });
    // Least recently used first out, the new one kept.
    while (this.heldBytes > this.maxBytes) {
      let oldest: [string, Entry] | undefined;
      for (const e of this.entries) if (e[0] !== key && (!oldest || e[1].used < oldest[1].used)) oldest = e;
      if (!oldest) break;
      this.entries.delete(oldest[0]);
    }
    return matrix;
  }

  /** Forgets a base (deleted). */
  forget(kbId: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(`${kbId}:`)) this.entries.delete(key);
    for (const key of [...this.tooLarge.keys()]) if (key.startsWith(`${kbId}:`)) this.tooLarge.delete(key);
  }
}
