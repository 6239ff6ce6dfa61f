/**
 * Store benchmark over a 10,000-entry catalog.
 *
 *   npx tsc -p tsconfig.build.json && node dist/bench/store.js
 *
 * Serves a synthetic catalog of 10,000 entries from a static host with ETags (the test suite's
 * CatalogServer), starts the real server with it as the built-in source (embedded mode unless
 * SVC_TEST_MODE=services), and prints:
 *   - the first query (the catalog read into the database and memory);
 *   - warm `POST /api/store/query` latency over HTTP (p50, p99) for a mix of browse, search,
 *     type/category filters, locales and deep pages; the same queries in-process; and, as the
 *     reference for HTTP and auth overhead on this machine, an operation that does no catalog work;
 *   - `POST /api/store/revalidate` with an unchanged index: time and the requests it made.
 * Options: BENCH_ENTRIES (default 10000), BENCH_QUERIES (default 500); BENCH_CPU_PROF=<dir> runs the
 * server under `node --cpu-prof` (read it with dist/bench/profile-summary.js).
 */
import { performance } from 'node:perf_hooks';
import type { StoreEntry } from '#contracts/store.js';
import { parseIndexDocuments } from '#core/store/catalog-index.js';
import { queryEntries, sourced, type StoreQuery } from '#core/store/store-query.js';
import { apiClient } from '#testing/api-client.js';
import { CatalogServer, largeIndex } from '#testing/catalog-server.js';
import { startServer } from '#testing/test-server.js';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 10_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 500);
const CPU_PROF = process.env.BENCH_CPU_PROF;

const MIX: StoreQuery[] = [
  {},
  { search: 'prices' },
  { search: 'entry 42', locale: 'zh-CN' },
  { type: 'skill', pageSize: 50 },
  { category: 'news', locale: 'en' },
  { page: 40, pageSize: 20 },
  { search: 'synthetic watches', type: 'mcp', page: 3 },
  { search: 'no-such-word' },
];

function percentiles(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  return `p50 ${at(50).toFixed(2)} ms, p99 ${at(99).toFixed(2)} ms (${samples.length} queries)`;
}

async function main(): Promise<void> {
  const index = largeIndex(ENTRIES);
  const catalog = await CatalogServer.start();
  catalog.set('index.json', index);
  const server = await startServer({
    env: { SVC_STORE_SOURCES: catalog.url },
    nodeArgs: CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [],
  });
  const api = apiClient(server);
  try {
    let t = performance.now();
    const first = await api.post('/api/store/query', {});
    console.log(
      `first query (reads ${ENTRIES} entries): ${(performance.now() - t).toFixed(0)} ms, total ${first.body.data.total}`,
    );

    const http: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const q = MIX[i % MIX.length]!;
      t = performance.now();
      const res = await api.post('/api/store/query', q);
      http.push(performance.now() - t);
      if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    }
    console.log(`warm POST /api/store/query over HTTP: ${percentiles(http)}`);

    const bare: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      t = performance.now();
      await api.get('/api/store/capabilities');
      bare.push(performance.now() - t);
    }
    console.log(`reference: GET /api/store/capabilities (no catalog work): ${percentiles(bare)}`);

    const entries = parseIndexDocuments([index])!.entries.map((e: StoreEntry) => sourced('bench', e));
    const local: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      t = performance.now();
      queryEntries(entries, MIX[i % MIX.length]!);
      local.push(performance.now() - t);
    }
    console.log(`in-process queryEntries: ${percentiles(local)}`);

    const runs: number[] = [];
    let requests = 0;
    for (let i = 0; i < 20; i++) {
      catalog.resetCounts();
      t = performance.now();
      const res = await api.post('/api/store/revalidate');
      runs.push(performance.now() - t);
      if (res.body.data.changed !== false) throw new Error('the index moved');
      requests += catalog.requests.length;
      if (catalog.requests.some((r) => !r.conditional || r.status !== 304)) throw new Error('not conditional');
    }
    console.log(
      `revalidate, unchanged index: ${percentiles(runs).replace('queries', 'runs')}; ${requests / runs.length} conditional request(s) each, all 304`,
    );
  } finally {
    await server.stop();
    await catalog.stop();
  }
}

await main();
