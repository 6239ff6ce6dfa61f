/**
 * Knowledge-base benchmark (issue 26's measure, on a smaller corpus). Build first, then:
 * `node dist/bench/knowledge.js` (embedded database); `BENCH_KB_MODE=services` runs it on
 * Postgres (127.0.0.1:5432) and Redis (127.0.0.1:6379); `BENCH_KB_DOCS` (default 2,000) and
 * `BENCH_KB_RUNS` (default 3) set the corpus size and the number of runs (a fresh server each).
 *
 * A generated corpus (Markdown, HTML, text, CSV, DOCX and PDF, ~1–8 KB each, a few hundred KB
 * for one in fifty) is written into a workspace and added with `POST /api/tlon/:kbId/files`
 * (two folders of at most 1,000 files, the per-request limit being 2,000); ingestion is timed
 * from the first request to `ingest-status` `done` with every source settled: documents/s and
 * MB/s, without an embedding model. Then the base gets the scripted model server's deterministic
 * embedder (`/v1/embeddings`, 64 dimensions) and re-embeds as jobs (timed too); then 100 queries
 * of each search mode (keyword, semantic, hybrid), one at a time: p50, p95 and p99. Printed per
 * run and as the median of the runs.
 *
 * `BENCH_KB_CHUNKS=100000` (or 10000, …) measures search at that many chunks instead: ingesting
 * 100,000 chunks through the API takes most of an hour here, so the chunks are **seeded directly
 * into the database** (the server stopped: the embedded database is opened by the bench, Postgres
 * is written to): sources of 10 chunks of ~100 words of the same vocabulary and `markerN`, each
 * with its tsvector (lexemes as the server writes them for such ASCII words) and a random 64-length
 * unit vector, marked learned with the base's embedding model; then the server is started again
 * and searched as above (the first semantic query loads the base's vector index: it counts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import yazl from 'yazl';
import pg from 'pg';
import { embeddingKey } from '#core/knowledge/knowledge.ports.js';
import { EmbeddedPostgres } from '#infra/database/embedded-postgres.js';
import { minimalPdf } from '#testing/minimal-pdf.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { servicesAvailable } from '#testing/test-env.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { pct } from './http-load.js';

const DOCS = Number(process.env.BENCH_KB_DOCS ?? 2000);
const RUNS = Number(process.env.BENCH_KB_RUNS ?? 3);
const MODE = process.env.BENCH_KB_MODE === 'services' ? 'services' : 'embedded';
const SEED_CHUNKS = process.env.BENCH_KB_CHUNKS ? Number(process.env.BENCH_KB_CHUNKS) : null;
const CHUNKS_PER_SOURCE = 10;
const QUERIES = 100;
const PER_FOLDER = 1000;

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

const WORDS =
  'invoice refund shipment warranty contract budget roadmap meeting release customer supplier audit policy ' +
  'server database backup latency throughput migration schema index cache queue worker replica outage ' +
  'holiday salary pension training onboarding security password certificate firewall network storage';
const VOCAB = WORDS.split(' ');

/** Deterministic pseudo-random numbers (a run's corpus is the same every time). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function paragraph(rand: () => number, i: number, words: number): string {
  const out: string[] = [];
  for (let w = 0; w < words; w++) out.push(VOCAB[Math.floor(rand() * VOCAB.length)]!);
  return `${out.join(' ')} marker${i}.`;
}

async function zipOf(entries: Array<[string, string]>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, data] of entries) z.addBuffer(Buffer.from(data), name);
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Writes the corpus under `root` (folders c0, c1, …); answers its size in bytes. */
async function writeCorpus(root: string): Promise<number> {
  const rand = rng(42);
  let bytes = 0;
  for (let i = 0; i < DOCS; i++) {
    const folder = join(root, `c${Math.floor(i / PER_FOLDER)}`);
    if (i % PER_FOLDER === 0) mkdirSync(folder, { recursive: true });
    const big = i % 50 === 0;
    const paras = Array.from({ length: big ? 400 : 3 + Math.floor(rand() * 12) }, () =>
      paragraph(rand, i, 40 + Math.floor(rand() * 40)),
    );
    let name: string;
    let body: Buffer;
    switch (i % 6) {
      case 0:
        name = `doc${i}.md`;
        body = Buffer.from(
          `# Document ${i}\n\n${paras.map((p, k) => (k % 4 === 3 ? `## Part ${k}\n\n${p}` : p)).join('\n\n')}\n`,
        );
        break;
      case 1:
        name = `page${i}.html`;
        body = Buffer.from(
          `<html><head><title>Page ${i}</title></head><body><nav>menu</nav><h1>Page ${i}</h1>${paras.map((p) => `<p>${p}</p>`).join('')}</body></html>`,
        );
        break;
      case 2:
        name = `notes${i}.txt`;
        body = Buffer.from(paras.join('\n\n'));
        break;
      case 3:
        name = `table${i}.csv`;
        body = Buffer.from(['id,topic,text', ...paras.map((p, k) => `${k},topic${k},"${p}"`)].join('\n'));
        break;
      case 4:
        name = `report${i}.docx`;
        body = await zipOf([
          [
            'word/document.xml',
            `<w:document><w:body><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Report ${i}</w:t></w:r></w:p>${paras
              .map((p) => `<w:p><w:r><w:t>${p}</w:t></w:r></w:p>`)
              .join('')}</w:body></w:document>`,
          ],
        ]);
        break;
      default:
        name = `scan${i}.pdf`;
        body = minimalPdf([paras.slice(0, Math.min(paras.length, 20)).map((p) => p.slice(0, 200))]);
    }
    writeFileSync(join(folder, name), body);
    bytes += body.length;
  }
  return bytes;
}

interface RunResult {
  docsPerS: number;
  mbPerS: number;
  ingestS: number;
  embedS: number;
  chunks: number;
  failed: number;
  search: Record<'keyword' | 'semantic' | 'hybrid', { p50: number; p95: number; p99: number }>;
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
    await client.query(`UPDATE knowledge_base SET chunk_version = chunk_version + 1 WHERE id = $1`, [kbId]);
    await client.query(`ANALYZE knowledge_chunk`);
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

/** 100 queries of each mode, one at a time (two vocabulary words and a marker of `markers`). */
async function searchTimes(s: TestServer, kbId: string, markers: number): Promise<RunResult['search']> {
  const rand = rng(7);
  const search = {} as RunResult['search'];
  for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
    const times: number[] = [];
    for (let q = 0; q < QUERIES; q++) {
      const query = `${VOCAB[Math.floor(rand() * VOCAB.length)]} ${VOCAB[Math.floor(rand() * VOCAB.length)]} marker${Math.floor(rand() * markers)}`;
      const t0 = performance.now();
      const res = await request(s.url)
        .post(`/api/tlon/${kbId}/search`)
        .set('Authorization', `Bearer ${s.password}`)
        .send({ query, mode, topK: 8 });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(res.body)}`);
      times.push(performance.now() - t0);
    }
    search[mode] = { p50: pct(times, 50), p95: pct(times, 95), p99: pct(times, 99) };
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
    const bytes = await writeCorpus(join(space.path, 'corpus'));
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
    for (let f = 0; f * PER_FOLDER < DOCS; f++) {
      const added = data<{ added: string[] }>(
        await call(request(s.url).post(`/api/tlon/${kb.id}/files`)).send({
          spaceId: space.id,
          filePaths: [`corpus/c${f}`],
        }),
      );
      note(`run ${run}: folder c${f}: ${added.added.length} added`);
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
    const search = await searchTimes(s, kb.id, DOCS);
    const result: RunResult = {
      docsPerS: DOCS / ingestS,
      mbPerS: bytes / 1024 / 1024 / ingestS,
      ingestS,
      embedS,
      chunks: stats.chunkCount,
      failed,
      search,
    };
    note(`run ${run}: ${JSON.stringify(result)} (corpus ${(bytes / 1024 / 1024).toFixed(1)} MB)`);
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
        `| ingest documents/s | ${col((r) => r.docsPerS)} |`,
        `| ingest MB/s | ${col((r) => r.mbPerS, 2)} |`,
        `| ingest time (s) | ${col((r) => r.ingestS)} |`,
        `| re-embed time (s) | ${col((r) => r.embedS)} |`,
        `| chunks | ${col((r) => r.chunks, 0)} |`,
        `| sources failed or left pending | ${col((r) => r.failed, 0)} |`,
      ];
  for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
    lines.push(`| ${mode} search p50 (ms) | ${col((r) => r.search[mode].p50)} |`);
    lines.push(`| ${mode} search p95 (ms) | ${col((r) => r.search[mode].p95)} |`);
    lines.push(`| ${mode} search p99 (ms) | ${col((r) => r.search[mode].p99)} |`);
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
