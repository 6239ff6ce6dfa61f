/**
 * The load of bench/http and bench/http-frameworks: BENCH_HTTP_CONNECTIONS (default 50)
 * keep-alive connections each sending its next GET as soon as the last one is answered, for
 * BENCH_HTTP_SECONDS (default 5), from a Node http client in this process or, with
 * BENCH_HTTP_GENERATOR=wrk, from `wrk` (one thread; Debian's package). The server's CPU per
 * request is read from /proc for its pid.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { processCpuMicros } from './process-cpu.js';

export const CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 50);
export const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
export const GENERATOR: 'wrk' | 'node' = process.env.BENCH_HTTP_GENERATOR === 'wrk' ? 'wrk' : 'node';

export interface Round {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time (user + system) the server process spent per answered request, µs (Linux only). */
  cpuPerRequest?: number;
  /** CPU time this process (the load generator) spent per request, µs. */
  ownCpuPerRequest: number;
}

export const pct = (xs: number[], p: number): number => {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

/** CONNECTIONS closed loops of GET `url` for SECONDS; every answer must be 200. */
export async function load(url: string, headers: Record<string, string>, serverPid?: number): Promise<Round> {
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

/**
 * A bench server as a child process of its own (a script beside this one, in dist/bench):
 * resolves once it prints its port.
 */
export function startPortPrinter(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL(`./${script}`, import.meta.url)), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${script} ${args.join(' ')} exited (${code})`)));
    child.stdout!.once('data', (chunk: Buffer) => resolve({ child, port: Number(String(chunk).trim()) }));
  });
}
