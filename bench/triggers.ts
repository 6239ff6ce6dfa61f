/**
 * Trigger benchmark: two replicas on one Postgres + Redis.
 *
 *   npx tsc -p tsconfig.build.json && node dist/bench/triggers.js
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
 * Defaults: 10 apps, 2s, 45 s (≈ 220 ticks), 200 webhooks.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { completeEveryRun, startedRuns } from '#testing/trigger-runs.js';
import { sleep, waitFor } from '#testing/wait.js';

const APPS = Number(process.env.BENCH_APPS ?? 10);
const PERIOD = process.env.BENCH_PERIOD ?? '2s';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 45);
const HOOKS = Number(process.env.BENCH_HOOKS ?? 200);
const HOOK_APPS = 10;
const SECRET = 'bench-secret';

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

const spec = (tag: string, subscriptions: object[]) => ({
  spec_version: '1',
  name: `Bench ${tag}`,
  version: '1.0.0',
  author: 'bench',
  description: 'Trigger benchmark.',
  type: 'automation',
  system_prompt: `[[${tag}]] Report at once.`,
  subscriptions,
});

async function main(): Promise<void> {
  const services = await createSharedServices();
  const model = await ScriptedModelServer.start();
  completeEveryRun(model);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-triggers-'));
  const env = {
    SVC_AI_PROVIDER: 'anthropic',
    SVC_AI_API_URL: model.url,
    SVC_AI_API_KEY: 'k',
    SVC_AI_MODEL: 'scripted-model',
  };
  const replicas: TestServer[] = [];
  try {
    replicas.push(await startServer({ services, dataDir, env }), await startServer({ services, dataDir, env }));
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

    console.log(`trigger bench: 2 replicas (Postgres + Redis), ${APPS} apps every ${PERIOD} for ${SECONDS} s`);
    console.log(`  schedule ticks expected ${expected}, runs observed ${observed}`);
    console.log(
      `  schedule skew (run start − scheduled): p50 ${percentile(skews, 50)} ms, p99 ${percentile(skews, 99)} ms, max ${Math.max(...skews)} ms`,
    );
    console.log(`  duplicate runs: ${duplicates}`);
    console.log(
      `  missed ticks: ${missed} (of which run_skipped because the previous run was still going: ${skippedBusy})`,
    );
    console.log(
      `  webhook → run started (${HOOKS} deliveries, alternating replicas): p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms`,
    );
    console.log(
      `  webhook runs ${hookRuns} for ${HOOKS} deliveries (duplicates ${Math.max(0, hookRuns - (HOOKS - lost))}, lost ${lost})`,
    );
  } finally {
    for (const r of replicas) await r.stop();
    await model.close();
    await services.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
