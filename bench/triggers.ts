/**
 * Trigger benchmark: two replicas on one Postgres + Redis.
 *
 *   npx tsc -p tsconfig.build.json && node dist/bench/triggers.js [--runs N]
 *
 * Starts a scripted model (every run reports at once) and two server replicas sharing a fresh
 * Postgres database and Redis prefix (TEST_DATABASE_URL / TEST_REDIS_URL, defaults
 * 127.0.0.1:5432 and 127.0.0.1:6379), installs BENCH_APPS digital humans with `every:
 * BENCH_PERIOD` and lets them tick for BENCH_SECONDS, then sends BENCH_HOOKS signed webhooks
 * alternately to either replica. Prints:
 *   - ticks observed, schedule skew p50/p99/max (run start − scheduled time, server clock);
 *   - duplicate runs (the same app and scheduled time twice; must be 0);
 *   - missed ticks (grid points in the window with no run; must be 0);
 *   - webhook → run-started latency p50/p99 (client send → the run's start, same machine clock),
 *     and webhook duplicates / losses.
 * Defaults: 10 apps, 2s, 45 s (≈ 220 ticks), 200 webhooks. The whole measurement runs
 * `--runs N` times (default 3), each on fresh replicas and a fresh database; the summary gives
 * the median of the runs for each figure, beside its target (docs/performance.md, "Targets").
 *
 *   node dist/bench/triggers.js --burst [--runs N]
 *
 * The burst instead: BENCH_BURST (1,000) distinct signed deliveries spread evenly over
 * BENCH_BURST_APPS (10) digital humans, sent as fast as they are answered from BENCH_CONNECTIONS
 * (50) keep-alive connections, spread evenly over BENCH_BURST_REPLICAS (2) replicas. The queue bound stays at its default
 * (SVC_WEBHOOK_QUEUE_MAX 100, i.e. 100 deliveries per app fit); a 429 is retried after its
 * `Retry-After`, as a sender does, and counted. Then waits until every run has ended and checks
 * each delivery started exactly one run. Prints accepted, refused-then-retried, runs started,
 * runs completed, lost, duplicated, intake rate (acknowledged deliveries per second, first send
 * → last acknowledgment) and time to drain (last acknowledgment → last run completed, server
 * clock); exits 1 on any loss or duplicate.
 */
import { createHmac } from 'node:crypto';
import { loadavg } from 'node:os';
import request from 'supertest';
import { startServer, type TestServer } from '#testing/test-server.js';
import { startedRuns } from '#testing/trigger-runs.js';
import { sleep, waitFor } from '#testing/wait.js';
import { burst, type BurstFigures, median, SECRET, spec, startTriggerRig } from './webhook-burst.js';

const APPS = Number(process.env.BENCH_APPS ?? 10);
const PERIOD = process.env.BENCH_PERIOD ?? '2s';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 45);
const HOOKS = Number(process.env.BENCH_HOOKS ?? 200);
const HOOK_APPS = 10;

const periodMs = (() => {
  const m = /^(\d+)([smh])$/.exec(PERIOD);
  if (!m) throw new Error('BENCH_PERIOD like 2s, 1m');
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 's' | 'm' | 'h'];
})();

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Figures {
  expected: number;
  observed: number;
  skewP50: number;
  skewP99: number;
  skewMax: number;
  duplicates: number;
  missed: number;
  skippedBusy: number;
  hookP50: number;
  hookP99: number;
  hookRuns: number;
  hookDuplicates: number;
  hookLost: number;
}

function runsOption(): number {
  const at = process.argv.indexOf('--runs');
  const raw = at >= 0 ? process.argv[at + 1] : (process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? '3');
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error('--runs takes a whole number ≥ 1');
  return n;
}

async function main(): Promise<void> {
  if (process.argv.includes('--burst')) return burstMain();
  const runs = runsOption();
  const all: Figures[] = [];
  for (let i = 1; i <= runs; i++) {
    const f = await measure();
    all.push(f);
    console.log(
      `run ${i}/${runs}: ticks ${f.observed}/${f.expected}, skew p50 ${f.skewP50} ms p99 ${f.skewP99} ms max ${f.skewMax} ms, ` +
        `duplicates ${f.duplicates}, missed ${f.missed} (busy ${f.skippedBusy}), webhook→run p50 ${f.hookP50} ms p99 ${f.hookP99} ms, ` +
        `webhook runs ${f.hookRuns}/${HOOKS} (duplicates ${f.hookDuplicates}, lost ${f.hookLost})`,
    );
  }
  const m = (pick: (f: Figures) => number) => median(all.map(pick));
  const rows: Array<[string, string, string]> = [
    ['schedule ticks observed / expected', `${m((f) => f.observed)} / ${m((f) => f.expected)}`, '≥ 200 ticks'],
    ['schedule skew p50 (run start − scheduled)', `${m((f) => f.skewP50)} ms`, ''],
    ['schedule skew p99', `${m((f) => f.skewP99)} ms`, '≤ 1000 ms'],
    ['duplicate runs', `${m((f) => f.duplicates)}`, '0'],
    ['missed ticks', `${m((f) => f.missed)}`, '0'],
    ['webhook → run started p50', `${m((f) => f.hookP50)} ms`, ''],
    ['webhook → run started p99', `${m((f) => f.hookP99)} ms`, '≤ 100 ms'],
    ['webhook duplicates / lost', `${m((f) => f.hookDuplicates)} / ${m((f) => f.hookLost)}`, '0 / 0'],
  ];
  console.log(
    `\ntrigger bench: 2 replicas (Postgres + Redis), ${APPS} apps every ${PERIOD} for ${SECONDS} s, ${HOOKS} webhooks; ` +
      `median of ${runs} run(s)`,
  );
  const width = Math.max(...rows.map((r) => r[0].length));
  const valueWidth = Math.max(...rows.map((r) => r[1].length));
  for (const [name, value, target] of rows) {
    console.log(`  ${name.padEnd(width)}  ${value.padStart(valueWidth)}${target ? `   target ${target}` : ''}`);
  }
}

async function measure(): Promise<Figures> {
  const { services, model, dataDir, env, dispose } = await startTriggerRig('svc-bench-triggers-');
  const replicas: TestServer[] = [];
  try {
    replicas.push(await startServer({ services, dataDir, env }));
    replicas.push(await startServer({ services, dataDir, env }));
    const [a, b] = replicas as [TestServer, TestServer];
    const post = (s: TestServer, p: string, body: object) =>
      request(s.url).post(p).set('Authorization', `Bearer ${s.password}`).send(body);
    const space = (await post(a, '/api/spaces', { name: 'bench triggers' })).body.data.id as string;

    // ── schedules ──
    const installed: Array<{ tag: string; appId: string; installedAt: number }> = [];
    for (let i = 0; i < APPS; i++) {
      const tag = `tick-${i}`;
      const res = await post(i % 2 ? b : a, '/api/apps/install', {
        spec: spec(tag, [{ id: 't', source: { type: 'schedule', config: { every: PERIOD } } }]),
        spaceId: space,
      });
      const appId = res.body.data.appId as string;
      const app = await request(a.url).get(`/api/apps/${appId}`).set('Authorization', `Bearer ${a.password}`);
      installed.push({ tag, appId, installedAt: app.body.data.installedAt as number });
    }
    const windowEnd = Date.now() + SECONDS * 1000;
    await sleep(SECONDS * 1000);
    // Ticks due up to the window's end, given a moment to start.
    await sleep(Math.min(2000, periodMs));
    const runs = startedRuns(model.requests).filter((r) => r.type === 'schedule');
    const skews: number[] = [];
    let duplicates = 0;
    let missed = 0;
    let expected = 0;
    for (const { tag, installedAt } of installed) {
      const mine = runs.filter((r) => r.tag === tag);
      const seen = new Map<number, number>();
      for (const run of mine) {
        const scheduled = Date.parse(String(run.data.scheduledAt));
        seen.set(scheduled, (seen.get(scheduled) ?? 0) + 1);
        skews.push(run.startedAtMs - scheduled);
      }
      for (const count of seen.values()) duplicates += count - 1;
      for (let t = installedAt + periodMs; t <= windowEnd; t += periodMs) {
        expected++;
        if (!seen.has(t)) missed++;
      }
    }
    const observed = runs.length;
    // A tick that found the app still busy with its previous run is recorded as run_skipped.
    let skippedBusy = 0;
    for (const { appId } of installed) {
      const res = await request(a.url)
        .get(`/api/apps/${appId}/activity?limit=500`)
        .set('Authorization', `Bearer ${a.password}`);
      const entries = (res.body.data ?? []) as Array<{ type: string; ts: number }>;
      skippedBusy += entries.filter((e) => e.type === 'run_skipped' && e.ts <= windowEnd + 2000).length;
    }

    // ── webhooks ──
    for (let i = 0; i < HOOK_APPS; i++) {
      await post(a, '/api/apps/install', {
        spec: spec(`hook-${i}`, [
          { id: 'h', source: { type: 'webhook', config: { path: `bench-hook-${i}`, secret: SECRET } } },
        ]),
        spaceId: space,
      });
    }
    const latencies: number[] = [];
    let lost = 0;
    for (let n = 0; n < HOOKS; n++) {
      const raw = JSON.stringify({ n });
      const signature = createHmac('sha256', SECRET).update(raw).digest('hex');
      const target = n % 2 ? b : a;
      const sentAt = Date.now();
      const res = await request(target.url)
        .post(`/hooks/bench-hook-${n % HOOK_APPS}`)
        .set('Content-Type', 'application/json')
        .set('X-Hub-Signature-256', `sha256=${signature}`)
        .send(raw);
      if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${JSON.stringify(res.body)}`);
      const started = () =>
        startedRuns(model.requests).find((r) => r.type === 'webhook' && (r.data.body as { n?: number }).n === n);
      try {
        await waitFor(() => started() !== undefined, 10_000, `webhook ${n}`);
        latencies.push(started()!.startedAtMs - sentAt);
      } catch {
        lost++;
      }
    }
    await sleep(1000);
    const hookRuns = startedRuns(model.requests).filter((r) => r.type === 'webhook').length;

    return {
      expected,
      observed,
      skewP50: percentile(skews, 50),
      skewP99: percentile(skews, 99),
      skewMax: Math.max(...skews),
      duplicates,
      missed,
      skippedBusy,
      hookP50: percentile(latencies, 50),
      hookP99: percentile(latencies, 99),
      hookRuns,
      hookDuplicates: Math.max(0, hookRuns - (HOOKS - lost)),
      hookLost: lost,
    };
  } finally {
    for (const r of replicas) await r.stop();
    await dispose();
  }
}

// ── burst ───────────────────────────────────────────────────────────────────────────────

const BURST = Number(process.env.BENCH_BURST ?? 1000);
const BURST_APPS = Number(process.env.BENCH_BURST_APPS ?? 10);
/** Replicas the burst's senders are spread over (all-role; `bench/cluster --only webhooks` runs it on 3 with a kill). */
const BURST_REPLICAS = Number(process.env.BENCH_BURST_REPLICAS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** No run started or ended for this long: the waiting stops and what has not run counts as lost. */
const STALL_MS = Number(process.env.BENCH_STALL_S ?? 120) * 1000;

async function burstMain(): Promise<void> {
  const runs = runsOption();
  const all: BurstFigures[] = [];
  for (let i = 1; i <= runs; i++) {
    const f = await burst(i, {
      deliveries: BURST,
      apps: BURST_APPS,
      connections: CONNECTIONS,
      replicas: BURST_REPLICAS,
      stallMs: STALL_MS,
    });
    all.push(f);
    console.log(
      `run ${i}/${runs} (load ${f.load}): accepted ${f.accepted}/${BURST}, refused-then-retried ${f.refusals} ` +
        `(${f.refusedDeliveries} deliveries), runs started ${f.started}, completed ${f.completed} ` +
        `(failed ${f.failed}, skipped ${f.skipped}), lost ${f.lost}, duplicated ${f.duplicated}, ` +
        `intake ${f.intakePerS.toFixed(1)} deliveries/s (${f.sendS.toFixed(1)} s), drain ${f.drainS.toFixed(1)} s ` +
        `(first send → last run ${f.totalS.toFixed(1)} s)`,
    );
  }
  const m = (pick: (f: BurstFigures) => number) => median(all.map(pick));
  const each = (pick: (f: BurstFigures) => number, digits = 0) => all.map((f) => pick(f).toFixed(digits)).join(', ');
  const rows: Array<[string, string, string, string]> = [
    ['deliveries accepted', each((f) => f.accepted), `${m((f) => f.accepted)}`, `${BURST}`],
    ['refused (429) then retried', each((f) => f.refusals), `${m((f) => f.refusals)}`, ''],
    ['runs started', each((f) => f.started), `${m((f) => f.started)}`, `${BURST}`],
    ['runs completed', each((f) => f.completed), `${m((f) => f.completed)}`, `${BURST}`],
    ['lost', each((f) => f.lost), `${m((f) => f.lost)}`, '0'],
    ['duplicated', each((f) => f.duplicated), `${m((f) => f.duplicated)}`, '0'],
    ['intake (acknowledged deliveries/s)', each((f) => f.intakePerS, 1), m((f) => f.intakePerS).toFixed(1), ''],
    ['time to drain (last ack → last run ended)', each((f) => f.drainS, 1), `${m((f) => f.drainS).toFixed(1)} s`, ''],
    ['first send → last run ended', each((f) => f.totalS, 1), `${m((f) => f.totalS).toFixed(1)} s`, ''],
  ];
  console.log(
    `\ntrigger burst: ${BURST_REPLICAS} replicas (Postgres + Redis), ${BURST} deliveries to ${BURST_APPS} apps from ${CONNECTIONS} ` +
      `connections (SVC_WEBHOOK_QUEUE_MAX default); median of ${runs} run(s); load average now ` +
      loadavg()
        .map((x) => x.toFixed(1))
        .join(', '),
  );
  const width = Math.max(...rows.map((r) => r[0].length));
  const runsWidth = Math.max(...rows.map((r) => r[1].length));
  for (const [name, values, med, target] of rows) {
    console.log(
      `  ${name.padEnd(width)}  ${values.padEnd(runsWidth)}  median ${med}${target ? `   must be ${target}` : ''}`,
    );
  }
  const bad = all.some((f) => f.lost > 0 || f.duplicated > 0 || f.accepted !== BURST || f.completed !== f.started);
  if (bad) {
    console.log('FAILED: a delivery was lost, duplicated, not accepted or its run did not complete');
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
