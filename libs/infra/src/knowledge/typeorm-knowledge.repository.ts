import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { KnowledgeStatsDto } from '#contracts/knowledge.js';
import {
  type IndexOutcome,
  type IngestRecord,
  type KeywordHit,
  type KnowledgeBaseChanges,
  type KnowledgeBaseRecord,
  KnowledgeRepository,
  type LinkRecord,
  type ChunkRow,
  type NewSource,
  type SourceRecord,
} from '#core/knowledge/knowledge.ports.js';
import { returningRows } from '../database/returning-rows.js';
import { keywordPlan, unquoteLexeme } from './keyword-weights.js';
import { VectorIndexCache, VectorMatrix } from './vector-index.js';

type Row = Record<string, unknown>;

/** The in-memory vector index's default cap (docs/api/knowledge.md, "Design note (vectors without pgvector)"). */
export const DEFAULT_VECTOR_CACHE_BYTES = 512 * 1024 * 1024;
/** Vectors read per statement when a base's index is loaded. */
const VECTOR_LOAD_BATCH = 20_000;

/** Keyword search ranks at most this many matching chunks (docs/api/knowledge.md, "Search"). */
const KEYWORD_CANDIDATES = 2000;
/** A batch's end analyses the chunk table (embedded) when its chunks changed by this share since the last time. */
const ANALYZE_CHANGE = 0.1;

/**
 * Chunks written (inserted: positive, deleted: negative) by one transaction: how many, and how
 * many hold each lexeme, to be added to the base's kept counts (`knowledge_lexeme`,
 * `knowledge_base.chunk_count`; KnowledgeLexemeCounts1766500000000) in the same transaction.
 */
class ChunkCounts {
  chunks = 0;
  readonly lexemes = new Map<string, number>();

  /** Adds the rows of a `countedChunks` statement, `sign` 1 for chunks inserted, -1 for chunks deleted. */
  add(rows: Row[], sign: 1 | -1): void {
    for (const r of rows) {
      const n = sign * Number(r.n);
      if (r.lexeme === null) this.chunks += n;
      else this.lexemes.set(r.lexeme as string, (this.lexemes.get(r.lexeme as string) ?? 0) + n);
    }
  }
}

/**
 * A statement inserting or deleting chunks `RETURNING tsv`, made to answer what it wrote: a row
 * with a null lexeme and the chunks written, then one per lexeme with the chunks holding it.
 */
const countedChunks = (statement: string): string => `WITH w AS (${statement})
  SELECT NULL::text AS lexeme, count(*)::int AS n FROM w
  UNION ALL
  SELECT l.lexeme, count(*)::int FROM w CROSS JOIN LATERAL unnest(tsvector_to_array(w.tsv)) AS l(lexeme) GROUP BY l.lexeme`;

const iso = (v: unknown): string => (v instanceof Date ? v : new Date(v as string)).toISOString();
const CHUNK_INSERT_BATCH = 500;

const KB_COLUMNS = `kb.*,
  COALESCE((SELECT array_agg(b.target_id ORDER BY b.created_at) FROM knowledge_binding b WHERE b.kb_id = kb.id AND b.kind = 'space'), '{}') AS space_ids,
  COALESCE((SELECT array_agg(b.target_id ORDER BY b.created_at) FROM knowledge_binding b WHERE b.kb_id = kb.id AND b.kind = 'app'), '{}') AS app_ids`;

/** A text[] as the driver answers it (a list; a '{…}' literal through some paths). */
function textArray(v: unknown): string[] {
  if (Array.isArray(v)) return v as string[];
  if (typeof v === 'string' && v.startsWith('{')) {
    const inner = v.slice(1, -1);
    return inner === '' ? [] : inner.split(',').map((s) => s.replace(/^"|"$/g, ''));
  }
  return [];
}

/** A real[] as the driver answers it (numbers; a '{…}' literal through some paths). */
function realArray(v: unknown): number[] {
  if (Array.isArray(v)) return v.map(Number);
  if (typeof v === 'string' && v.startsWith('{')) return v.slice(1, -1).split(',').map(Number);
  return [];
}

const toKb = (r: Row): KnowledgeBaseRecord => ({
  id: r.id as string,
  name: r.name as string,
  icon: (r.icon as string | null) ?? null,
  description: (r.description as string | null) ?? null,
  status: r.status as KnowledgeBaseRecord['status'],
  isDefault: r.is_default as boolean,
  embedding: (r.embedding as KnowledgeBaseRecord['embedding']) ?? null,
  embeddingError: (r.embedding_error as string | null) ?? null,
  generation: Number(r.generation),
  lastIngestAt: r.last_ingest_at ? iso(r.last_ingest_at) : null,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  spaceIds: textArray(r.space_ids),
  appIds: textArray(r.app_ids),
});

const toSource = (r: Row): SourceRecord => ({
  id: r.id as string,
  kbId: r.kb_id as string,
  relPath: r.rel_path as string,
  name: r.name as string,
  origin: r.origin as SourceRecord['origin'],
  size: Number(r.size),
  contentHash: r.content_hash as string,
  indexedHash: (r.indexed_hash as string | null) ?? null,
  state: r.state as SourceRecord['state'],
  error: (r.error as string | null) ?? null,
  embeddingKey: (r.embedding_key as string | null) ?? null,
});

const toHit = (r: Row): KeywordHit => ({
  chunkId: r.id as string,
  kbId: r.kb_id as string,
  sourceName: r.name as string,
  sourcePath: r.rel_path as string,
  heading: (r.heading as string | null) ?? null,
  text: r.text as string,
  score: Number(r.score),
});

const toLink = (r: Row): LinkRecord => ({
  id: r.id as string,
  kbId: r.kb_id as string,
  spaceId: r.space_id as string,
  path: r.path as string,
  label: (r.label as string | null) ?? null,
  state: r.state as LinkRecord['state'],
  error: (r.error as string | null) ?? null,
  createdAt: iso(r.created_at),
});

const toIngest = (r: Row): IngestRecord => ({
  kbId: r.kb_id as string,
  batchId: r.batch_id as string,
  total: Number(r.total),
  completed: Number(r.completed),
  ...(r.current ? { current: r.current as string } : {}),
  phase: r.phase as IngestRecord['phase'],
  errors: (typeof r.errors === 'string' ? JSON.parse(r.errors) : r.errors) as IngestRecord['errors'],
  waiting: textArray(r.waiting),
});

/** Knowledge bases, sources, chunks and ingestion status in Postgres (either mode), with SQL. */
export class TypeormKnowledgeRepository extends KnowledgeRepository {
  private readonly vectors: VectorIndexCache;

  /**
   * @param vectorCacheBytes the in-memory vector index's cap (SVC_KB_VECTOR_CACHE_MB; 0: always scan in SQL)
   * @param analyzeAfterBatch whether a batch's end analyses the chunk table when it has grown or
   *   shrunk (the embedded database, which runs no autovacuum; see markIngested)
   */
  constructor(
    private readonly ds: DataSource,
    vectorCacheBytes = DEFAULT_VECTOR_CACHE_BYTES,
    private readonly analyzeAfterBatch = false,
  ) {
    super();
    this.vectors = new VectorIndexCache(vectorCacheBytes, (kbId, dims, maxBytes) =>
      this.loadVectors(kbId, dims, maxBytes),
    );
  }

  async create(input: { id: string; name: string; icon: string | null; description: string | null }) {
    await this.ds.query(`INSERT INTO knowledge_base (id, name, icon, description) VALUES ($1, $2, $3, $4)`, [
      input.id,
      input.name,
      input.icon,
      input.description,
    ]);
    return (await this.get(input.id))!;
  }

  async list(): Promise<KnowledgeBaseRecord[]> {
    const rows = (await this.ds.query(
      `SELECT ${KB_COLUMNS} FROM knowledge_base kb ORDER BY kb.created_at, kb.id`,
    )) as Row[];
    return rows.map(toKb);
  }

  async get(kbId: string): Promise<KnowledgeBaseRecord | null> {
    if (!/^[0-9a-f-]{36}$/i.test(kbId)) return null;
    const rows = (await this.ds.query(`SELECT ${KB_COLUMNS} FROM knowledge_base kb WHERE kb.id = $1`, [kbId])) as Row[];
    return rows[0] ? toKb(rows[0]) : null;
  }

  async update(kbId: string, changes: KnowledgeBaseChanges): Promise<KnowledgeBaseRecord | null> {
    const sets: string[] = [];
    const params: unknown[] = [kbId];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.icon !== undefined) set('icon', changes.icon);
    if (changes.description !== undefined) set('description', changes.description);
    if (changes.status !== undefined) set('status', changes.status);
    if (changes.embedding !== undefined)
      set('embedding', changes.embedding === null ? null : JSON.stringify(changes.embedding));
    if (changes.embeddingError !== undefined) set('embedding_error', changes.embeddingError);
    sets.push('updated_at = now()');
    await this.ds.query(`UPDATE knowledge_base SET ${sets.join(', ')} WHERE id = $1`, params);
    return this.get(kbId);
  }

  async delete(kbId: string): Promise<boolean> {
    if (!/^[0-9a-f-]{36}$/i.test(kbId)) return false;
    return this.ds.transaction(async (m) => {
      // Chunks first (by source), so the cascade has little left to do.
      await m.query(`DELETE FROM knowledge_chunk WHERE kb_id = $1`, [kbId]);
      const rows = returningRows(await m.query(`DELETE FROM knowledge_base WHERE id = $1 RETURNING id`, [kbId]));
      this.vectors.forget(kbId);
      return rows.length > 0;
    });
  }

  async setDefault(kbId: string | null): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query(`UPDATE knowledge_base SET is_default = false, updated_at = now() WHERE is_default`);
      if (kbId !== null)
        await m.query(`UPDATE knowledge_base SET is_default = true, updated_at = now() WHERE id = $1`, [kbId]);
    });
  }

  async bind(kbId: string, kind: 'space' | 'app', targetId: string): Promise<void> {
    await this.ds.query(
      `INSERT INTO knowledge_binding (kb_id, kind, target_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [kbId, kind, targetId],
    );
  }

  async unbind(kbId: string, kind: 'space' | 'app', targetId: string): Promise<void> {
    await this.ds.query(`DELETE FROM knowledge_binding WHERE kb_id = $1 AND kind = $2 AND target_id = $3`, [
      kbId,
      kind,
      targetId,
    ]);
  }

  async boundTo(kind: 'space' | 'app', targetId: string): Promise<KnowledgeBaseRecord[]> {
    const rows = (await this.ds.query(
      `SELECT ${KB_COLUMNS} FROM knowledge_base kb
        WHERE EXISTS (SELECT 1 FROM knowledge_binding b WHERE b.kb_id = kb.id AND b.kind = $1 AND b.target_id = $2)
        ORDER BY kb.created_at, kb.id`,
      [kind, targetId],
    )) as Row[];
    return rows.map(toKb);
  }

  override async turnCandidates(
    spaceId: string,
    appId: string | null,
    withDefault: boolean,
  ): Promise<KnowledgeBaseRecord[]> {
    const rows = (await this.ds.query(
      `SELECT ${KB_COLUMNS} FROM (
         SELECT kb.*,
                CASE WHEN EXISTS (SELECT 1 FROM knowledge_binding b WHERE b.kb_id = kb.id AND b.kind = 'space' AND b.target_id = $1) THEN 0
                     WHEN EXISTS (SELECT 1 FROM knowledge_binding b WHERE b.kb_id = kb.id AND b.kind = 'app' AND b.target_id = $2) THEN 1
                     WHEN $3::boolean AND kb.is_default THEN 2 END AS turn_group
           FROM knowledge_base kb) kb
        WHERE kb.turn_group IS NOT NULL
        ORDER BY kb.turn_group, kb.created_at, kb.id`,
      [spaceId, appId, withDefault],
    )) as Row[];
    return rows.map(toKb);
  }

  /** The chunk total is the base's kept count (written with the chunks), not a count of 100,000 rows. */
  async stats(kbId: string): Promise<KnowledgeStatsDto> {
    const [r] = (await this.ds.query(
      `SELECT
         (SELECT count(*)::int FROM knowledge_source WHERE kb_id = $1) AS raw_count,
         (SELECT count(*)::int FROM knowledge_source WHERE kb_id = $1 AND state IN ('learned', 'no-text')) AS indexed_count,
         (SELECT COALESCE(sum(size), 0)::bigint FROM knowledge_source WHERE kb_id = $1) AS raw_size,
         kb.chunk_count,
         kb.last_ingest_at
       FROM knowledge_base kb WHERE kb.id = $1`,
      [kbId],
    )) as Row[];
    // A base deleted meanwhile has no row: empty, as the counts of nothing are.
    if (!r) return { rawFileCount: 0, indexedCount: 0, chunkCount: 0, rawSizeBytes: 0 };
    return {
      rawFileCount: Number(r.raw_count),
      indexedCount: Number(r.indexed_count),
      chunkCount: Number(r.chunk_count),
      rawSizeBytes: Number(r.raw_size),
      ...(r.last_ingest_at ? { lastIngestAt: iso(r.last_ingest_at) } : {}),
    };
  }

  async upsertSource(s: NewSource): Promise<SourceRecord> {
    const rows = returningRows(
      await this.ds.query(
        `INSERT INTO knowledge_source (id, kb_id, rel_path, name, origin, size, content_hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (kb_id, rel_path) DO UPDATE SET
           size = EXCLUDED.size, origin = EXCLUDED.origin, content_hash = EXCLUDED.content_hash, updated_at = now(),
           state = CASE WHEN knowledge_source.content_hash = EXCLUDED.content_hash THEN knowledge_source.state ELSE 'pending' END,
           error = CASE WHEN knowledge_source.content_hash = EXCLUDED.content_hash THEN knowledge_source.error ELSE NULL END
         RETURNING *`,
        [randomUUID(), s.kbId, s.relPath, s.name, s.origin, s.size, s.contentHash],
      ),
    ) as Row[];
    return toSource(rows[0]!);
  }

  async listSources(kbId: string): Promise<SourceRecord[]> {
    const rows = (await this.ds.query(`SELECT * FROM knowledge_source WHERE kb_id = $1 ORDER BY rel_path`, [
      kbId,
    ])) as Row[];
    return rows.map(toSource);
  }

  async getSource(sourceId: string): Promise<SourceRecord | null> {
    const rows = (await this.ds.query(`SELECT * FROM knowledge_source WHERE id = $1`, [sourceId])) as Row[];
    return rows[0] ? toSource(rows[0]) : null;
  }

  async deleteSource(kbId: string, relPath: string): Promise<SourceRecord | null> {
    return this.ds.transaction(async (m) => {
      // Held first, as indexSource holds it: no chunks of it are written meanwhile.
      const [held] = (await m.query(`SELECT id FROM knowledge_source WHERE kb_id = $1 AND rel_path = $2 FOR UPDATE`, [
        kbId,
        relPath,
      ])) as Row[];
      if (!held) return null;
      // Its chunks deleted here rather than by the cascade, to count what goes.
      const counts = new ChunkCounts();
      counts.add(
        (await m.query(countedChunks(`DELETE FROM knowledge_chunk WHERE source_id = $1 RETURNING tsv`), [
          held.id,
        ])) as Row[],
        -1,
      );
      const rows = returningRows(
        await m.query(`DELETE FROM knowledge_source WHERE id = $1 RETURNING *`, [held.id]),
      ) as Row[];
      await this.applyCounts(m, kbId, counts);
      return toSource(rows[0]!);
    });
  }

  async resetSources(kbId: string): Promise<number> {
    return this.ds.transaction(async (m) => {
      const counts = new ChunkCounts();
      counts.add(
        (await m.query(countedChunks(`DELETE FROM knowledge_chunk WHERE kb_id = $1 RETURNING tsv`), [kbId])) as Row[],
        -1,
      );
      await m.query(
        `UPDATE knowledge_source SET state = 'pending', error = NULL, indexed_hash = NULL, updated_at = now() WHERE kb_id = $1`,
        [kbId],
      );
      await this.applyCounts(m, kbId, counts);
      const rows = returningRows(
        await m.query(
          `UPDATE knowledge_base SET generation = generation + 1, updated_at = now() WHERE id = $1 RETURNING generation`,
          [kbId],
        ),
      ) as Row[];
      return Number(rows[0]?.generation ?? 0);
    });
  }

  async indexSource(sourceId: string, contentHash: string, outcome: IndexOutcome): Promise<boolean> {
    return this.ds.transaction(async (m) => {
      const rows = (await m.query(`SELECT kb_id, content_hash FROM knowledge_source WHERE id = $1 FOR UPDATE`, [
        sourceId,
      ])) as Row[];
      const row = rows[0];
      if (!row || row.content_hash !== contentHash) return false;
      const kbId = row.kb_id as string;
      const counts = new ChunkCounts();
      counts.add(
        (await m.query(countedChunks(`DELETE FROM knowledge_chunk WHERE source_id = $1 RETURNING tsv`), [
          sourceId,
        ])) as Row[],
        -1,
      );
      if (outcome.state === 'learned') await this.insertChunks(m, kbId, sourceId, outcome.chunks, counts);
      await this.applyCounts(m, kbId, counts);
      await m.query(
        `UPDATE knowledge_source SET state = $2, error = $3, indexed_hash = $4, embedding_key = $5, updated_at = now()
          WHERE id = $1`,
        [
          sourceId,
          outcome.state,
          outcome.state === 'failed' ? outcome.error : null,
          contentHash,
          outcome.state === 'learned' ? outcome.embeddingKey : null,
        ],
      );
      return true;
    });
  }

  private async insertChunks(
    m: EntityManager,
    kbId: string,
    sourceId: string,
    chunks: ChunkRow[],
    counts: ChunkCounts,
  ): Promise<void> {
    for (let start = 0; start < chunks.length; start += CHUNK_INSERT_BATCH) {
      const batch = chunks.slice(start, start + CHUNK_INSERT_BATCH);
      // Vectors travel as text literals ('{0.1,…}'): unnest cannot take an array of arrays of unequal presence.
      const written = (await m.query(
        countedChunks(`INSERT INTO knowledge_chunk (id, kb_id, source_id, ord, heading, text, tsv, embedding)
         SELECT t.id, $1, $2, t.ord, t.heading, t.text, t.tsv::tsvector, t.embedding::real[]
           FROM unnest($3::uuid[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[])
                AS t(id, ord, heading, text, tsv, embedding)
         RETURNING tsv`),
        [
          kbId,
          sourceId,
          batch.map(() => randomUUID()),
          batch.map((_, i) => start + i),
          batch.map((c) => c.heading),
          batch.map((c) => c.text.replace(/\0/g, '')),
          batch.map((c) => c.tsv),
          batch.map((c) => (c.embedding ? `{${c.embedding.join(',')}}` : null)),
        ],
      )) as Row[];
      counts.add(written, 1);
    }
  }

  /**
   * Adds the chunks a transaction wrote to the base's kept counts and bumps its chunk version (the
   * vector index reloads on a change). The base's row is taken first: the transactions writing one
   * base's counts take turns from there to their commit, so none is lost to another (two replicas
   * ingesting into one base) and their lexeme rows cannot deadlock. A count never goes below 0;
   * a lexeme no chunk holds any more loses its row.
   */
  private async applyCounts(m: EntityManager, kbId: string, counts: ChunkCounts): Promise<void> {
    await m.query(
      `UPDATE knowledge_base SET chunk_version = chunk_version + 1, chunk_count = greatest(chunk_count + $2, 0)
        WHERE id = $1`,
      [kbId, counts.chunks],
    );
    const changed = [...counts.lexemes].filter(([, n]) => n !== 0);
    if (changed.length === 0) return;
    await m.query(
      `INSERT INTO knowledge_lexeme (kb_id, lexeme, chunks)
       SELECT $1, t.lexeme, t.n FROM unnest($2::text[], $3::int[]) AS t(lexeme, n)
       ON CONFLICT (kb_id, lexeme) DO UPDATE SET chunks = knowledge_lexeme.chunks + EXCLUDED.chunks`,
      [kbId, changed.map(([l]) => l), changed.map(([, n]) => n)],
    );
    const fewer = changed.filter(([, n]) => n < 0).map(([l]) => l);
    if (fewer.length > 0)
      await m.query(`DELETE FROM knowledge_lexeme WHERE kb_id = $1 AND lexeme = ANY($2::text[]) AND chunks <= 0`, [
        kbId,
        fewer,
      ]);
  }

  async markIngested(kbId: string): Promise<void> {
    await this.ds.query(`UPDATE knowledge_base SET last_ingest_at = now() WHERE id = $1`, [kbId]);
    if (this.analyzeAfterBatch) await this.analyzeChunksIfChanged();
  }

  /**
   * `ANALYZE knowledge_chunk` when the table holds more than ANALYZE_CHANGE (and 500 chunks) more or
   * fewer chunks than when last analysed (autovacuum's rule, which PGlite lacks: without statistics
   * the planner guesses how many chunks a word matches and may read a whole posting list, or the
   * whole table, where a few rows would do). The chunks now: the bases' kept counts.
   */
  private async analyzeChunksIfChanged(): Promise<void> {
    const [r] = (await this.ds.query(
      `SELECT greatest(c.reltuples, 0)::float8 AS analysed,
              (SELECT coalesce(sum(chunk_count), 0) FROM knowledge_base)::float8 AS chunks
         FROM pg_class c WHERE c.oid = 'knowledge_chunk'::regclass`,
    )) as Row[];
    const analysed = Number(r?.analysed ?? 0);
    if (Math.abs(Number(r?.chunks ?? 0) - analysed) > 500 + ANALYZE_CHANGE * analysed)
      await this.ds.query(`ANALYZE knowledge_chunk`);
  }

  async firstLines(kbId: string): Promise<Map<string, string>> {
    const rows = (await this.ds.query(
      `SELECT source_id, left(text, 400) AS text FROM knowledge_chunk WHERE kb_id = $1 AND ord = 0`,
      [kbId],
    )) as Row[];
    const out = new Map<string, string>();
    for (const r of rows) {
      const line = (r.text as string)
        .split('\n')
        .map((l) => l.trim())
        .find((l) => l !== '' && !l.startsWith('#') && /[\p{L}\p{N}]/u.test(l));
      if (line) out.set(r.source_id as string, line.length > 160 ? `${line.slice(0, 159)}…` : line);
    }
    return out;
  }

  /**
   * Keyword hits ranked by the weights of the query's words they hold (keyword-weights.ts: BM25's
   * inverse document frequency, from the chunks holding each word and the chunks searched, both
   * kept at write time: one indexed read), then by `ts_rank_cd` (how often and how close). The rank
   * is computed over a bounded candidate set, so a query whose words are in most of a large base
   * does not rank every chunk: every chunk holding one of the query's rare words (the rarest, whose
   * counts add up within KEYWORD_CANDIDATES), then chunks holding the other words in the order the
   * index finds them, only as many as may still make the hits when the rare words outweigh them
   * (docs/api/knowledge.md, "Search"). Text and source are read for the hits only.
   */
  async keywordSearch(kbIds: string[], tsquery: string, limit: number): Promise<KeywordHit[]> {
    // The literal is `'a' | 'b'` with lexemes free of spaces and `|` (lexemes.ts).
    const lexemes = tsquery.split(' | ');
    const words = lexemes.map(unquoteLexeme);
    const counted = (await this.ds.query(
      `SELECT coalesce((SELECT sum(x.chunks) FROM knowledge_lexeme x
                         WHERE x.kb_id = ANY($1::uuid[]) AND x.lexeme = t.l), 0)::int AS df,
              (SELECT coalesce(sum(kb.chunk_count), 0) FROM knowledge_base kb WHERE kb.id = ANY($1::uuid[]))::int AS n
         FROM unnest($2::text[]) WITH ORDINALITY AS t(l, o)
        ORDER BY t.o`,
      [kbIds, words],
    )) as Row[];
    const counts = counted.map((r) => Number(r.df));
    const plan = keywordPlan(lexemes, counts, Number(counted[0]?.n ?? 0), KEYWORD_CANDIDATES, limit);
    if (plan.rare.length === 0 && plan.others.length === 0) return [];
    const rows = (await this.ds.query(
      `WITH cand AS (
         (SELECT c.id, c.tsv FROM knowledge_chunk c
           WHERE c.kb_id = ANY($1::uuid[]) AND c.tsv @@ CAST($4 AS tsquery) LIMIT $7)
         UNION ALL
         (SELECT c.id, c.tsv FROM knowledge_chunk c
           WHERE c.kb_id = ANY($1::uuid[]) AND c.tsv @@ CAST($5 AS tsquery)
             AND (CAST($4 AS tsquery) IS NULL OR NOT c.tsv @@ CAST($4 AS tsquery))
           LIMIT $8)
       ),
       top AS (
         SELECT cand.id,
                (SELECT coalesce(sum(w.idf), 0) FROM unnest($2::text[], $3::float8[]) AS w(l, idf)
                  WHERE w.l = ANY(a.lexemes)) AS score,
                ts_rank_cd(cand.tsv, CAST($9 AS tsquery), 1) AS density
           FROM cand
           -- The chunk's lexemes read once (a tsv test per query word would unpack the tsvector each time;
           -- OFFSET 0 keeps the planner from folding the subquery into each word's test).
           CROSS JOIN LATERAL (SELECT tsvector_to_array(cand.tsv) AS lexemes OFFSET 0) a
          ORDER BY score DESC, density DESC, cand.id
          LIMIT $6
       )
       SELECT c.id, c.kb_id, c.heading, c.text, s.name, s.rel_path, top.score
         FROM top
         JOIN knowledge_chunk c ON c.id = top.id
         JOIN knowledge_source s ON s.id = c.source_id
        ORDER BY top.score DESC, top.density DESC, c.id`,
      [
        kbIds,
        words,
        plan.idf,
        plan.rare.length > 0 ? plan.rare.join(' | ') : null,
        plan.others.length > 0 ? plan.others.join(' | ') : null,
        limit,
        KEYWORD_CANDIDATES,
        plan.othersBudget,
        tsquery,
      ],
    )) as Row[];
    return rows.map(toHit);
  }

  /**
   * The chunks nearest to `vector` (cosine similarity of unit vectors: their dot product), from
   * the in-memory index (vector-index.ts) where the bases fit under its cap, else scanned in SQL;
   * both compute the same scores and order.
   */
  async vectorSearch(kbIds: string[], vector: number[], limit: number): Promise<KeywordHit[]> {
    const bases = (await this.ds.query(`SELECT id, chunk_version FROM knowledge_base WHERE id = ANY($1::uuid[])`, [
      kbIds,
    ])) as Row[];
    const scored: Array<{ id: string; score: number }> = [];
    for (const base of bases) {
      const matrix = await this.vectors.matrix(base.id as string, String(base.chunk_version), vector.length);
      if (!matrix) return this.scanVectors(kbIds, vector, limit);
      scored.push(...matrix.top(vector, limit));
    }
    scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const best = scored.slice(0, limit);
    if (best.length === 0) return [];
    const rows = (await this.ds.query(
      `SELECT c.id, c.kb_id, c.heading, c.text, s.name, s.rel_path
         FROM knowledge_chunk c
         JOIN knowledge_source s ON s.id = c.source_id
        WHERE c.id = ANY($1::uuid[])`,
      [best.map((b) => b.id)],
    )) as Row[];
    // A chunk gone since the version was read (a write racing this search): the exact scan answers instead.
    if (rows.length < best.length) return this.scanVectors(kbIds, vector, limit);
    const byId = new Map(rows.map((r) => [r.id as string, r]));
    return best.map((b) => toHit({ ...byId.get(b.id)!, score: b.score }));
  }

  /** The exact scan in SQL (bases over the index's cap), the same statement in both modes. */
  private async scanVectors(kbIds: string[], vector: number[], limit: number): Promise<KeywordHit[]> {
    const rows = (await this.ds.query(
      `SELECT c.id, c.kb_id, c.heading, c.text, s.name, s.rel_path,
              (SELECT sum(a::float8 * b::float8) FROM unnest(c.embedding, $2::real[]) AS v(a, b)) AS score
         FROM knowledge_chunk c
         JOIN knowledge_source s ON s.id = c.source_id
        WHERE c.kb_id = ANY($1::uuid[]) AND cardinality(c.embedding) = $3
        ORDER BY score DESC, c.id
        LIMIT $4`,
      [kbIds, `{${vector.join(',')}}`, vector.length, limit],
    )) as Row[];
    return rows.map(toHit);
  }

  /** A base's vectors of one length for the index, in batches by id; null (unread) when over `maxBytes`. */
  private async loadVectors(kbId: string, dims: number, maxBytes: number): Promise<VectorMatrix | null> {
    const [counted] = (await this.ds.query(
      `SELECT count(*)::int AS n FROM knowledge_chunk WHERE kb_id = $1 AND cardinality(embedding) = $2`,
      [kbId, dims],
    )) as Row[];
    if (VectorMatrix.bytesFor(Number(counted?.n ?? 0), dims) > maxBytes) return null;
    const rows: Array<{ id: string; vector: ArrayLike<number> }> = [];
    for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
      const batch = (await this.ds.query(
        `SELECT id, embedding FROM knowledge_chunk
          WHERE kb_id = $1 AND cardinality(embedding) = $2 AND id > $3
          ORDER BY id LIMIT $4`,
        [kbId, dims, after, VECTOR_LOAD_BATCH],
      )) as Row[];
      for (const r of batch) rows.push({ id: r.id as string, vector: realArray(r.embedding) });
      if (batch.length < VECTOR_LOAD_BATCH) break;
      after = batch[batch.length - 1]!.id as string;
    }
    return VectorMatrix.from(dims, rows);
  }

  async ingestStatus(kbId: string): Promise<IngestRecord | null> {
    const rows = (await this.ds.query(`SELECT * FROM knowledge_ingest WHERE kb_id = $1`, [kbId])) as Row[];
    return rows[0] ? toIngest(rows[0]) : null;
  }

  async createLink(link: { id: string; kbId: string; spaceId: string; path: string; label: string | null }) {
    await this.ds.query(`INSERT INTO knowledge_link (id, kb_id, space_id, path, label) VALUES ($1, $2, $3, $4, $5)`, [
      link.id,
      link.kbId,
      link.spaceId,
      link.path,
      link.label,
    ]);
    return (await this.getLink(link.id))!;
  }

  async getLink(linkId: string): Promise<LinkRecord | null> {
    if (!/^[0-9a-f-]{36}$/i.test(linkId)) return null;
    const rows = (await this.ds.query(`SELECT * FROM knowledge_link WHERE id = $1`, [linkId])) as Row[];
    return rows[0] ? toLink(rows[0]) : null;
  }

  async listLinks(filter: { kbId?: string; spaceId?: string }): Promise<LinkRecord[]> {
    const rows = (await this.ds.query(
      `SELECT * FROM knowledge_link WHERE ($1::uuid IS NULL OR kb_id = $1) AND ($2::text IS NULL OR space_id = $2)
        ORDER BY created_at, id`,
      [filter.kbId ?? null, filter.spaceId ?? null],
    )) as Row[];
    return rows.map(toLink);
  }

  async setLinkState(linkId: string, error: string | null): Promise<void> {
    await this.ds.query(`UPDATE knowledge_link SET state = $2, error = $3 WHERE id = $1`, [
      linkId,
      error === null ? 'active' : 'error',
      error,
    ]);
  }

  async deleteLink(linkId: string): Promise<boolean> {
    if (!/^[0-9a-f-]{36}$/i.test(linkId)) return false;
    return (
      returningRows(await this.ds.query(`DELETE FROM knowledge_link WHERE id = $1 RETURNING id`, [linkId])).length > 0
    );
  }

  async runningBatches(): Promise<IngestRecord[]> {
    const rows = (await this.ds.query(
      `SELECT * FROM knowledge_ingest WHERE phase = 'running' AND cardinality(waiting) > 0`,
    )) as Row[];
    return rows.map(toIngest);
  }

  async startBatch(
    kbId: string,
    batchId: string,
    sourceIds: string[],
    announce?: (status: IngestRecord) => Promise<void>,
  ): Promise<{ status: IngestRecord; added: string[] }> {
    return this.ds.transaction(async (m) => {
      await m.query(`INSERT INTO knowledge_ingest (kb_id, batch_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
        kbId,
        batchId,
      ]);
      const [row] = (await m.query(`SELECT * FROM knowledge_ingest WHERE kb_id = $1 FOR UPDATE`, [kbId])) as Row[];
      const current = toIngest(row!);
      let next: Row[];
      let added: string[];
      if (current.phase === 'running' && current.waiting.length > 0) {
        const waiting = new Set(current.waiting);
        added = sourceIds.filter((id) => !waiting.has(id));
        next = returningRows(
          await m.query(
            `UPDATE knowledge_ingest SET waiting = waiting || $2::text[], total = total + $3, updated_at = now()
              WHERE kb_id = $1 RETURNING *`,
            [kbId, added, added.length],
          ),
        ) as Row[];
      } else {
        added = sourceIds;
        next = returningRows(
          await m.query(
            `UPDATE knowledge_ingest SET batch_id = $2, waiting = $3::text[], total = $4, completed = 0, current = NULL,
                    phase = $5, errors = '[]', updated_at = now()
              WHERE kb_id = $1 RETURNING *`,
            [kbId, batchId, sourceIds, sourceIds.length, sourceIds.length > 0 ? 'running' : 'done'],
          ),
        ) as Row[];
      }
      const status = toIngest(next[0]!);
      // Announced while the row is held, like finishItem's counts.
      await announce?.(status);
      return { status, added };
    });
  }

  async finishItem(
    kbId: string,
    batchId: string,
    sourceId: string,
    current: string,
    error: { file: string; message: string } | null,
    announce: (status: IngestRecord) => Promise<void>,
  ): Promise<IngestRecord | null> {
    return this.ds.transaction(async (m) => {
      const rows = returningRows(
        await m.query(
          `UPDATE knowledge_ingest SET
              waiting = array_remove(waiting, $3),
              completed = completed + 1,
              current = $4,
              errors = CASE WHEN $5::jsonb IS NULL THEN errors ELSE errors || $5::jsonb END,
              phase = CASE WHEN cardinality(array_remove(waiting, $3)) = 0 THEN 'done' ELSE 'running' END,
              updated_at = now()
            WHERE kb_id = $1 AND batch_id = $2 AND $3 = ANY(waiting)
            RETURNING *`,
          [kbId, batchId, sourceId, current, error === null ? null : JSON.stringify([error])],
        ),
      ) as Row[];
      if (!rows[0]) return null;
      const status = toIngest(rows[0]);
      // Announced while the row is held: the next count waits for this one to be out.
      await announce(status);
      return status;
    });
  }
}
