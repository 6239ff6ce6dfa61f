/**
 * File search and listing benchmark on a space of 100,000 files.
 *
 *   npx tsc -p tsconfig.build.json && node dist/bench/files.js
 *
 * Builds a space folder of 100,000 files in nested folders under a temporary folder, then
 * prints, in one run:
 *   - the search index build: in-process (walk + PathIndex), and through the real server
 *     (first `artifacts/query` until it answers `indexing: false`);
 *   - warm `GET /api/spaces/:id/artifacts/query` latency (p50, p99) over HTTP;
 *   - `GET /api/spaces/:id/artifacts?maxDepth=2` time;
 *   - `find <dir> -maxdepth 2` and `find <dir>` on the same tree, as the reference.
 * The server is started with startServer() (embedded mode unless SVC_TEST_MODE=services),
 * and the space is created with `POST /api/spaces {name, customPath}`. Everything it creates
 * is removed at the end. Options: BENCH_FILES (default 100000), BENCH_QUERIES (default 300).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PathIndex } from '#core/artifacts/path-index.js';
import { relativeInside, toPosix } from '#core/artifacts/path-rules.js';
import { ignoreUnder } from '#core/artifacts/watch-events.js';
import { NodeFileTreeScanner } from '#infra/watch/node-file-tree-scanner.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

const TOTAL = Number(process.env.BENCH_FILES ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 300);
const EXTENSIONS = ['ts', 'md', 'json', 'txt', 'png'];

/** 10 folders per level, three levels; files spread 1 : 9 : 90 : 900 per folder level by weight. */
function layout(total: number): string[] {
  const paths: string[] = [];
  const folders: string[][] = [[''], [], [], []];
  for (let a = 0; a < 10; a++) {
    folders[1]!.push(`area-${a}`);
    for (let b = 0; b < 10; b++) {
      folders[2]!.push(`area-${a}/module-${b}`);
      for (let c = 0; c < 10; c++) folders[3]!.push(`area-${a}/module-${b}/part-${c}`);
    }
  }
  // Roughly: 0.05% at the root, 0.45% per level-1 total, 4.5% at level 2, the rest at level 3.
  const share = [0.0005, 0.0045, 0.045];
  let n = 0;
  for (let level = 0; level < 3; level++) {
    const count = Math.round(total * share[level]!);
    for (let i = 0; i < count; i++) {
      const folder = folders[level]![i % folders[level]!.length]!;
      paths.push(join(folder, `file-${n}.${EXTENSIONS[n % EXTENSIONS.length]}`));
      n++;
    }
  }
  while (n < total) {
    const folder = folders[3]![n % folders[3]!.length]!;
    paths.push(join(folder, `file-${n}.${EXTENSIONS[n % EXTENSIONS.length]}`));
    n++;
  }
  return paths;
}

async function writeTree(root: string, files: string[]): Promise<void> {
  const dirs = new Set(files.map((f) => join(root, f, '..')));
  for (const dir of dirs) mkdirSync(dir, { recursive: true });
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const file = files[next++]!;
      await writeFile(join(root, file), file);
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface ApiBody {
  success?: boolean;
  error?: string;
  data?: unknown;
}

const ms = (n: number): string => `${n.toFixed(1)} ms`;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await fn();
  return [value, performance.now() - started];
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'svc-bench-files-'));
  const root = join(base, 'space');
  mkdirSync(root);
  let server: TestServer | null = null;
  const rows: Array<[string, string]> = [];
  try {
    const files = layout(TOTAL);
    const [, writeMs] = await timed(() => writeTree(root, files));
    console.log(
      `tree: ${files.length} files in ${1 + 10 + 100 + 1000} folders under ${root} (written in ${ms(writeMs)})`,
    );

    // 1. Index build, in-process: the same walk and index the server uses.
    const index = new PathIndex({ limit: 200_000 });
    const scanner = new NodeFileTreeScanner();
    const [walk, buildMs] = await timed(() =>
      scanner.walk({
        root,
        ignore: ignoreUnder(root),
        limit: 200_000,
        onEntries: (entries) => {
          for (const e of entries) {
            index.add({
              name: e.name,
              type: e.type,
              path: e.path,
              relativePath: toPosix(relativeInside(root, e.path)!),
            });
          }
        },
      }),
    );
    const [, firstQueryMs] = await timed(async () => index.search('file-4242', 50));
    rows.push(['index build, in-process (walk + index)', `${ms(buildMs)} (${walk.count} paths)`]);
    rows.push(['  first in-process query (finishes snapshots)', ms(firstQueryMs)]);

    // 2. The real server.
    server = await startServer();
    const auth = { Authorization: `Bearer ${server.password}` };
    const api = async (method: string, path: string, body?: object): Promise<{ status: number; json: ApiBody }> => {
      const res = await fetch(`${server!.url}${path}`, {
        method,
        headers: { ...auth, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, json: (await res.json()) as ApiBody };
    };
    const created = await api('POST', '/api/spaces', { name: 'bench', customPath: root });
    if (created.status !== 200) throw new Error(`space creation failed: ${JSON.stringify(created.json)}`);
    const spaceId = (created.json.data as { id: string }).id;

    // Wait until the watcher runs on the big tree (it scans it once), so it does not skew timings.
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    const [, watchMs] = await timed(async () => {
      for (let i = 0; ; i++) {
        await writeFile(join(root, 'bench-probe.txt'), String(i));
        const seen = await ws
          .next(
            (f) => f.channel === 'artifact:changed-batch' && JSON.stringify(f.data).includes('bench-probe.txt'),
            2_000,
          )
          .then(() => true)
          .catch(() => false);
        if (seen) break;
      }
    });
    ws.close();
    rows.push(['watcher ready on the tree (start + initial scan)', ms(watchMs)]);

    const [, httpBuildMs] = await timed(async () => {
      for (;;) {
        const res = await api('GET', `/api/spaces/${spaceId}/artifacts/query?q=file-4242`);
        if (res.status !== 200) throw new Error(JSON.stringify(res.json));
        if (!(res.json.data as { indexing: boolean }).indexing) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    rows.push(['index build via HTTP (first query until indexing:false)', ms(httpBuildMs)]);

    const queries = [
      'file-4242',
      'file-99999',
      'f-123',
      'module-3/part-7',
      'area-9 file-5',
      'md',
      'json',
      'part-2/file-10',
      'png',
      'zzzz',
    ];
    for (const q of queries) await api('GET', `/api/spaces/${spaceId}/artifacts/query?q=${encodeURIComponent(q)}`);
    const latencies: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const q = i % 3 === 0 ? queries[i % queries.length]! : `file-${(i * 7919) % TOTAL}`;
      const [res, t] = await timed(() =>
        api('GET', `/api/spaces/${spaceId}/artifacts/query?q=${encodeURIComponent(q)}`),
      );
      if (res.status !== 200) throw new Error(JSON.stringify(res.json));
      latencies.push(t);
    }
    latencies.sort((a, b) => a - b);
    rows.push([
      `warm artifacts/query over HTTP (${QUERIES} queries, limit 50)`,
      `p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(latencies[latencies.length - 1]!)}`,
    ]);

    const listTimes: number[] = [];
    let listed = 0;
    for (let i = 0; i < 5; i++) {
      const [res, t] = await timed(() => api('GET', `/api/spaces/${spaceId}/artifacts?maxDepth=2`));
      if (res.status !== 200) throw new Error(JSON.stringify(res.json));
      listed = (res.json.data as unknown[]).length;
      listTimes.push(t);
    }
    listTimes.sort((a, b) => a - b);
    rows.push([
      `artifacts list maxDepth=2 over HTTP (median of 5)`,
      `${ms(percentile(listTimes, 50))} (${listed} entries)`,
    ]);

    // 3. The reference: find.
    const find = (args: string[]): [number, number] => {
      const started = performance.now();
      const out = spawnSync('find', args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
      const t = performance.now() - started;
      if (out.status !== 0) throw new Error(out.stderr);
      return [t, out.stdout.split('\n').filter(Boolean).length];
    };
    const [findShallowMs, shallowCount] = find([root, '-mindepth', '1', '-maxdepth', '2']);
    rows.push(['find <dir> -maxdepth 2', `${ms(findShallowMs)} (${shallowCount} entries)`]);
    const [findAllMs, allCount] = find([root, '-mindepth', '1']);
    rows.push(['find <dir> (full tree)', `${ms(findAllMs)} (${allCount} entries)`]);
  } finally {
    await server?.stop();
    rmSync(base, { recursive: true, force: true });
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log('');
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
