/**
 * The webhook burst shared by `bench/triggers --burst` and `bench/cluster --only webhooks`:
 * distinct signed deliveries spread evenly over digital humans, sent as fast as they are answered
 * from keep-alive connections spread evenly over all-role replicas on one Postgres + Redis. A
 * 429 is retried after its `Retry-After`, as a sender does, and counted. Then waits until every
 * run has ended and checks each accepted delivery started exactly one run (docs/performance.md).
 * BENCH_CPU_PROF=<dir> runs the replicas under `node --cpu-prof` and leaves their profiles there
 * (summarize one with bench/profile-summary). Postgres transactions per accepted delivery
 * (`pg_stat_database.xact_commit` of the burst's database; every statement outside a transaction
 * is one) are counted over the intake and over the whole burst, runs included, and so is the
 * CPU time of the replicas and of the database's Postgres backends (/proc): figures that other
 * work on the machine changes less than it changes the rates.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { completeEveryRun, startedRuns } from '#testing/trigger-runs.js';
import { sleep } from '#testing/wait.js';
import { processCpuMicros } from './process-cpu.js';

const CPU_PROF = process.env.BENCH_CPU_PROF;
const CPU_PROF_ARGS = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];

export const SECRET = 'bench-secret';

/** An automation spec whose system prompt carries `[[tag]]` (the scripted model's runs are told apart by it). */
export const spec = (tag: string, subscriptions: object[]) => ({
  spec_version: '1',
  name: `Bench ${tag}`,
  version: '1.0.0',
  author: 'bench',
  description: 'Trigger benchmark.',
  type: 'automation',
  system_prompt: `[[${tag}]] Report at once.`,
  subscriptions,
});

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * What the trigger benches start their replicas on: shared Postgres + Redis, a scripted model that
 * reports every run at once, a data folder and the replicas' environment. `dispose` closes them
 * all; stop the replicas first.
 */
export async function startTriggerRig(dataPrefix: string) {
  const services = await createSharedServices();
  const model = await ScriptedModelServer.start();
  completeEveryRun(model);
  const dataDir = mkdtempSync(join(tmpdir(), dataPrefix));
  const env = {
    SVC_AI_PROVIDER: 'anthropic',
    SVC_AI_API_URL: model.url,
    SVC_AI_API_KEY: 'k',
    SVC_AI_MODEL: 'scripted-model',
  };
  const dispose = async (): Promise<void> => {
    await model.close();
    await services.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { services, model, dataDir, env, dispose };
}

export interface BurstOptions {
  deliveries: number;
  apps: number;
  connections: number;
  replicas: number;
  /**
   * SVC_ROLE of each replica (default every one `all`); deliveries go to those that are not
   * `worker`. `api,api,worker` keeps the runs off the replicas that take the deliveries, so their
   * CPU is the intake's alone.
   */
  roles?: ReadonlyArray<'all' | 'api' | 'worker'>;
  /** No run started or ended for this long: the waiting stops and what has not run counts as lost. */
  stallMs: number;
  /** SIGKILL the last replica once half the deliveries were acknowledged; its senders move to the next live one. */
  kill?: boolean;
  log?: (line: string) => void;
}

export interface BurstFigures {
  accepted: number;
  refusals: number;
  refusedDeliveries: number;
  /** Sends that failed at the connection (the killed replica) and went to another replica. */
  resent: number;
  started: number;
  completed: number;
  failed: number;
  skipped: number;
  lost: number;
  duplicated: number;
  intakePerS: number;
  sendS: number;
  drainS: number;
  totalS: number;
  /** After a kill: kill → the last run ended (s); NaN without one. */
  recoveryS: number;
  /**
   * Postgres transactions per accepted delivery from the first send to the last acknowledgment
   * (the drain jobs and runs of that time included; the statistics lag up to a second).
   */
  pgPerDeliveryIntake: number;
  /** The same from the first send to the end (every run included). */
  pgPerDeliveryTotal: number;
  /** CPU ms of the replicas per accepted delivery, first send → last acknowledgment (runs of that time included). */
  replicaCpuMsIntake: number;
  /** CPU ms of the database's Postgres backends per accepted delivery, the same span. */
  pgCpuMsIntake: number;
  /** CPU ms per accepted delivery of the replicas that take deliveries (not `worker`), the same span. */
  intakeReplicaCpuMsIntake: number;
  /** The replicas' CPU ms per delivery from the first send to the end (every run included). */
  replicaCpuMsTotal: number;
  /** The Postgres backends' CPU ms per delivery, the same span. */
  pgCpuMsTotal: number;
  load: string;
}

interface Answer {
  status: number;
  retryAfterS: number | null;
  body: string;
}

/** One POST on the given keep-alive agent (one connection per agent). */
function postRaw(agent: Agent, server: TestServer, path: string, raw: string, headers: Record<string, string>) {
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(raw), ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const retry = res.headers['retry-after'];
          resolve({ status: res.statusCode ?? 0, retryAfterS: retry === undefined ? null : Number(retry), body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(raw);
  });
}

/** Every activity entry of an app (pages of 200, newest first). */
export async function allActivity(server: TestServer, appId: string) {
  const seen = new Map<string, { id: string; runId: string | null; type: string; ts: number }>();
  let before: number | undefined;
  for (;;) {
    const res = await request(server.url)
      .get(`/api/apps/${appId}/activity?limit=200${before === undefined ? '' : `&before=${before}`}`)
      .set('Authorization', `Bearer ${server.password}`);
    if (res.status !== 200) throw new Error(`activity answered ${res.status}: ${JSON.stringify(res.body)}`);
    const page = res.body.data as Array<{ id: string; runId: string | null; type: string; ts: number }>;
    let fresh = 0;
    for (const e of page) {
      if (seen.has(e.id)) continue;
      seen.set(e.id, e);
      fresh++;
    }
    if (page.length < 200 || fresh === 0) break;
    // `before` is strict: step one ms past the oldest so entries sharing its ms are read again (and de-duplicated).
    before = Math.min(...page.map((e) => e.ts)) + 1;
  }
  return [...seen.values()];
}

/** One burst on fresh replicas, a fresh database and Redis prefix; `round` tells the runs' deliveries apart. */
export async function burst(round: number, options: BurstOptions): Promise<BurstFigures> {
  const { deliveries, apps, connections, stallMs } = options;
  const log = options.log ?? ((line: string) => console.log(line));
  const load = loadavg()
    .map((x) => x.toFixed(1))
    .join(', ');
  const { services, model, dataDir, env, dispose } = await startTriggerRig('svc-bench-burst-');
  const replicas: TestServer[] = [];
  const agents: Agent[] = [];
  let stats: pg.Client | null = null;
  try {
    // On a loaded machine a replica may take longer than the helper's 60 s to start: that is not
    // what this bench measures, so it is started again (up to three tries).
    const roles = options.roles ?? Array.from({ length: options.replicas }, () => 'all' as const);
    const startReplica = async (role: 'all' | 'api' | 'worker'): Promise<TestServer> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await startServer({ services, dataDir, env: { ...env, SVC_ROLE: role }, nodeArgs: CPU_PROF_ARGS });
        } catch (err) {
          if (attempt === 3) throw err;
          log(`run ${round}: a replica did not start (try ${attempt}); starting it again`);
        }
      }
    };
    // One at a time, so a replica that started is stopped below even when the next one fails.
    for (const role of roles) replicas.push(await startReplica(role));
    const takers = replicas.filter((_, i) => roles[i] !== 'worker');
    const [a] = takers as [TestServer, ...TestServer[]];
    const post = (p: string, body: object) =>
      request(a.url).post(p).set('Authorization', `Bearer ${a.password}`).send(body);
    const space = (await post('/api/spaces', { name: 'bench burst' })).body.data.id as string;
    const appIds: string[] = [];
    for (let i = 0; i < apps; i++) {
      const res = await post('/api/apps/install', {
        spec: spec(`burst-${i}`, [
          { id: 'h', source: { type: 'webhook', config: { path: `bench-burst-${i}`, secret: SECRET } } },
        ]),
        spaceId: space,
      });
      if (res.status !== 200) throw new Error(`install answered ${res.status}: ${JSON.stringify(res.body)}`);
      appIds.push(res.body.data.appId as string);
    }

    // Committed transactions of the burst's database so far (this client's own reads included: 3).
    stats = new pg.Client({ connectionString: services.databaseUrl });
    await stats.connect();
    const xacts = async (): Promise<number> => {
      const { rows } = await stats!.query<{ n: string }>(
        `SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = current_database()`,
      );
      return Number(rows[0]?.n ?? NaN);
    };
    // CPU so far of the replicas, and of the database's backends (each pid's first reading kept:
    // a backend first seen later started after the mark and counts from zero).
    const cpuOf = (rs: TestServer[]): number => rs.reduce((sum, r) => sum + processCpuMicros(r.process.pid), 0);
    const replicaCpu = (): number => cpuOf(replicas);
    const backendBase = new Map<number, number>();
    let marked = false;
    const backendCpu = async (): Promise<number> => {
      const { rows } = await stats!.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`,
      );
      let sum = 0;
      for (const { pid } of rows) {
        const now = processCpuMicros(pid);
        if (!Number.isFinite(now)) continue;
        if (!backendBase.has(pid)) backendBase.set(pid, marked ? 0 : now);
        sum += now - backendBase.get(pid)!;
      }
      return sum;
    };
    // ── intake: `connections` senders, each on one keep-alive connection to one replica ──
    const accepted = new Set<number>();
    const refused = new Set<number>();
    const dead = new Set<TestServer>();
    let refusals = 0;
    let resent = 0;
    let next = 0;
    let lastAck = 0;
    let killedAt = NaN;
    const xactsBefore = await xacts();
    await backendCpu();
    marked = true;
    const cpuBefore = replicaCpu();
    const takersBefore = cpuOf(takers);
    const firstSend = Date.now();
    const sender = async (w: number): Promise<void> => {
      let agent = new Agent({ keepAlive: true, maxSockets: 1 });
      agents.push(agent);
      let target = takers[w % takers.length]!;
      for (let n = next++; n < deliveries; n = next++) {
        const raw = JSON.stringify({ n, round });
        const headers = {
          'X-Hub-Signature-256': `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`,
          'X-GitHub-Delivery': `burst-${round}-${n}`,
          'X-GitHub-Event': 'issues',
        };
        let failedOver = false;
        for (;;) {
          let res: Answer;
          try {
            res = await postRaw(agent, target, `/hooks/bench-burst-${n % apps}`, raw, headers);
          } catch (err) {
            // Only the killed replica's connections fail: the sender goes on with the next live one.
            if (!dead.has(target)) throw err;
            resent++;
            failedOver = true;
            target = replicas.find((r) => !dead.has(r))!;
            agent = new Agent({ keepAlive: true, maxSockets: 1 });
            agents.push(agent);
            continue;
          }
          if (res.status === 200) {
            const body = JSON.parse(res.body) as { received?: boolean; duplicate?: boolean };
            // A resend after a kill may find the dead replica had taken it: a repeat is then right.
            if (body.duplicate && !failedOver) throw new Error(`delivery ${n} was answered as a repeat: ${res.body}`);
            accepted.add(n);
            lastAck = Math.max(lastAck, Date.now());
            if (options.kill && Number.isNaN(killedAt) && accepted.size >= deliveries / 2) {
              const victim = replicas.at(-1)!;
              dead.add(victim);
              killedAt = Date.now();
              victim.process.kill('SIGKILL');
              log(`run ${round}: killed replica ${replicas.length} at ${accepted.size} deliveries acknowledged`);
            }
            break;
          }
          if (res.status === 429) {
            refusals++;
            refused.add(n);
            await sleep((res.retryAfterS ?? 1) * 1000);
            continue;
          }
          throw new Error(`delivery ${n} answered ${res.status}: ${res.body}`);
        }
      }
    };
    await Promise.all(Array.from({ length: connections }, (_, w) => sender(w)));
    const xactsIntake = await xacts();
    const cpuIntake = replicaCpu();
    const takersIntake = cpuOf(takers);
    const pgCpuIntake = await backendCpu();

    // ── drain: every accepted delivery's run started and ended ──
    const burstRuns = () => startedRuns(model.requests).filter((r) => r.type === 'webhook');
    const ended = async () => {
      let completed = 0;
      let failed = 0;
      let skipped = 0;
      let last = 0;
      for (const appId of appIds) {
        const entries = await allActivity(a, appId);
        const done = new Set(entries.filter((e) => e.type === 'run_complete').map((e) => e.runId));
        completed += done.size;
        failed += new Set(entries.filter((e) => e.type === 'run_error').map((e) => e.runId)).size;
        skipped += entries.filter((e) => e.type === 'run_skipped').length;
        for (const e of entries) if (e.type === 'run_complete') last = Math.max(last, e.ts);
      }
      return { completed, failed, skipped, last };
    };
    let progress = -1;
    let progressAt = Date.now();
    let state = { completed: 0, failed: 0, skipped: 0, last: 0 };
    for (;;) {
      const started = burstRuns().length;
      if (started >= accepted.size) state = await ended();
      if (state.completed + state.failed >= accepted.size && started >= accepted.size) break;
      if (started + state.completed !== progress) {
        progress = started + state.completed;
        progressAt = Date.now();
      } else if (Date.now() - progressAt > stallMs) {
        log(`run ${round}: nothing started or ended for ${stallMs / 1000} s; stopped waiting`);
        break;
      }
      await sleep(started >= accepted.size ? 2000 : 500);
    }
    // A moment for a late duplicate to show.
    await sleep(2000);
    state = await ended();
    const xactsEnd = await xacts();
    const cpuEnd = replicaCpu();
    const pgCpuEnd = await backendCpu();
    const runsByN = new Map<number, number>();
    const runs = burstRuns();
    for (const r of runs) {
      const body = r.data.body as { n?: number; round?: number } | undefined;
      if (body?.round !== round || typeof body.n !== 'number') continue;
      runsByN.set(body.n, (runsByN.get(body.n) ?? 0) + 1);
    }
    let lost = 0;
    let duplicated = 0;
    for (const n of accepted) if (!runsByN.has(n)) lost++;
    for (const count of runsByN.values()) duplicated += count - 1;
    const sendS = (lastAck - firstSend) / 1000;
    return {
      accepted: accepted.size,
      refusals,
      refusedDeliveries: refused.size,
      resent,
      started: runs.length,
      completed: state.completed,
      failed: state.failed,
      skipped: state.skipped,
      lost,
      duplicated,
      intakePerS: accepted.size / sendS,
      sendS,
      drainS: Math.max(0, state.last - lastAck) / 1000,
      totalS: (state.last - firstSend) / 1000,
      recoveryS: Number.isNaN(killedAt) ? NaN : (state.last - killedAt) / 1000,
      pgPerDeliveryIntake: (xactsIntake - xactsBefore) / accepted.size,
      pgPerDeliveryTotal: (xactsEnd - xactsBefore) / accepted.size,
      replicaCpuMsIntake: (cpuIntake - cpuBefore) / 1000 / accepted.size,
      pgCpuMsIntake: pgCpuIntake / 1000 / accepted.size,
      intakeReplicaCpuMsIntake: (takersIntake - takersBefore) / 1000 / accepted.size,
      replicaCpuMsTotal: (cpuEnd - cpuBefore) / 1000 / accepted.size,
      pgCpuMsTotal: pgCpuEnd / 1000 / accepted.size,
      load,
    };
  } finally {
    await stats?.end().catch(() => undefined);
    for (const agent of agents) agent.destroy();
    for (const r of replicas) await r.stop();
    await dispose();
  }
}
