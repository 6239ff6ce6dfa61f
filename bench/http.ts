/**
 * Request overhead benchmark. Build first, then: `node dist/bench/http.js`.
 *
 * `GET /api/system/version` with a token, BENCH_HTTP_CONNECTIONS (default 50) keep-alive
 * connections each sending its next request as soon as the last one is answered, for
 * BENCH_HTTP_SECONDS (default 5) per round, against bare Node `http` serving the same JSON
 * body (its own process, as the server is: bench/bare-http-server). Rounds alternate (bare, svc, bare, svc, …; BENCH_HTTP_ROUNDS pairs, default 3) so
 * that both see the same machine load; prints req/s and p50/p99 of each round and the ratio
 * of the medians. The server runs embedded (SVC_TEST_MODE=services: on Postgres + Redis).
 * BENCH_CPU_PROF=<dir> runs the server under `node --cpu-prof`.
 * BENCH_HTTP_GENERATOR=wrk loads both with `wrk` (one thread; Debian's package) instead of the
 * Node client: a generator that costs a fraction of a Node client per request, so bare Node's
 * figure is no longer capped by the generator and the ratio is the servers' own.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { processCpuMicros } from './process-cpu.js';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { startServer } from '#testing/test-server.js';

const CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_HTTP_ROUNDS ?? 3);
/** Another path to compare (e.g. /healthz: no token, no /api middleware). */
const PATH = process.env.BENCH_HTTP_PATH ?? '/api/system/version';
const CPU_PROF = process.env.BENCH_CPU_PROF;
const GENERATOR = process.env.BENCH_HTTP_GENERATOR === 'wrk' ? 'wrk' : 'node';

interface Round {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time (user + system) the server process spent per answered request, µs (Linux only). */
  cpuPerRequest?: number;
  /** CPU time this process (the load generator) spent per request, µs. */
  ownCpuPerRequest: number;
}

const pct = (xs: number[], p: number): number => {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

/** CONNECTIONS closed loops of GET `url` for SECONDS; every answer must be 200. */
async function load(url: string, headers: Record<string, string>, serverPid?: number): Promise<Round> {
  if (GENERATOR === 'wrk') return loadWithWrk(url, headers, serverPid);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const latencies: number[] = [];
  let errors = 0;
  const get = (): Promise<void> =>
    new Promise((resolve) => {
      const started = performance.now();
      const req = http.get(url, { agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(performance.now() - started);
          else errors++;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
    });
  // Warm-up: one request per connection.
  await Promise.all(Array.from({ length: CONNECTIONS }, get));
  latencies.length = 0;
  const cpu0 = processCpuMicros(serverPid);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) await get();
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = processCpuMicros(serverPid) - cpu0;
  const own = process.cpuUsage(own0);
  agent.destroy();
  return {
    rps: latencies.length / elapsed,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    errors,
    cpuPerRequest: serverPid === undefined ? undefined : cpu / latencies.length,
    ownCpuPerRequest: (own.user + own.system) / latencies.length,
  };
}

/** The same load from `wrk` (its own process; its CPU is not this process's, so none is reported). */
function loadWithWrk(url: string, headers: Record<string, string>, serverPid?: number): Round {
  const args = [
    '-t1',
    `-c${CONNECTIONS}`,
    '--latency',
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
  ];
  spawnSync('wrk', [...args, '-d1s', url]); // warm-up
  const cpu0 = processCpuMicros(serverPid);
  const out = spawnSync('wrk', [...args, `-d${SECONDS}s`, url], { encoding: 'utf8' });
  const cpu = processCpuMicros(serverPid) - cpu0;
  if (out.status !== 0) throw new Error(`wrk failed: ${out.error?.message ?? out.stderr}`);
  const text = out.stdout;
  const ms = (label: string): number => {
    const m = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s)$`, 'm').exec(text);
    if (!m) return NaN;
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
  };
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN),
    p50: ms('50'),
    p99: ms('99'),
    errors: non2xx + (socketErrors ? socketErrors.slice(1).reduce((n, x) => n + Number(x), 0) : 0),
    cpuPerRequest: serverPid === undefined ? undefined : cpu / requests,
    ownCpuPerRequest: NaN,
  };
}

async function main(): Promise<void> {
  const server = await startServer({ nodeArgs: CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [] });
  const headers = { Authorization: `Bearer ${server.password}` };
  const target = `${server.url}${PATH}`;
  const first = await fetch(target, { headers });
  const body = await first.text();
  if (first.status !== 200) throw new Error(`${target} answered ${first.status}: ${body}`);

  // The reference: the same JSON from bare Node http, in a process of its own like the server.
  const bare = await startBare(body);
  const bareUrl = `http://127.0.0.1:${bare.port}${PATH}`;

  const rounds: { bare: Round[]; svc: Round[] } = { bare: [], svc: [] };
  try {
    for (let i = 0; i < ROUNDS; i++) {
      rounds.bare.push(await load(bareUrl, headers, bare.child.pid));
      rounds.svc.push(await load(target, headers, server.process.pid));
    }
  } finally {
    bare.child.kill('SIGTERM');
    await server.stop();
  }

  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  out(
    `\nGET ${PATH} with a token, ${CONNECTIONS} connections from ${GENERATOR === 'wrk' ? 'wrk' : 'a Node http client'}, ${ROUNDS} × ${SECONDS} s rounds (alternating; ` +
      `load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(', ')})`,
  );
  out(
    `  ${'server'.padEnd(10)} ${'round'.padEnd(6)} ${'req/s'.padStart(8)} ${'p50'.padStart(9)} ${'p99'.padStart(9)}  errors  server CPU/request`,
  );
  for (let i = 0; i < ROUNDS; i++) {
    for (const [name, r] of [
      ['bare http', rounds.bare[i]!],
      ['svc', rounds.svc[i]!],
    ] as const) {
      out(
        `  ${name.padEnd(10)} ${String(i + 1).padEnd(6)} ${Math.round(r.rps).toString().padStart(8)} ${`${r.p50.toFixed(2)} ms`.padStart(9)} ${`${r.p99.toFixed(2)} ms`.padStart(9)}  ${String(r.errors).padEnd(6)}  ${r.cpuPerRequest === undefined ? '' : `${Math.round(r.cpuPerRequest)} µs`}`,
      );
    }
  }
  const median = (xs: number[]): number => pct(xs, 50);
  const bareRps = median(rounds.bare.map((r) => r.rps));
  const svcRps = median(rounds.svc.map((r) => r.rps));
  out(
    `  median: bare ${Math.round(bareRps)} req/s, svc ${Math.round(svcRps)} req/s = ${((100 * svcRps) / bareRps).toFixed(1)} % of bare (target ≥ 35 %, goal 50 %)`,
  );
  const svcCpu = median(rounds.svc.map((r) => r.cpuPerRequest ?? NaN));
  const bareCpu = median(rounds.bare.map((r) => r.cpuPerRequest ?? NaN));
  if (Number.isFinite(svcCpu) && Number.isFinite(bareCpu)) {
    out(
      `  server CPU per request (median): svc ${Math.round(svcCpu)} µs, bare ${Math.round(bareCpu)} µs (${(svcCpu / bareCpu).toFixed(1)}×); less sensitive to other load than req/s`,
    );
  }
  if (GENERATOR === 'node')
    out(
      `  load generator CPU per request (median): ${Math.round(median(rounds.svc.map((r) => r.ownCpuPerRequest)))} µs against svc, ` +
        `${Math.round(median(rounds.bare.map((r) => r.ownCpuPerRequest)))} µs against bare (one core's worth caps req/s)`,
    );
}

/** The bare reference server as a child process; resolves once it prints its port. */
function startBare(body: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./bare-http-server.js', import.meta.url))], {
    env: { ...process.env, BARE_BODY: body },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the bare server exited (${code})`)));
    child.stdout!.once('data', (chunk: Buffer) => resolve({ child, port: Number(String(chunk).trim()) }));
  });
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
