/**
 * Memory benchmark. Build first, then: `node dist/bench/memory.js`.
 *
 * Per mode of BENCH_MODES (default "embedded,redis"; "redis" is Postgres + Redis and is skipped
 * when they do not answer), BENCH_RUNS times (default 3), each on a fresh server:
 *  1. idle RSS: the server started, nothing asked of it but one authenticated
 *     GET /api/system/version, its RSS once settled (see `settledRss`; VmRSS of its process,
 *     every thread: PGlite's included in embedded mode);
 *  2. per-socket memory: BENCH_SOCKETS (default 1,000) WebSockets opened, signed in, idle until
 *     the RSS settles again; (RSS with them − idle RSS) / sockets;
 * against a bare `ws` server (its own process, no sign-in) holding as many sockets, the
 * reference for what Node and `ws` take per socket. Then the median of the runs against the
 * targets of docs/performance.md (embedded idle RSS ≤ 350 MB, ≤ 30 KB per signed-in socket).
 *
 * The servers (and the bare `ws` reference) run with MALLOC_ARENA_MAX=2, as the image and `npm start`
 * run the server (docs/performance.md, "Memory"); MALLOC_ARENA_MAX=0 measures glibc's default.
 *
 * BENCH_HEAP_SNAPSHOT=<dir>: the first run's server writes a heap snapshot of its main thread
 * at idle there (`--heapsnapshot-signal`); summarize it with `node dist/bench/heap-summary.js <file>`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { servicesAvailable } from '#testing/test-env.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';

const MODES = (process.env.BENCH_MODES ?? 'embedded,redis').split(',');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 1000);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 5000);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 30_000);
const SNAPSHOT_DIR = process.env.BENCH_HEAP_SNAPSHOT;
/** glibc's malloc arenas, as the Dockerfile and `npm start` set them (0: glibc's default). */
const ARENA_MAX = process.env.MALLOC_ARENA_MAX ?? '2';

const note = (line: string): boolean => process.stderr.write(`[bench] ${line}\n`);
const out = (line: string): boolean => process.stdout.write(`${line}\n`);
const sleep = (msecs: number): Promise<void> => new Promise((r) => setTimeout(r, msecs));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Resident memory of a process (all its threads), MB. */
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/**
 * RSS once it has settled: BENCH_IDLE_MS first, then a sample a second until three in a row are
 * within 2 MB of each other (V8's memory reducer shrinks the heaps some seconds into idleness,
 * and a loaded machine finishes the start-up's work later), at most BENCH_SETTLE_MS (30,000).
 */
async function settledRss(pid: number): Promise<number> {
  await sleep(IDLE_MS);
  const deadline = Date.now() + SETTLE_MS;
  const samples = [rssMb(pid)];
  while (Date.now() < deadline) {
    await sleep(1000);
    samples.push(rssMb(pid));
    const last = samples.slice(-3);
    if (last.length === 3 && Math.max(...last) - Math.min(...last) < 2) break;
  }
  return samples[samples.length - 1]!;
}

/** Opens `count` sockets to `url`, one at a time; `signIn` signs each in (the server's sockets). */
async function openSockets(url: string, count: number, signIn?: string): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < count; i++) {
    const socket = new WebSocket(url);
    await new Promise((r, reject) => {
      socket.once('open', r);
      socket.once('error', reject);
    });
    if (signIn !== undefined) {
      // One sign-in at a time: sign-ins in flight count towards the lockout until they settle.
      const reply = new Promise<string>((r) => socket.once('message', (raw) => r(raw.toString())));
      socket.send(JSON.stringify({ type: 'auth', payload: { token: signIn } }));
      const text = await reply;
      if (!text.includes('auth:success')) throw new Error(`sign-in refused: ${text}`);
    }
    sockets.push(socket);
  }
  return sockets;
}

interface Figures {
  idle: number;
  withSockets: number;
  perSocketKb: number;
}

async function measureServer(server: TestServer, snapshot: boolean): Promise<Figures> {
  const auth = { Authorization: `Bearer ${server.password}` };
  await (await fetch(`${server.url}/api/system/version`, { headers: auth })).arrayBuffer();
  const idle = await settledRss(server.process.pid!);
  if (snapshot) {
    server.process.kill('SIGUSR2');
    // The snapshot is written synchronously by the server's main thread; it answers once done.
    await sleep(1000);
    await (await fetch(`${server.url}/api/system/version`, { headers: auth })).arrayBuffer();
    note(`heap snapshot written to ${SNAPSHOT_DIR} (RSS before it: ${idle.toFixed(0)} MB)`);
  }
  note(`idle RSS ${idle.toFixed(0)} MB; opening ${SOCKETS} signed-in sockets`);
  const before = snapshot ? rssMb(server.process.pid!) : idle;
  const sockets = await openSockets(server.wsUrl, SOCKETS, server.password);
  const withSockets = await settledRss(server.process.pid!);
  for (const s of sockets) s.close();
  return { idle, withSockets, perSocketKb: ((withSockets - before) * 1024) / SOCKETS };
}

async function runMode(mode: string, snapshot: boolean): Promise<Figures | null> {
  const nodeArgs = snapshot ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${resolve(SNAPSHOT_DIR!)}`] : [];
  if (mode === 'embedded') {
    process.env.SVC_TEST_MODE = 'embedded';
    const server = await startServer({ nodeArgs, env: { MALLOC_ARENA_MAX: ARENA_MAX } });
    try {
      return await measureServer(server, snapshot);
    } finally {
      await server.stop();
    }
  }
  if (!(await servicesAvailable()).ok) {
    out(`${mode} mode skipped: Postgres/Redis not reachable`);
    return null;
  }
  const services = await createSharedServices();
  const server = await startServer({ services, nodeArgs, env: { MALLOC_ARENA_MAX: ARENA_MAX } });
  try {
    return await measureServer(server, snapshot);
  } finally {
    await server.stop();
    await services.dispose();
  }
}

/** The reference: a bare `ws` server in a process of its own, holding as many idle sockets. */
async function bareWs(): Promise<Figures> {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { WebSocketServer } from 'ws';
       const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
       wss.on('listening', () => process.stdout.write(wss.address().port + '\\n'));
       wss.on('connection', (s) => s.on('message', () => undefined));`,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, MALLOC_ARENA_MAX: ARENA_MAX },
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the bare ws server exited (${code})`)));
      child.stdout!.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim())));
    });
    const idle = await settledRss(child.pid!);
    const sockets = await openSockets(`ws://127.0.0.1:${port}`, SOCKETS);
    const withSockets = await settledRss(child.pid!);
    for (const s of sockets) s.close();
    return { idle, withSockets, perSocketKb: ((withSockets - idle) * 1024) / SOCKETS };
  } finally {
    child.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  if (SNAPSHOT_DIR) mkdirSync(SNAPSHOT_DIR, { recursive: true });
  const results = new Map<string, Figures[]>();
  const bare: Figures[] = [];
  for (let run = 1; run <= RUNS; run++) {
    for (const mode of MODES) {
      note(`run ${run}: ${mode}`);
      const f = await runMode(mode, run === 1 && SNAPSHOT_DIR !== undefined && mode === MODES[0]);
      if (f) results.set(mode, [...(results.get(mode) ?? []), f]);
    }
    note(`run ${run}: bare ws`);
    bare.push(await bareWs());
  }
  const load = loadavg()
    .map((x) => x.toFixed(1))
    .join(', ');
  out(
    `\nMemory, ${SOCKETS} idle sockets (signed in on the server), median of ${RUNS} (load average ${load}; MALLOC_ARENA_MAX=${ARENA_MAX})`,
  );
  out(
    `  ${'process'.padEnd(12)} ${'idle RSS'.padStart(10)} ${`+${SOCKETS} sockets`.padStart(15)} ${'per socket'.padStart(11)}   runs (idle MB / KB per socket)`,
  );
  const row = (name: string, fs: Figures[]): void => {
    out(
      `  ${name.padEnd(12)} ${`${median(fs.map((f) => f.idle)).toFixed(0)} MB`.padStart(10)} ${`${median(fs.map((f) => f.withSockets)).toFixed(0)} MB`.padStart(15)} ${`${median(fs.map((f) => f.perSocketKb)).toFixed(1)} KB`.padStart(11)}   ${fs.map((f) => `${f.idle.toFixed(0)} / ${f.perSocketKb.toFixed(1)}`).join(', ')}`,
    );
  };
  row('bare ws', bare);
  for (const [mode, fs] of results) row(`svc ${mode}`, fs);
  out('\n  target                                          median     ');
  const bareKb = median(bare.map((f) => f.perSocketKb));
  for (const [mode, fs] of results) {
    const idle = median(fs.map((f) => f.idle));
    const kb = median(fs.map((f) => f.perSocketKb));
    if (mode === 'embedded')
      out(
        `  ${'embedded: idle RSS ≤ 350 MB'.padEnd(46)} ${`${idle.toFixed(0)} MB`.padStart(9)}  ${idle <= 350 ? 'met' : 'NOT met'}`,
      );
    out(
      `  ${`${mode}: per signed-in socket ≤ 30 KB`.padEnd(46)} ${`${kb.toFixed(1)} KB`.padStart(9)}  ${kb <= 30 ? 'met' : 'NOT met'}  (bare ws ${bareKb.toFixed(1)} KB)`,
    );
  }
  if (SNAPSHOT_DIR) {
    const files = readdirSync(SNAPSHOT_DIR).filter((f) => f.endsWith('.heapsnapshot'));
    out(`\n  heap snapshot(s) in ${SNAPSHOT_DIR}: ${files.join(', ')}`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
