/**
 * How far each HTTP framework could take `bench/http`'s figure: the ceiling under the server's
 * own request path. Build first, then: `node dist/bench/http-frameworks.js`.
 *
 * Starts, each in a process of its own (bench/http-framework-server), a one-controller Nest app
 * answering `GET /api/system/version` with the server's JSON on Nest's stock Express adapter,
 * on this server's ServerHttpAdapter and on Nest's Fastify adapter, each bare and with the
 * per-request work the server does around its handlers (request id, CORS header, token check,
 * duration histogram, log context: BENCH_WORK), plus bare Node `http` (bench/bare-http-server)
 * as the reference, and the same work on bare Node `http` with no framework at all (the ceiling the
 * work leaves to any framework; BENCH_WORK_PARTS picks parts of the work, as the servers read it). Loads each in turn with the load of bench/http (BENCH_HTTP_GENERATOR=wrk
 * for `wrk`; BENCH_HTTP_CONNECTIONS, BENCH_HTTP_SECONDS), BENCH_HTTP_ROUNDS rounds (default 3,
 * each round every server once), and prints each one's median req/s, its share of bare Node's
 * and its CPU per request. The server itself is measured by bench/http.
 */
import type { ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { CONNECTIONS, GENERATOR, load, pct, type Round, SECONDS, startPortPrinter } from './http-load.js';

const ROUNDS = Number(process.env.BENCH_HTTP_ROUNDS ?? 3);
const PASSWORD = 'bench-password';
const BODY = JSON.stringify({ success: true, data: '0.1.0' });
const PATH = '/api/system/version';

interface Contender {
  name: string;
  child: ChildProcess;
  url: string;
  rounds: Round[];
}

async function main(): Promise<void> {
  const contenders: Contender[] = [];
  const add = async (name: string, script: string, args: string[], env: Record<string, string>): Promise<void> => {
    const { child, port } = await startPortPrinter(script, args, { BENCH_PASSWORD: PASSWORD, ...env });
    const url = `http://127.0.0.1:${port}${PATH}`;
    const answer = await fetch(url, { headers: { Authorization: `Bearer ${PASSWORD}` } });
    const text = await answer.text();
    if (answer.status !== 200 || text !== BODY) throw new Error(`${name} answered ${answer.status}: ${text}`);
    contenders.push({ name, child, url, rounds: [] });
  };
  try {
    await add('bare Node http', 'bare-http-server.js', [], { BARE_BODY: BODY });
    for (const work of ['0', '1']) {
      for (const framework of ['express', 'svc-adapter', 'fastify', ...(work === '1' ? ['none'] : [])]) {
        const name =
          framework === 'svc-adapter'
            ? 'Nest + ServerHttpAdapter'
            : framework === 'none'
              ? 'Node http, no framework'
              : `Nest + ${framework}`;
        const label = `${name}${work === '1' ? ' + work' : ''}`;
        await add(label, 'http-framework-server.js', [framework], { BENCH_WORK: work });
      }
    }
    const headers = { Authorization: `Bearer ${PASSWORD}` };
    for (let i = 0; i < ROUNDS; i++) {
      for (const c of contenders) c.rounds.push(await load(c.url, headers, c.child.pid));
    }
  } finally {
    for (const c of contenders) c.child.kill('SIGTERM');
  }

  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  out(
    `\nGET ${PATH} with a token, ${CONNECTIONS} connections from ${GENERATOR === 'wrk' ? 'wrk' : 'a Node http client'}, ` +
      `${ROUNDS} rounds of ${SECONDS} s per server (Node ${process.version}; load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(', ')})`,
  );
  out(`  ${'server'.padEnd(34)} ${'req/s (median)'.padStart(14)}  ${'% of bare'.padStart(9)}  CPU/request  rounds`);
  const median = (xs: number[]): number => pct(xs, 50);
  const bareRps = median(contenders[0]!.rounds.map((r) => r.rps));
  for (const c of contenders) {
    const rps = median(c.rounds.map((r) => r.rps));
    const cpu = median(c.rounds.map((r) => r.cpuPerRequest ?? NaN));
    const errors = c.rounds.reduce((n, r) => n + r.errors, 0);
    out(
      `  ${c.name.padEnd(34)} ${Math.round(rps).toString().padStart(14)}  ${`${((100 * rps) / bareRps).toFixed(1)} %`.padStart(9)}  ` +
        `${(Number.isFinite(cpu) ? `${Math.round(cpu)} µs` : '').padStart(11)}  ${c.rounds.map((r) => Math.round(r.rps)).join(', ')}` +
        (errors > 0 ? `  (${errors} errors)` : ''),
    );
  }
  out(
    '  "+ work": request id, CORS header, token check, duration histogram and log context on every request, as the server does.',
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
