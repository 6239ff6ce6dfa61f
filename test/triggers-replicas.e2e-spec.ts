import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import request from 'supertest';
import { okData } from '#testing/api-client.js';
import type { Replicas } from '#testing/replicas.js';
import { testMode } from '#testing/test-env.js';
import { printServerLines, type TestServer } from '#testing/test-server.js';
import {
  automationSpec,
  everySub,
  startTriggerReplicas,
  type TriggerApi,
  type TriggerChecks,
} from '#testing/trigger-harness.js';
import { sleep, waitFor } from '#testing/wait.js';

describe('triggers across two replicas', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let replicas: Replicas;
  let checks: TriggerChecks;
  let apiTo: (server: TestServer) => TriggerApi;
  let spaceId: string;
  const runsOf = (tag: string) => checks.runsOf(tag);

  /** What the database and the replicas say about an app's queued deliveries (for a run that never came). */
  const explainStuckDeliveries = async (appId: string): Promise<void> => {
    const db = new pg.Client({ connectionString: replicas.services.databaseUrl });
    await db.connect();
    try {
      for (const sql of [
        `SELECT "seq", "kind", "run_id", "received_ms", "started_ms" FROM "trigger_delivery" WHERE "app_id" = $1`,
        `SELECT "key", "claimed_at_ms" FROM "trigger_claim" WHERE "app_id" = $1`,
        `SELECT "status", "running_count", "last_status", "last_error", "pending_escalation_id" FROM "app" WHERE "id" = $1`,
        `SELECT "type", "ts", "content" FROM "app_activity" WHERE "app_id" = $1 ORDER BY "ts"`,
        `SELECT t."id", t."status", t."replica_id", t."heartbeat_at" FROM "agent_turn" t JOIN "conversation" c ON c."id"::text = t."conversation_id" WHERE c."app_id" = $1`,
      ]) {
        const rows = (await db.query(sql, [appId])).rows;
        process.stdout.write(`${sql}\n  ${JSON.stringify(rows)}\n`);
      }
    } finally {
      await db.end();
    }
    for (const server of [replicas.a, replicas.b]) {
      printServerLines(server, 60, /^(?!.*migrations applied).*(trigger|webhook|deliver|run|job|warn|error)/i);
    }
  };

  before(async () => {
    // Reconcile every second and take stale claims (their run not started) over after 10 s.
    ({ replicas, checks, apiTo } = await startTriggerReplicas({
      env: { SVC_TRIGGER_RECONCILE_MS: '1000', SVC_TRIGGER_CLAIM_LEASE_MS: '10000' },
    }));
    spaceId = await checks.space('replicated triggers');
  });
  after(async () => {
    await replicas?.stop();
  });

  it('a webhook sent to both replicas at once starts one run', async () => {
    const secret = 'both';
    const { a, b } = replicas;
    const appId = await checks.install(
      automationSpec('hook', [{ id: 'h', source: { type: 'webhook', config: { path: 'replicated', secret } } }]),
      spaceId,
    );
    for (let round = 0; round < 5; round++) {
      const raw = JSON.stringify({ round });
      const signature = createHmac('sha256', secret).update(raw).digest('hex');
      const send = (s: TestServer) =>
        request(s.url)
          .post('/hooks/replicated')
          .set('Content-Type', 'application/json')
          .set('X-Signature-256', signature)
          .send(raw);
      const answers = await Promise.all([send(a), send(b), send(a), send(b)]);
      for (const res of answers) assert.deepEqual([res.status, res.body], [200, { ok: true, received: true }]);
      // One run at a time per app: the next round waits for this one to end.
      await waitFor(() => runsOf('hook').length > round, 30_000, `run of round ${round}`).catch(async (err: Error) => {
        await explainStuckDeliveries(appId);
        throw err;
      });
      await waitFor(
        async () => okData<{ runningCount: number }>(await apiTo(b).get(`/api/apps/${appId}/state`)).runningCount === 0,
        30_000,
      );
    }
    await sleep(2000);
    const rounds = runsOf('hook').map((r) => (r.data.body as { round: number }).round);
    assert.deepEqual(rounds.sort(), [0, 1, 2, 3, 4], 'one run per delivery, whichever replica got it');
    okData(await checks.api.post(`/api/apps/${appId}/pause`));
  });

  it('a claim whose replica died before the run start is fired once by a reconcile pass', async () => {
    const appId = await checks.install(automationSpec('orphan', [everySub('1d')]), spaceId);
    await waitFor(async () => (await checks.state(appId)).nextRunAtMs !== null, 30_000, 'the schedule row');
    // What a replica dying right after its claim leaves behind: the row moved on to the next
    // occurrence and the claimed one recorded as not started, its lease long over.
    const db = new pg.Client({ connectionString: replicas.services.databaseUrl });
    await db.connect();
    let scheduledMs: number;
    try {
      const [row] = (
        await db.query(`SELECT "subscription_id", "next_ms" FROM "trigger_schedule" WHERE "app_id" = $1`, [appId])
      ).rows as Array<{ subscription_id: string; next_ms: string }>;
      scheduledMs = Number(row!.next_ms);
      const key = `sched-${appId}-orphaned-${scheduledMs}`;
      await db.query(`UPDATE "trigger_schedule" SET "next_ms" = "next_ms" + 86400000 WHERE "app_id" = $1`, [appId]);
      await db.query(
        `INSERT INTO "trigger_occurrence" ("key", "app_id", "subscription_id", "scheduled_ms", "attempt", "claimed_at_ms")
         VALUES ($1, $2, $3, $4, 1, $5)`,
        [key, appId, row!.subscription_id, String(scheduledMs), String(Date.now() - 600_000)],
      );
      await waitFor(() => runsOf('orphan').length >= 1, 60_000, 'the orphaned occurrence fired');
      await sleep(4000); // several reconcile passes of both replicas
      assert.equal(runsOf('orphan').length, 1, 'fired exactly once, whichever replica reconciled first');
      assert.equal(runsOf('orphan')[0]!.data.scheduledAt, new Date(scheduledMs).toISOString());
      const [occ] = (await db.query(`SELECT * FROM "trigger_occurrence" WHERE "key" = $1`, [key])).rows as Array<{
        attempt: number;
        settled_at_ms: string | null;
      }>;
      assert.equal(occ!.attempt, 2, 'taken over once');
      assert.notEqual(occ!.settled_at_ms, null, 'settled');
    } finally {
      await db.end();
    }
    okData(await checks.api.post(`/api/apps/${appId}/pause`));
  });

  it('every 5s over 60 s: one run per tick; killing a replica loses no tick', async () => {
    const appId = await checks.install(automationSpec('tick', [everySub('5s', 't')]), spaceId);
    const installedAt = await checks.installedAt(appId);
    const began = Date.now();
    // Half way, right after a run ended, kill the replica that ran it: the next ticks must still come.
    // Not while the next tick's run may have begun: a run in flight on the killed replica keeps the
    // app busy until its turn is handed on (a lock of 30 s), and the ticks meanwhile are skipped
    // as "already running" by design (one run of an app at a time), not lost to the kill.
    await waitFor(() => runsOf('tick').length >= 5, 60_000, 'five ticks');
    await waitFor(
      async () => {
        const phase = (Date.now() - installedAt) % 5000;
        return phase > 500 && phase < 3000 && (await checks.state(appId)).runningCount === 0;
      },
      30_000,
      'an idle moment between two ticks',
    );
    const session = okData<{ replicaId: string | null }>(await checks.api.get(`/api/agent/session/app-run:${appId}`));
    const pid = Number((session.replicaId ?? String(replicas.b.process.pid)).split('-')[0]);
    const [victim, survivor] = pid === replicas.a.process.pid ? [replicas.a, replicas.b] : [replicas.b, replicas.a];
    victim.process.kill('SIGKILL');
    await victim.exited;
    const killedAt = Date.now();
    try {
      await waitFor(() => Date.now() - began >= 60_000, 70_000);
      await sleep(1000);
      const ticks = runsOf('tick').map((r) => Date.parse(String(r.data.scheduledAt)));
      const seen = ticks.map((t) => t - installedAt).join(',');
      assert.equal(new Set(ticks).size, ticks.length, `no tick twice: ${seen}`);
      ticks.sort((x, y) => x - y);
      for (const t of ticks) assert.equal((t - installedAt) % 5000, 0);
      for (let i = 1; i < ticks.length; i++) {
        if (ticks[i]! - ticks[i - 1]! !== 5000) {
          const activity = okData<Array<{ type: string; content: { reason?: string } }>>(
            await apiTo(survivor).get(`/api/apps/${appId}/activity`),
          );
          const skips = activity.filter((e) => e.type === 'run_skipped').map((e) => e.content.reason);
          assert.fail(`no tick missed: ${seen}, killed at ${killedAt - installedAt}; skipped: ${skips.join(' | ')}`);
        }
      }
      assert.ok(ticks.length >= 11, `ticks over 60 s: ${ticks.length}`);
      assert.ok(ticks.filter((t) => t > killedAt).length >= 4, 'the survivor kept firing');
      const state = okData<{ nextRunAtMs: number }>(await apiTo(survivor).get(`/api/apps/${appId}/state`));
      assert.ok(state.nextRunAtMs > Date.now() - 5000);
    } finally {
      // The next tests need both replicas, whatever this one found.
      await replicas.replace(victim);
    }
    okData(await checks.api.post(`/api/apps/${appId}/pause`));
  });

  it('file triggers: when the watch-lease holder dies, the new holder watches and fires at once', async () => {
    const space = okData<{ id: string; path: string }>(await checks.api.post('/api/spaces', { name: 'handover' }));
    const appId = await checks.install(
      automationSpec('handover', [{ id: 'files', source: { type: 'file', config: { pattern: '*.txt' } } }]),
      space.id,
    );
    const changed = () =>
      runsOf('handover').flatMap((r) => (r.data.changes as Array<{ path: string }>).map((c) => c.path));
    // The holder fires: write until its watcher has the new space and the run comes.
    for (let i = 0; !changed().some((p) => p.startsWith('before-')); i++) {
      assert.ok(i < 30, 'the first holder fires');
      writeFileSync(join(space.path, `before-${i}.txt`), 'x');
      await waitFor(() => changed().some((p) => p.startsWith('before-')), 2000, 'run').catch(() => undefined);
    }
    // Its run ended before the kill: a run still on the holder would keep the app busy until its
    // turn is handed on (a lock of 30 s), which is not what this test is about.
    await checks.idle(appId);
    const LEADER = '"msg":"watching spaces (leader)"';
    const elections = (s: TestServer) => s.output().split(LEADER).length - 1;
    const holders = [replicas.a, replicas.b].filter((s) => elections(s) > 0);
    assert.equal(holders.length, 1, 'one replica holds the watch lease');
    const holder = holders[0]!;
    const survivor = holder === replicas.a ? replicas.b : replicas.a;
    holder.process.kill('SIGKILL');
    await holder.exited;
    await waitFor(() => elections(survivor) > 0, 60_000, 'the survivor takes the lease over');
    const electedAt = Date.now();
    // The new holder watches from its election on, not from its next space re-read (60 s):
    // a change shortly after the election fires.
    for (let i = 0; !changed().some((p) => p.startsWith('after-')); i++) {
      if (Date.now() - electedAt >= 30_000) {
        printServerLines(survivor, 60, /watch|lease|leader|trigger|delivery|run|turn|stalled/i);
        assert.fail('the new holder fires within 30 s of its election');
      }
      writeFileSync(join(space.path, `after-${i}.txt`), 'y');
      await waitFor(() => changed().some((p) => p.startsWith('after-')), 2000, 'run').catch(() => undefined);
    }
    await replicas.replace(holder);
  });
});
