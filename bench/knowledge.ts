/**
 * Knowledge-base benchmark (issue 26's measure). Build first, then: `node dist/bench/knowledge.js`
 * (embedded database); `BENCH_KB_MODE=services` runs it on Postgres (127.0.0.1:5432) and Redis
 * (127.0.0.1:6379); `BENCH_KB_DOCS` (default 2,000 documents), `BENCH_KB_MB` (default 105: the
 * corpus' size in MB) and `BENCH_KB_RUNS` (default 3: runs, a fresh server each) size it.
 *
 * The generated corpus (libs/testing/src/knowledge-corpus.ts: Markdown, HTML, text, CSV, DOCX, PDF,
 * PPTX and XLSX in equal numbers, 3–14 paragraphs each and 400 for one in fifty; the Office files
 * carry a picture sized so the corpus reaches `BENCH_KB_MB`) is written into a workspace, with the
 * shipped question set's 100 passages planted one per document (knowledge-questions.ts), and added
 * with `POST /api/tlon/:kbId/files` (folders of at most 1,000 files, the per-request limit being
 * 2,000); ingestion is timed from the first request to `ingest-status` `done` with every source
 * settled: documents/s and MB/s, without an embedding model, against the target (≤ 10 min). Then
 * the base gets the scripted model server's deterministic embedder (`/v1/embeddings`, 64
 * dimensions) and re-embeds as jobs (timed too); then every question is asked in keyword and in
 * hybrid mode (topK 10): recall@10 per language and overall (a hit: one of the 10 chunks is from
 * the passage's document and holds the whole passage), keyword against its target (≥ 0.85), hybrid
 * as its difference from keyword; then 100 queries of each search mode (keyword, semantic,
 * hybrid: two vocabulary words and a `markerN`), one at a time, and 100 keyword queries of two
 * vocabulary words alone (no rare word: the most chunks ranked): p50, p95 and p99. Printed per run
 * and as the median of the runs.
 *
 * `BENCH_KB_CHUNKS=100000` (or 10000, …) measures search at that many chunks instead: ingesting
 * 100,000 chunks through the API takes most of an hour here, so the chunks are **seeded directly
 * into the database** (the server stopped: the embedded database is opened by the bench, Postgres
 * is written to): sources of 10 chunks of ~100 words of the same vocabulary and `markerN`, each
 * with its tsvector (lexemes as the server writes them for such ASCII words) and a random 64-length
 * unit vector, marked learned with the base's embedding model, the base's keyword counts
 * recounted (`knowledge_recount`) and the chunk table analysed (`BENCH_KB_ANALYZE=0`: not, the
 * planner then without statistics); then the server is started again and searched as above (the
 * first semantic query loads the base's vector index: it counts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import pg from 'pg';
import type { SearchHitDto } from '#contracts/knowledge.js';
import { embeddingKey } from '#core/knowledge/knowledge.ports.js';
import { EmbeddedPostgres } from '#infra/database/embedded-postgres.js';
import {
  CORPUS_VOCAB as VOCAB,
  recallAt10,
  rng,
  writeKnowledgeCorpus,
  type RecallFigures,
} from '#testing/knowledge-corpus.js';
import { KNOWLEDGE_QUESTIONS } from '#testing/knowledge-questions.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { servicesAvailable } from '#testing/test-env.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { pct } from './http-load.js';

const DOCS = Number(process.env.BENCH_KB_DOCS ?? 2000);
const CORPUS_MB = Number(process.env.BENCH_KB_MB ?? 105);
const RUNS = Number(process.env.BENCH_KB_RUNS ?? 3);
const MODE = process.env.BENCH_KB_MODE === 'services' ? 'services' : 'embedded';
const SEED_CHUNKS = process.env.BENCH_KB_CHUNKS ? Number(process.env.BENCH_KB_CHUNKS) : null;
/** `BENCH_KB_ANALYZE=0`: seeded chunks are not `ANALYZE`d (the planner without statistics, as PGlite leaves it). */
const ANALYZE_SEEDED = process.env.BENCH_KB_ANALYZE !== '0';
const CHUNKS_PER_SOURCE = 10;
const QUERIES = 100;
const PER_FOLDER = 1000;
/** Issue 26's targets: ingest (no embeddings) within 10 minutes, keyword recall@10 at least 0.85. */
const INGEST_TARGET_S = 600;
const KEYWORD_RECALL_TARGET = 0.85;
/** Hybrid may lose this much recall@10 to keyword (5 of 100 questions) and still count as noise. */
const HYBRID_NOISE = 0.05;

const note = (line: string): boolean => process.stderr.write(`[bench] ${line}\n`);
const median = (xs: number[]): number => pct(xs, 50);

/** An answer's `data`; anything but 200 throws. */
function data<T>(res: request.Response): T {
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data as T;
}

/** Adds the scripted model server as the OpenAI-style embedding source `Embedder`; answers its id. */
async function addEmbedder(s: TestServer, modelUrl: string): Promise<string> {
  const res = await request(s.url)
    .post('/api/ai-sources/sources')
    .set('Authorization', `Bearer ${s.password}`)
    .send({ name: 'Embedder', provider: 'openai', apiUrl: modelUrl, apiKey: 'sk-bench', model: 'scripted-embed' });
  return data<{ sources: Array<{ id: string; name: string }> }>(res).sources.find((x) => x.name === 'Embedder')!.id;
}

/** The search modes timed, and `common`: keyword search for two vocabulary words only (no rare word). */
type SearchFigure = 'keyword' | 'semantic' | 'hybrid' | 'common';
const SEARCH_FIGURES: Array<{ figure: SearchFigure; label: string }> = [
  { figure: 'keyword', label: 'keyword search' },
  { figure: 'semantic', label: 'semantic search' },
  { figure: 'hybrid', label: 'hybrid search' },
  { figure: 'common', label: 'keyword search, common words only' },
];

interface RunResult {
  docsPerS: number;
  mbPerS: number;
  ingestS: number;
  embedS: number;
  chunks: number;
  failed: number;
  corpusMb: number;
  textMb: number;
  recall: Record<'keyword' | 'hybrid', RecallFigures> | null;
  search: Record<SearchFigure, { p50: number; p95: number; p99: number }>;
}

/** Writes `count` chunks (and their sources) of base `kbId` straight into the database at `url`. */
async function seedChunks(url: string, kbId: string, key: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rand = rng(42);
    const sources = Math.ceil(count / CHUNKS_PER_SOURCE);
    const BATCH = 1000;
    for (let first = 0; first < sources; first += BATCH) {
      const ids = Array.from(
        { length: Math.min(BATCH, sources - first) },
        (_, i) => `00000000-0000-4000-8000-${String(first + i).padStart(12, '0')}`,
      );
      await client.query(
        `INSERT INTO knowledge_source (id, kb_id, rel_path, name, origin, size, content_hash, indexed_hash, state, embedding_key)
         SELECT t.id, $1, t.name, t.name, 'raw', 8000, 'seeded', 'seeded', 'learned', $3 FROM unnest($2::uuid[]) WITH ORDINALITY AS s(id, n),
                LATERAL (SELECT s.id, 'seeded/doc' || s.id || '.txt' AS name) t`,
        [kbId, ids, key],
      );
    }
    for (let first = 0; first < count; first += BATCH) {
      const n = Math.min(BATCH, count - first);
      const cols = {
        id: [] as string[],
        source: [] as string[],
        ord: [] as number[],
        text: [] as string[],
        tsv: [] as string[],
        vec: [] as string[],
      };
      for (let i = first; i < first + n; i++) {
        const src = Math.floor(i / CHUNKS_PER_SOURCE);
        const words = Array.from({ length: 100 }, () => VOCAB[Math.floor(rand() * VOCAB.length)]!);
        words.push(`marker${src}`);
        const positions = new Map<string, number[]>();
        words.forEach((w, k) => positions.set(w, [...(positions.get(w) ?? []), k + 1]));
        const v = Array.from({ length: 64 }, () => rand() - 0.5);
        const norm = Math.hypot(...v);
        cols.id.push(`00000000-0000-4000-9000-${String(i).padStart(12, '0')}`);
        cols.source.push(`00000000-0000-4000-8000-${String(src).padStart(12, '0')}`);
        cols.ord.push(i % CHUNKS_PER_SOURCE);
        cols.text.push(`${words.join(' ')}.`);
        cols.tsv.push([...positions].map(([w, p]) => `'${w}':${p.join(',')}`).join(' '));
        cols.vec.push(`{${v.map((x) => (x / norm).toPrecision(7)).join(',')}}`);
      }
      await client.query(
        `INSERT INTO knowledge_chunk (id, kb_id, source_id, ord, heading, text, tsv, embedding)
         SELECT t.id, $1, t.source, t.ord, NULL, t.text, t.tsv::tsvector, t.vec::real[]
           FROM unnest($2::uuid[], $3::uuid[], $4::int[], $5::text[], $6::text[], $7::text[]) AS t(id, source, ord, text, tsv, vec)`,
        [kbId, cols.id, cols.source, cols.ord, cols.text, cols.tsv, cols.vec],
      );
      if ((first / BATCH) % 10 === 0) note(`seeded ${first + n}/${count} chunks`);
    }
    // The keyword weights' counts (knowledge_lexeme, chunk_count), as ingestion would have kept them.
    await client.query(`SELECT knowledge_recount($1)`, [kbId]);
    await client.query(`UPDATE knowledge_base SET chunk_version = chunk_version + 1 WHERE id = $1`, [kbId]);
    if (ANALYZE_SEEDED) {
      const started = performance.now();
      await client.query(`ANALYZE knowledge_chunk`);
      note(`ANALYZE knowledge_chunk took ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    await client.end();
  }
}

async function seededRun(run: number, chunks: number): Promise<RunResult> {
  const model = await ScriptedModelServer.start();
  model.embeddings({});
  const services = MODE === 'services' ? await createSharedServices() : undefined;
  let server: TestServer | undefined;
  let cleanup = () => {};
  try {
    // A data folder of the bench's own: the server removes one it made itself when it stops.
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-kb-bench-'));
    cleanup = () => rmSync(dataDir, { recursive: true, force: true });
    server = await startServer({ dataDir, ...(services ? { services } : {}) });
    let s = server;
    const call = (t: request.Test) => t.set('Authorization', `Bearer ${s.password}`);
    const kb = data<{ id: string }>(await call(request(s.url).post('/api/tlon')).send({ name: 'Bench' }));
    const embedder = await addEmbedder(s, model.url);
    const embedding = { modelSourceId: embedder, model: 'scripted-embed', dimensions: 64 };
    data(await call(request(s.url).put(`/api/tlon/${kb.id}`)).send({ embedding }));
    await server.stop();
    const seedStarted = performance.now();
    if (services) await seedChunks(services.databaseUrl, kb.id, embeddingKey(embedding), chunks);
    else {
      const db = await EmbeddedPostgres.start(dataDir);
      try {
        await seedChunks(db.url, kb.id, embeddingKey(embedding), chunks);
      } finally {
        await db.stop();
      }
    }
    const seedS = (performance.now() - seedStarted) / 1000;
    note(`run ${run}: seeded ${chunks} chunks in ${seedS.toFixed(1)} s`);
    server = await startServer({ dataDir, ...(services ? { services } : {}) });
    s = server;
    const stats = data<{ stats: { chunkCount: number } }>(await call(request(s.url).get(`/api/tlon/${kb.id}`))).stats;
    const search = await searchTimes(s, kb.id, Math.ceil(chunks / CHUNKS_PER_SOURCE));
    const result: RunResult = {
      docsPerS: NaN,
      mbPerS: NaN,
      ingestS: seedS,
      embedS: NaN,
      chunks: stats.chunkCount,
      failed: 0,
      corpusMb: NaN,
      textMb: NaN,
      recall: null,
      search,
    };
    note(`run ${run}: ${JSON.stringify(result)}`);
    return result;
  } finally {
    await server?.stop();
    await services?.dispose();
    await model.close();
    cleanup();
  }
}

/**
 * 100 queries of each mode, one at a time (two vocabulary words and a marker of `markers`); then 100
 * keyword queries of two vocabulary words alone (`common`: no rare word, so the most chunks ranked).
 */
async function searchTimes(s: TestServer, kbId: string, markers: number): Promise<RunResult['search']> {
  const rand = rng(7);
  const search = {} as RunResult['search'];
  for (const { figure } of SEARCH_FIGURES) {
    const mode = figure === 'common' ? 'keyword' : figure;
    const times: number[] = [];
    for (let q = 0; q < QUERIES; q++) {
      const words = `${VOCAB[Math.floor(rand() * VOCAB.length)]} ${VOCAB[Math.floor(rand() * VOCAB.length)]}`;
      const query = figure === 'common' ? words : `${words} marker${Math.floor(rand() * markers)}`;
      const t0 = performance.now();
      const res = await request(s.url)
        .post(`/api/tlon/${kbId}/search`)
        .set('Authorization', `Bearer ${s.password}`)
        .send({ query, mode, topK: 8 });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(res.body)}`);
      times.push(performance.now() - t0);
    }
    search[figure] = { p50: pct(times, 50), p95: pct(times, 95), p99: pct(times, 99) };
  }
  return search;
}

async function oneRun(run: number): Promise<RunResult> {
  const model = await ScriptedModelServer.start();
  model.embeddings({});
  const services = MODE === 'services' ? await createSharedServices() : undefined;
  let server: TestServer | undefined;
  try {
    server = await startServer({ ...(services ? { services } : {}) });
    const s = server;
    const call = (t: request.Test) => t.set('Authorization', `Bearer ${s.password}`);
    const space = data<{ id: string; path: string }>(
      await call(request(s.url).post('/api/spaces')).send({ name: 'Corpus' }),
    );
    const corpus = await writeKnowledgeCorpus(join(space.path, 'corpus'), {
      docs: DOCS,
      targetBytes: CORPUS_MB * 1024 * 1024,
      questions: KNOWLEDGE_QUESTIONS,
      perFolder: PER_FOLDER,
    });
    const bytes = corpus.bytes;
    note(
      `run ${run}: corpus ${(bytes / 1048576).toFixed(1)} MB (text ${(corpus.textBytes / 1048576).toFixed(1)} MB), ${JSON.stringify(corpus.formats)}`,
    );
    const kb = data<{ id: string }>(await call(request(s.url).post('/api/tlon')).send({ name: 'Bench' }));
    const status = async () =>
      data<{ phase: string; completed: number; total: number }>(
        await call(request(s.url).get(`/api/tlon/${kb.id}/ingest-status`)),
      );
    const settle = async (what: string) => {
      for (let last = ''; ;) {
        const st = await status();
        const line = `${what}: ${st.completed}/${st.total} ${st.phase}`;
        if (line !== last && st.completed % 250 === 0) note(line);
        last = line;
        if (st.phase !== 'running') return;
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const started = performance.now();
    for (const folder of corpus.folders) {
      const added = data<{ added: string[] }>(
        await call(request(s.url).post(`/api/tlon/${kb.id}/files`)).send({
          spaceId: space.id,
          filePaths: [`corpus/${folder}`],
        }),
      );
      note(`run ${run}: folder ${folder}: ${added.added.length} added`);
    }
    await settle(`run ${run} ingest`);
    const ingestS = (performance.now() - started) / 1000;
    const raw = data<Array<{ state: string }>>(await call(request(s.url).get(`/api/tlon/${kb.id}/raw`)));
    const failed = raw.filter((r) => r.state === 'failed' || r.state === 'pending').length;
    const embedder = await addEmbedder(s, model.url);
    const embedStarted = performance.now();
    data(
      await call(request(s.url).put(`/api/tlon/${kb.id}`)).send({
        embedding: { modelSourceId: embedder, model: 'scripted-embed', dimensions: 64 },
      }),
    );
    await settle(`run ${run} embed`);
    const embedS = (performance.now() - embedStarted) / 1000;
    const stats = data<{ stats: { chunkCount: number } }>(await call(request(s.url).get(`/api/tlon/${kb.id}`))).stats;
    const recall = {} as Record<'keyword' | 'hybrid', RecallFigures>;
    for (const mode of ['keyword', 'hybrid'] as const) {
      recall[mode] = await recallAt10(KNOWLEDGE_QUESTIONS, corpus.planted, async (query) =>
        data<SearchHitDto[]>(
          await call(request(s.url).post(`/api/tlon/${kb.id}/search`)).send({ query, mode, topK: 10 }),
        ),
      );
      note(`run ${run}: ${mode} recall@10 ${recall[mode].all.toFixed(2)}, missed ${recall[mode].missed.join(' ')}`);
    }
    const search = await searchTimes(s, kb.id, DOCS);
    const result: RunResult = {
      docsPerS: DOCS / ingestS,
      mbPerS: bytes / 1024 / 1024 / ingestS,
      ingestS,
      embedS,
      chunks: stats.chunkCount,
      failed,
      corpusMb: bytes / 1048576,
      textMb: corpus.textBytes / 1048576,
      recall,
      search,
    };
    note(`run ${run}: ${JSON.stringify({ ...result, recall: undefined })}`);
    return result;
  } finally {
    await server?.stop();
    await services?.dispose();
    await model.close();
  }
}

async function main(): Promise<void> {
  if (MODE === 'services' && !(await servicesAvailable()).ok) throw new Error('Postgres and Redis are needed');
  const runs: RunResult[] = [];
  for (let r = 1; r <= RUNS; r++) runs.push(SEED_CHUNKS ? await seededRun(r, SEED_CHUNKS) : await oneRun(r));
  const col = (f: (r: RunResult) => number, digits = 1) => {
    const xs = runs.map(f);
    return `${xs.map((x) => x.toFixed(digits)).join(', ')} | ${median(xs).toFixed(digits)}`;
  };
  const lines = SEED_CHUNKS
    ? [
        `knowledge bench (${MODE}), ${SEED_CHUNKS} seeded chunks, ${RUNS} run(s)`,
        '| figure | runs | median |',
        '| --- | --- | --- |',
        `| seeding time (s) | ${col((r) => r.ingestS)} |`,
        `| chunks | ${col((r) => r.chunks, 0)} |`,
      ]
    : [
        `knowledge bench (${MODE}), ${DOCS} documents, ${RUNS} run(s)`,
        '| figure | runs | median |',
        '| --- | --- | --- |',
        `| corpus MB | ${col((r) => r.corpusMb)} |`,
        `| of which text MB | ${col((r) => r.textMb)} |`,
        `| ingest documents/s | ${col((r) => r.docsPerS)} |`,
        `| ingest MB/s | ${col((r) => r.mbPerS, 2)} |`,
        `| ingest time (s) | ${col((r) => r.ingestS)} |`,
        `| ingest target ≤ ${INGEST_TARGET_S / 60} min | ${median(runs.map((r) => r.ingestS)) <= INGEST_TARGET_S ? 'met' : 'NOT met'} (median) |`,
        `| re-embed time (s) | ${col((r) => r.embedS)} |`,
        `| chunks | ${col((r) => r.chunks, 0)} |`,
        `| sources failed or left pending | ${col((r) => r.failed, 0)} |`,
      ];
  if (!SEED_CHUNKS) {
    const recall = (mode: 'keyword' | 'hybrid', lang: 'en' | 'zh' | 'all') => (r: RunResult) => r.recall![mode][lang];
    for (const mode of ['keyword', 'hybrid'] as const) {
      for (const lang of ['en', 'zh', 'all'] as const) {
        lines.push(`| ${mode} recall@10, ${lang === 'all' ? 'all 100' : lang} | ${col(recall(mode, lang), 2)} |`);
      }
    }
    const keyword = median(runs.map(recall('keyword', 'all')));
    const diff = median(runs.map((r) => r.recall!.hybrid.all - r.recall!.keyword.all));
    lines.push(
      `| keyword recall@10 target ≥ ${KEYWORD_RECALL_TARGET} | ${keyword >= KEYWORD_RECALL_TARGET ? 'met' : 'NOT met'} (median) |`,
    );
    lines.push(
      `| hybrid − keyword recall@10 | ${col((r) => r.recall!.hybrid.all - r.recall!.keyword.all, 2)} (${diff >= -HYBRID_NOISE ? 'within' : 'NOT within'} noise, ≥ −${HYBRID_NOISE}) |`,
    );
  }
  for (const { figure, label } of SEARCH_FIGURES) {
    lines.push(`| ${label} p50 (ms) | ${col((r) => r.search[figure].p50)} |`);
    lines.push(`| ${label} p95 (ms) | ${col((r) => r.search[figure].p95)} |`);
    lines.push(`| ${label} p99 (ms) | ${col((r) => r.search[figure].p99)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
