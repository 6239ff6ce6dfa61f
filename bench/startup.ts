/**
 * Start-up benchmark. Build first, then: `node dist/bench/startup.js`.
 *
 * Starts the server BENCH_STARTS times (default 3) on the embedded default with a new, empty
 * data folder, and prints, for each start and as the median: the time from spawn to the
 * "svc-server listening" line, and where it went (the log lines' own timestamps: embedded
 * database started, migrations, listening). SVC_TEST_MODE=services starts it on Postgres +
 * Redis instead (a fresh database each time).
 */
import { loadavg } from 'node:os';
import { startServer } from '#testing/test-server.js';

const STARTS = Number(process.env.BENCH_STARTS ?? 3);

interface Line {
  msg: string;
  time: string;
  ms?: number;
}

async function once(): Promise<Record<string, number>> {
  const spawned = Date.now();
  const server = await startServer({ waitForListening: false });
  const deadline = Date.now() + 120_000;
  while (!server.output().includes('"msg":"svc-server listening on ')) {
    if (Date.now() > deadline || server.process.exitCode !== null) {
      await server.stop();
      throw new Error(`the server did not start:\n${server.output()}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const lines = server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
  await server.stop();
  const at = (msg: RegExp): number => {
    const line = lines.find((l) => msg.test(l.msg));
    return line ? Date.parse(line.time) - spawned : NaN;
  };
  const firstLine = lines[0] ? Date.parse(lines[0].time) - spawned : NaN;
  const database = lines.find((l) => l.msg === 'embedded database started')?.ms ?? NaN;
  return {
    'first log line': firstLine,
    'embedded database (own ms)': database,
    'database ready': at(/^embedded database started$/),
    'schema ready': at(/migrations applied|schema is current|migrations skipped/),
    listening: at(/^svc-server listening on /),
  };
}

async function main(): Promise<void> {
  const runs: Array<Record<string, number>> = [];
  for (let i = 0; i < STARTS; i++) runs.push(await once());
  const keys = Object.keys(runs[0]!);
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  out(
    `\nStart-up with a new data folder (${process.env.SVC_TEST_MODE === 'services' ? 'Postgres + Redis' : 'embedded'}), ms after spawn`,
  );
  out(`  ${'phase'.padEnd(28)} ${runs.map((_, i) => `run ${i + 1}`.padStart(8)).join(' ')} ${'median'.padStart(8)}`);
  for (const key of keys) {
    const xs = runs.map((r) => r[key]!);
    out(
      `  ${key.padEnd(28)} ${xs.map((x) => String(Math.round(x)).padStart(8)).join(' ')} ${String(Math.round(median(xs))).padStart(8)}`,
    );
  }
  const listening = median(runs.map((r) => r[keys[keys.length - 1]!]!));
  out(
    `  median ${keys[keys.length - 1]}: ${Math.round(listening)} ms (target ≤ 3,000 ms: ${listening <= 3000 ? 'met' : 'NOT met'}; ` +
      `load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(', ')})`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
