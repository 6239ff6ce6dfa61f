import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import request from 'supertest';
import { faultReport, ownSharedServices, patientClient } from '#testing/fault-harness.js';
import { faultSuiteSkipReason, OwnPostgres, OwnRedis } from '#testing/own-services.js';
import { ScriptedModelServer, scriptedModelEnv } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { printServerLines, startServer, type TestServer } from '#testing/test-server.js';
import { automationSpec, everySub } from '#testing/trigger-harness.js';
import { startedRuns } from '#testing/trigger-runs.js';
import { sleep, waitFor } from '#testing/wait.js';

/**
 * Outages under two replicas (Postgres, then Redis, away 10 s), with backing services of their
 * own as in faults.e2e-spec.ts; a file of their own so that neither file nears the 180 s
 * --test-timeout, which in Node 20 bounds a whole file. Each prints what it tried and what was
 * lost; losing anything fails. Services pass only.
 */

const skip = faultSuiteSkipReason();
if (skip) faultReport(skip);

/** The schedule's period: short, so the ticks before and after each outage come within seconds. */
const TICK_MS = 2000;

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

describe('fault injection under two replicas', { skip: skip ?? false }, () => {
  for (const outage of ['Postgres', 'Redis'] as const) {
    it(
      `${outage} away 10 s under two replicas: both recover without a restart, nothing lost or doubled, no schedule tick missed or doubled`,
      {
        skip: testMode() !== 'services' ? 'runs in the services pass' : false,
      },
      async () => {
        const pg = await OwnPostgres.start();
        const redis = await OwnRedis.start();
        const model = await ScriptedModelServer.start();
        // Runs (their system prompt carries [[outage]]) report at once; chat turns answer with
        // a text naming the message, so no run can take a turn's reply or the other way round.
        model.respond((req) => {
          const system = JSON.stringify(req.body.system ?? '');
          const last = req.body.messages?.at(-1);
          const answered =
            Array.isArray(last?.content) && last.content.some((b: { type?: string }) => b.type === 'tool_result');
          if (system.includes('[[outage]]')) {
            return answered
              ? { steps: [{ text: 'Reported.' }] }
              : { steps: [{ toolCall: { name: 'report_to_user', input: { type: 'complete', summary: 'Done.' } } }] };
          }
          const said = JSON.stringify(last?.content ?? '');
          return { steps: [{ text: `reply to ${/hello \d/.exec(said)?.[0] ?? 'something'}` }] };
        });
        const dataDir = mkdtempSync(join(tmpdir(), 'svc-fault-replicas-'));
        cleanups.push(
          () => pg.dispose(),
          () => redis.stop(),
          () => model.close(),
          async () => rmSync(dataDir, { recursive: true, force: true }),
        );
        const env = {
          ...scriptedModelEnv(model),
          SVC_TRIGGER_RECONCILE_MS: '1000',
          SVC_TRIGGER_CLAIM_LEASE_MS: '10000',
        };
        const start = () => startServer({ services: ownSharedServices(pg, redis), dataDir, env });
        const a = await start();
        cleanups.push(() => a.stop());
        const b = await start();
        cleanups.push(() => b.stop());
        const replicas = [a, b];
        const apiA = patientClient(a);
        const space = (await apiA.post('/api/spaces', { name: 'two replicas' })).body.data as { id: string };
        const installed = await apiA.post('/api/apps/install', {
          spec: automationSpec('outage', [everySub(`${TICK_MS / 1000}s`)]),
          spaceId: space.id,
        });
        assert.equal(installed.status, 200, JSON.stringify(installed.body));
        const appId = installed.body.data.appId as string;
        const installedAt = (await apiA.get(`/api/apps/${appId}`)).body.data.installedAt as number;
        const ticks = () => startedRuns(model.requests).filter((r) => r.tag === 'outage');
        await waitFor(() => ticks().length >= 2, 30_000, 'two ticks before the outage');

        // Records written on both replicas before and during the outage; acknowledged ones must stay, once.
        const acked: string[] = [];
        const statuses = new Map<string, number>();
        const write = async (server: TestServer, title: string) => {
          const res = await patientClient(server)
            .post(`/api/spaces/${space.id}/conversations`, { title })
            .catch(() => ({ status: 0, body: {} }) as { status: number; body: Record<string, unknown> });
          const key = `${res.status}${(res.body as { code?: string })?.code ? ` ${(res.body as { code?: string }).code}` : ''}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
          if (res.status === 200) acked.push((res.body as { data: { id: string } }).data.id);
          return res.status;
        };
        for (let i = 0; i < 6; i++) await write(replicas[i % 2]!, `before ${i}`);

        if (outage === 'Postgres') await pg.stop();
        else await redis.stop();
        const stoppedAt = Date.now();
        let n = 0;
        while (Date.now() - stoppedAt < 10_000) {
          await Promise.all(replicas.map((s) => write(s, `during ${n++}`)));
          await sleep(250);
        }
        // The replicas may reconnect (and fire the outage's ticks) before the resume below has
        // made its own connection and returned: runs started from here on count as after it.
        const resumingAt = Date.now();
        if (outage === 'Postgres') await pg.resume();
        else await redis.restart(); // empty: what a Redis without persistence comes back as
        const backAt = Date.now();

        // Every replica serves again without a restart: ready, writes, and a turn through each.
        for (const server of replicas) {
          await waitFor(
            async () => (await request(server.url).get('/readyz').timeout(10_000)).status === 200,
            30_000,
            `replica ${server.process.pid} ready again`,
          );
        }
        const recoveredMs = Date.now() - backAt;
        for (let i = 0; i < 6; i++) assert.equal(await write(replicas[i % 2]!, `after ${i}`), 200);
        for (const [i, server] of replicas.entries()) {
          const api = patientClient(server);
          const conversationId = (await api.post(`/api/spaces/${space.id}/conversations`, { title: `turn ${i}` })).body
            .data.id as string;
          const text = `reply to hello ${i}`;
          await waitFor(
            async () =>
              (await api.post('/api/agent/message', { spaceId: space.id, conversationId, message: `hello ${i}` }))
                .status === 200,
            20_000,
            `a message accepted by replica ${i}`,
          );
          await waitFor(
            async () => {
              const messages = (await api.get(`/api/spaces/${space.id}/conversations/${conversationId}`)).body.data
                .messages as Array<{ role: string; content: string }>;
              return messages.some((m) => m.role === 'assistant' && m.content === text);
            },
            30_000,
            `the reply through replica ${i} stored`,
          );
          const messages = (await api.get(`/api/spaces/${space.id}/conversations/${conversationId}`)).body.data
            .messages as Array<{ role: string; content: string }>;
          assert.deepEqual(
            messages.map((m) => m.role),
            ['user', 'assistant'],
            `one user message and one reply through replica ${i}`,
          );
        }
        // Ticks go on after the outage: wait for three more.
        const ticksAtBack = ticks().length;
        await waitFor(() => ticks().length >= ticksAtBack + 3, 40_000, 'ticks after the outage').catch((err: Error) => {
          for (const server of replicas) printServerLines(server, 40);
          throw err;
        });
        await apiA.post(`/api/apps/${appId}/pause`, {});
        await sleep(1_000);

        const listed = new Map<string, number>();
        for (const c of (await apiA.get(`/api/spaces/${space.id}/conversations`)).body.data as Array<{ id: string }>)
          listed.set(c.id, (listed.get(c.id) ?? 0) + 1);
        const lost = acked.filter((id) => !listed.has(id)).length;
        const doubled = [...listed.values()].filter((count) => count > 1).length;
        const scheduled = ticks().map((r) => Date.parse(String(r.data.scheduledAt)));
        const unique = new Set(scheduled);
        const sorted = [...unique].sort((x, y) => x - y);
        const offGrid = sorted.filter((t) => (t - installedAt) % TICK_MS !== 0);
        // Grid points from the first tick to the last: each fired once, except those that fell
        // due while the outage lasted (until the first run after it), which fire once as one
        // catch-up, the documented rule for missed occurrences.
        const firstAfter = Math.min(
          ...ticks()
            .filter((r) => r.startedAtMs >= resumingAt)
            .map((r) => r.startedAtMs),
        );
        const inOutage = (t: number) => t > stoppedAt - TICK_MS && t <= firstAfter;
        const missed: number[] = [];
        for (let t = sorted[0]!; t <= sorted.at(-1)!; t += TICK_MS) {
          if (!unique.has(t) && !inOutage(t)) missed.push(t - installedAt);
        }
        const caughtUp = ticks().filter(
          (r) => r.startedAtMs >= resumingAt && Date.parse(String(r.data.scheduledAt)) < backAt,
        );
        // A tick that found the previous run still going is recorded as skipped (by design);
        // one whose run the outage failed is recorded as an outage failure, which must not
        // back the schedule off or pause the app.
        const activity = (await apiA.get(`/api/apps/${appId}/activity?limit=500`)).body.data as Array<{
          type: string;
          content: { reason?: string; outage?: boolean };
        }>;
        const busySkips = activity.filter(
          (e) => e.type === 'run_skipped' && /already running/.test(e.content.reason ?? ''),
        ).length;
        const backoffs = activity
          .filter((e) => e.type === 'run_skipped' && /Backing off|Paused after/.test(e.content.reason ?? ''))
          .map((e) => e.content.reason);
        const outageFailures = activity.filter((e) => e.type === 'run_error' && e.content.outage === true).length;
        faultReport(
          `${outage} away ${((backAt - stoppedAt) / 1000).toFixed(1)} s under two replicas: writes answered ` +
            `${[...statuses].map(([k, v]) => `${v}× ${k}`).join(', ')}; both replicas ready ${recoveredMs} ms after it returned, ` +
            `a turn through each stored once; lost ${lost} of ${acked.length} acknowledged records, doubled ${doubled}; ` +
            `ticks ${scheduled.length} (${unique.size} distinct, ${caughtUp.length} fired for the outage window), ` +
            `not started outside the outage ${missed.length} (skipped while the previous run went on: ${busySkips}), ` +
            `runs failed by the outage ${outageFailures}, back-offs ${backoffs.length}, off the grid ${offGrid.length}; ` +
            `the first run after it started ${firstAfter - backAt} ms from the return (${backAt - resumingAt} ms to return)`,
        );
        assert.equal(lost, 0, 'no acknowledged record lost');
        assert.equal(doubled, 0, 'no record doubled');
        assert.ok(![...statuses.keys()].some((k) => k.startsWith('500')), 'no 500 during the outage');
        assert.equal(
          unique.size,
          scheduled.length,
          `no tick twice: ${scheduled.map((t) => t - installedAt).join(',')}`,
        );
        assert.deepEqual(offGrid, [], 'every tick on its schedule');
        assert.deepEqual(backoffs, [], 'the outage backed no schedule off and paused no app');
        assert.ok(
          missed.length <= busySkips,
          `every tick outside the outage ran or was skipped while its previous run went on: not started ${missed.join(',')}, ${busySkips} skipped`,
        );
        // Skips beyond those of the ticks outside the outage are the catch-up's: it found the run
        // begun before the outage still going (seen under load), which is the rule too.
        const outageSkips = Math.max(0, busySkips - missed.length);
        if (caughtUp.length + outageFailures + outageSkips === 0) {
          // What each replica said about the outage's ticks, for the failure below.
          for (const server of replicas) printServerLines(server, 60, /trigger|schedule|occurrence|run/i);
        }
        assert.ok(
          caughtUp.length + outageFailures + outageSkips >= 1,
          `the ticks due during the outage fire once, when it ends (or their run is recorded as failed by it, or skipped while the previous run went on); ticks (due, started) in ms from the return: ${ticks()
            .map((r) => `${Date.parse(String(r.data.scheduledAt)) - backAt}/${r.startedAtMs - backAt}`)
            .join(' ')}`,
        );
        await b.stop();
        await a.stop();
      },
    );
  }
});
