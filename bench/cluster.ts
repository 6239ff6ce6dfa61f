/**
 * Scale-out benchmark: replicas of the server on one Postgres + Redis, on this one machine.
 *
 *   npm run build && node dist/bench/cluster.js [--runs N] [--only fanout|pool|schedules|webhooks] [--no-kill | --kill-only]
 *
 * 1. **Fan-out** (`fanout`): BENCH_CLIENTS (1,000) signed-in sockets spread evenly over the
 *    replicas, each subscribed to one of BENCH_CONVERSATIONS (100) conversations; then one turn
 *    in every conversation at once (posted round robin to the replicas), each streaming
 *    BENCH_CHUNKS (100) chunks at BENCH_RATE (100) chunks/s. Every client must receive every
 *    event of its conversation in order (seq) and every chunk: lost, reordered and duplicated
 *    are counted (target 0). Relay latency (model writes a chunk → a client receives it) p50/p99
 *    on 3 replicas beside the same scenario on 1 replica in the same run (the reference), and the
 *    servers' resident memory added per 1,000 signed-in sockets.
 * 2. **Worker pool** (`pool`): BENCH_TURNS (1,000) turns posted at once (50 in flight) to the API
 *    replicas of two topologies: 2 api + 1 worker, and 3 all-role replicas, the second once more
 *    with one replica killed (SIGKILL) when half the turns have started. Every turn must end
 *    (complete, or interrupted when its replica died: never silent); printed are turns/s,
 *    POST sent → agent:turn-start (the queue wait included) p50/p99, and after a kill the time until every
 *    turn the dead replica held had ended.
 * 3. **Schedules** (`schedules`): BENCH_SCHEDULE_APPS (10,000) digital humans installed through the
 *    API (BENCH_INSTALLS_IN_FLIGHT at once, round robin over 3 all-role replicas), each with one
 *    `every` schedule whose period is chosen at install so that its first tick falls at its place
 *    in a BENCH_WINDOW_S (120 s) window starting BENCH_SCHEDULE_LEAD_S after the first install.
 *    Per first tick: skew (run begun − scheduled time, both the server's: the occurrence's
 *    `started_at_ms`, written just before the run's trigger message), misses (not begun within
 *    BENCH_SCHEDULE_WAIT_S after the window), duplicates (trigger messages of one occurrence's run
 *    id), and how many runs reached the model (they wait for run slots); then the replicas are restarted and their first reconcile
 *    pass timed (the "schedules reconciled" log line). Once more with the third replica killed
 *    (SIGKILL) in the middle of the window: the same figures after recovery and kill → last tick.
 * 4. **Webhook intake** (`webhooks`): the burst of `bench/triggers --burst` (bench/webhook-burst.ts)
 *    on 3 all-role replicas: BENCH_HOOK_DELIVERIES (2,000) distinct deliveries to BENCH_HOOK_APPS
 *    (50) digital humans from BENCH_CONNECTIONS (50) keep-alive connections (BENCH_HOOK_ROLES, e.g.
 *    `api,api,worker`: other roles, deliveries sent to the api replicas only); accepted, lost,
 *    duplicated, intake deliveries/s; once more with the third replica killed at half (its
 *    senders move to the next replica).
 * `--no-kill` leaves the kill runs of 2, 3 and 4 out, `--kill-only` runs only those. Each scenario runs `--runs N` times (default 3) on fresh replicas and a fresh database; the
 * summary gives the median of the runs beside the target. Figures of one machine: every replica,
 * Postgres, Redis and the clients share its cores (docs/performance.md, "Scale-out").
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import pg from 'pg';
import WebSocket from 'ws';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { servicesAvailable } from '#testing/test-env.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { completeEveryRun, startedRuns, type StartedRun } from '#testing/trigger-runs.js';
import { startStampedModel, type StampedModel } from './stamped-model.js';
import { burst, type BurstFigures, spec } from './webhook-burst.js';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 100);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const TURNS = Number(process.env.BENCH_TURNS ?? 1000);
const IN_FLIGHT = 50;
/** BENCH_CPU_PROF=<dir>: the replicas run under `node --cpu-prof` and leave their profiles there (not the killed one's). */
const CPU_PROF_ARGS = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
const SCHEDULE_APPS = Number(process.env.BENCH_SCHEDULE_APPS ?? 10_000);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_S ?? 120) * 1000;
/** Installs in flight at once (round robin over the replicas). */
const INSTALLS_IN_FLIGHT = Number(process.env.BENCH_INSTALLS_IN_FLIGHT ?? 24);
/**
 * How the digital humans are installed: `api` (POST /api/apps/install, BENCH_INSTALLS_IN_FLIGHT at
 * once) or `sql` (one installed through the API, the rest copied from its row in one INSERT, then
 * the replicas restarted so their first reconcile pass builds every schedule: the API installed
 * ~10/s on the loaded development machine, 17 minutes for 10,000).
 */
const SEED = process.env.BENCH_SCHEDULE_SEED ?? (SCHEDULE_APPS > 1000 ? 'sql' : 'api');
/** From the first install to the window's start: every install (and with `sql` the restart) must be done by then. */
const LEAD_MS =
  Number(process.env.BENCH_SCHEDULE_LEAD_S ?? (SEED === 'sql' ? 180 : Math.ceil(45 + SCHEDULE_APPS / 10))) * 1000;
/** SVC_QUEUE_CONCURRENCY of the schedule scenario's replicas. */
const SCHEDULE_CONCURRENCY = Number(process.env.BENCH_SCHEDULE_CONCURRENCY ?? 64);
/** After the window, ticks are waited for this long at most; one not started by then counts as missed. */
const WAIT_MS = Number(process.env.BENCH_SCHEDULE_WAIT_S ?? 600) * 1000;
const HOOK_DELIVERIES = Number(process.env.BENCH_HOOK_DELIVERIES ?? 2000);
const HOOK_APPS = Number(process.env.BENCH_HOOK_APPS ?? 50);
const HOOK_CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** SVC_ROLE of the webhook scenario's replicas, e.g. `api,api,worker` (deliveries go to the api ones). */
const HOOK_ROLES = (process.env.BENCH_HOOK_ROLES ?? 'all,all,all').split(',') as Array<'all' | 'api' | 'worker'>;
/** Also run each scenario with one replica killed mid-way (`--no-kill` leaves it out). */
const KILL = !process.argv.includes('--no-kill');
/** Only the kill runs of 3 and 4 (`--kill-only`). */
const KILL_ONLY = process.argv.includes('--kill-only');
const args = process.argv.slice(2);
const RUNS = Number(args[args.indexOf('--runs') + 1] || 3);
const ONLY = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;

const note = (line: string): boolean => process.stderr.write(`[bench] ${line}\n`);
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (msecs: number): Promise<void> => new Promise((r) => setTimeout(r, msecs));
const pct = (xs: number[], p: number): number => {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const median = (xs: number[]): number => pct(xs, 50);

/** Resident memory of a process, bytes (0 when unreadable). */
function rssOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * A replica, started again (up to three tries) when it is not listening within the helper's
 * 150 s: on the loaded development machine a start took longer, which is not what this measures.
 */
async function startReplica(options: Parameters<typeof startServer>[0]): Promise<TestServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServer({ ...options, nodeArgs: options?.nodeArgs ?? CPU_PROF_ARGS });
    } catch (err) {
      if (attempt === 3) throw err;
      note(`a replica did not start (try ${attempt}); starting it again`);
    }
  }
}

interface Cluster {
  replicas: TestServer[];
  /** Replicas that serve HTTP and WebSocket. */
  api: TestServer[];
  services: SharedServices;
  dataDir: string;
  stop(): Promise<void>;
}

/** Replicas on one fresh database, Redis prefix and data folder; `roles` one entry per replica. */
async function startCluster(roles: Array<'all' | 'api' | 'worker'>, env: Record<string, string>): Promise<Cluster> {
  const services = await createSharedServices();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-cluster-'));
  const replicas: TestServer[] = [];
  // The first one migrates the fresh database; the others start against it.
  replicas.push(await startReplica({ services, dataDir, env: { ...env, SVC_ROLE: roles[0]! } }));
  replicas.push(
    ...(await Promise.all(
      roles.slice(1).map((role) => startReplica({ services, dataDir, env: { ...env, SVC_ROLE: role } })),
    )),
  );
  return {
    replicas,
    api: replicas.filter((_, i) => roles[i] !== 'worker'),
    services,
    dataDir,
    async stop() {
      await Promise.all(replicas.map((r) => r.stop().catch(() => undefined)));
      await services.dispose().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A signed-in socket; `onFrame` sees each frame's text after sign-in. */
async function signedInSocket(server: TestServer, onFrame: (text: string) => void): Promise<WebSocket> {
  const socket = new WebSocket(server.wsUrl);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const reply = await new Promise<string>((resolve) => {
    socket.once('message', (raw) => resolve(raw.toString()));
    socket.send(JSON.stringify({ type: 'auth', payload: { token: server.password } }));
  });
  if (!reply.includes('auth:success')) throw new Error(`sign-in refused: ${reply}`);
  socket.on('message', (raw) => onFrame(raw.toString()));
  return socket;
}

/** Subscribes and waits until the server has taken it (a ping after it is answered in order). */
async function subscribe(socket: WebSocket, conversationIds: string[]): Promise<void> {
  for (const conversationId of conversationIds)
    socket.send(JSON.stringify({ type: 'subscribe', payload: { conversationId } }));
  await new Promise<void>((resolve) => {
    const onPong = (raw: WebSocket.RawData): void => {
      if (raw.toString() !== '{"type":"pong"}') return;
      socket.off('message', onPong);
      resolve();
    };
    socket.on('message', onPong);
    socket.send('{"type":"ping"}');
  });
}

/** Channel, conversation, seq and delta of a frame, read by position (the clients share this process). */
function scan(text: string): { channel?: string; conversationId?: string; seq?: number; delta?: string } {
  const stringAfter = (key: string): string | undefined => {
    const at = text.indexOf(key);
    return at === -1 ? undefined : text.slice(at + key.length, text.indexOf('"', at + key.length));
  };
  const seqAt = text.indexOf('"seq":');
  return {
    channel: stringAfter('"channel":"'),
    conversationId: stringAfter('"conversationId":"'),
    delta: stringAfter('"delta":"'),
    ...(seqAt === -1 ? {} : { seq: Number.parseInt(text.slice(seqAt + 6, seqAt + 32), 10) }),
  };
}

async function createConversations(server: TestServer, spaceId: string, count: number): Promise<string[]> {
  const auth = { Authorization: `Bearer ${server.password}` };
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push((await request(server.url).post(`/api/spaces/${spaceId}/conversations`).set(auth).send({})).body.data.id);
  return ids;
}

async function createSpace(server: TestServer): Promise<string> {
  const res = await request(server.url)
    .post('/api/spaces')
    .set({ Authorization: `Bearer ${server.password}` })
    .send({ name: `bench ${Date.now()}` });
  return res.body.data.id as string;
}

/** Posts `message` to each conversation, IN_FLIGHT at a time, round robin over `servers`; `onSent` when each request leaves. */
async function postTurns(
  servers: TestServer[],
  spaceId: string,
  conversationIds: string[],
  message: string,
  onSent: (conversationId: string, at: number) => void = () => undefined,
): Promise<string[]> {
  const agents = servers.map(() => new Agent({ keepAlive: true, maxSockets: IN_FLIGHT }));
  let next = 0;
  const failed: string[] = [];
  const worker = async (): Promise<void> => {
    while (next < conversationIds.length) {
      const i = next++;
      const server = servers[i % servers.length]!;
      const conversationId = conversationIds[i]!;
      onSent(conversationId, now());
      const res = await request(server.url)
        .post('/api/agent/message')
        .agent(agents[i % servers.length]!)
        .set({ Authorization: `Bearer ${server.password}` })
        .send({ spaceId, conversationId, message })
        .catch(() => null);
      if (res?.status !== 200) {
        // Said, not only counted: a refused POST is no silent loss, but a 5xx would be a fault.
        failed.push(conversationId);
        if (failed.length <= 5)
          note(
            `POST for ${conversationId} to ${server.url} answered ${res ? `${res.status} ${JSON.stringify(res.body).slice(0, 200)}` : 'nothing (connection failed)'}`,
          );
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  for (const a of agents) a.destroy();
  return failed;
}

interface FanoutFigures {
  replicas: number;
  clients: number;
  deliveries: number;
  lost: number;
  reordered: number;
  duplicated: number;
  p50: number;
  p99: number;
  rssPer1000: number;
}

/** Scenario 1 on `replicaCount` all-role replicas. */
async function fanout(model: StampedModel, replicaCount: number): Promise<FanoutFigures> {
  const cluster = await startCluster(
    Array.from({ length: replicaCount }, () => 'all' as const),
    { ...model.env, SVC_QUEUE_CONCURRENCY: String(CONVERSATIONS) },
  );
  try {
    const first = cluster.api[0]!;
    const spaceId = await createSpace(first);
    const conversations = await createConversations(first, spaceId, CONVERSATIONS);
    const rssBefore = cluster.replicas.reduce((n, r) => n + rssOf(r.process.pid), 0);
    const figures: FanoutFigures = {
      replicas: replicaCount,
      clients: CLIENTS,
      deliveries: 0,
      lost: 0,
      reordered: 0,
      duplicated: 0,
      p50: NaN,
      p99: NaN,
      rssPer1000: 0,
    };
    const latencies: number[] = [];
    const ended: Array<Promise<void>> = [];
    const sockets: WebSocket[] = [];
    note(`fan-out on ${replicaCount}: ${CLIENTS} sockets`);
    for (let i = 0; i < CLIENTS; i++) {
      const conversationId = conversations[i % CONVERSATIONS]!;
      let lastSeq = -1;
      let nextChunk = 0;
      let done: () => void = () => undefined;
      ended.push(new Promise<void>((r) => (done = r)));
      const socket = await signedInSocket(cluster.api[i % cluster.api.length]!, (text) => {
        const f = scan(text);
        if (f.conversationId !== conversationId || f.seq === undefined) return;
        if (lastSeq !== -1) {
          if (f.seq === lastSeq) figures.duplicated++;
          else if (f.seq < lastSeq) figures.reordered++;
          else if (f.seq > lastSeq + 1) figures.lost += f.seq - lastSeq - 1;
        }
        lastSeq = Math.max(lastSeq, f.seq);
        if (f.channel === 'agent:message' && f.delta !== undefined) {
          const got = now();
          for (const part of f.delta.split(';')) {
            const [index, wrote] = part.split(':').map(Number);
            if (part === '' || !Number.isInteger(index)) continue;
            figures.deliveries++;
            latencies.push(got - wrote!);
            if (index === nextChunk) nextChunk++;
            else if (index! < nextChunk) figures.reordered++;
            else {
              figures.lost += index! - nextChunk;
              nextChunk = index! + 1;
            }
          }
        }
        if (f.channel === 'agent:complete' || f.channel === 'agent:error') {
          figures.lost += CHUNKS - nextChunk;
          done();
        }
      });
      await subscribe(socket, [conversationId]);
      sockets.push(socket);
    }
    await sleep(1_000);
    const rssAfter = cluster.replicas.reduce((n, r) => n + rssOf(r.process.pid), 0);
    figures.rssPer1000 = ((rssAfter - rssBefore) / CLIENTS) * 1000;
    note(`fan-out on ${replicaCount}: ${CONVERSATIONS} turns of ${CHUNKS} chunks`);
    const failed = await postTurns(cluster.api, spaceId, conversations, `bench:paced*${CHUNKS}`);
    if (failed.length > 0) throw new Error(`${failed.length} turns were refused`);
    const timeout = sleep(300_000).then(() => 'timeout' as const);
    if ((await Promise.race([Promise.all(ended), timeout])) === 'timeout')
      throw new Error('not every client saw its turn end within 300 s');
    for (const s of sockets) s.close();
    figures.p50 = pct(latencies, 50);
    figures.p99 = pct(latencies, 99);
    return figures;
  } finally {
    await cluster.stop();
  }
}

interface PoolFigures {
  topology: string;
  turns: number;
  completed: number;
  interrupted: number;
  /** Accepted turns (POST answered 200) whose end no client saw. */
  neverEnded: number;
  /** POSTs not answered 200 (a connection cut off counts): no turn was accepted for them. */
  refused: number;
  turnsPerSecond: number;
  waitP50: number;
  waitP99: number;
  /** After a kill: from the kill until every turn had ended (ms); NaN without a kill. */
  recoveryMs: number;
}

/** Scenario 2 on one topology; `kill`: SIGKILL the last replica when half the turns have started. */
async function pool(
  model: StampedModel,
  topology: string,
  roles: Array<'all' | 'api' | 'worker'>,
  kill: boolean,
): Promise<PoolFigures> {
  const cluster = await startCluster(roles, { ...model.env, SVC_QUEUE_CONCURRENCY: '64' });
  try {
    const first = cluster.api[0]!;
    const spaceId = await createSpace(first);
    note(`${topology}: ${TURNS} conversations`);
    const conversations = await createConversations(first, spaceId, TURNS);
    const sent = new Map<string, number>();
    const started = new Map<string, number>();
    const endings = new Map<string, string>();
    let allEnded: () => void = () => undefined;
    const everyEnd = new Promise<void>((r) => (allEnded = r));
    let killedAt = NaN;
    let lastEndAt = NaN;
    let halfStarted: () => void = () => undefined;
    const half = new Promise<void>((r) => (halfStarted = r));
    // One watching socket on the first API replica (never the one killed) takes every conversation.
    const watcher = await signedInSocket(first, (text) => {
      const f = scan(text);
      if (f.conversationId === undefined) return;
      if (f.channel === 'agent:turn-start' && !started.has(f.conversationId)) {
        started.set(f.conversationId, now());
        if (started.size === Math.floor(TURNS / 2)) halfStarted();
      }
      if ((f.channel === 'agent:complete' || f.channel === 'agent:error') && !endings.has(f.conversationId)) {
        endings.set(f.conversationId, f.channel);
        lastEndAt = now();
        if (endings.size === TURNS) allEnded();
      }
    });
    await subscribe(watcher, conversations);
    const t0 = now();
    if (kill) {
      void half.then(() => {
        killedAt = now();
        cluster.replicas.at(-1)!.process.kill('SIGKILL');
        note(`${topology}: killed replica ${cluster.replicas.length} at ${started.size} turns started`);
      });
    }
    const failed = await postTurns(
      kill ? cluster.api.slice(0, -1) : cluster.api,
      spaceId,
      conversations,
      'bench:short',
      (id, at) => sent.set(id, at),
    );
    if (failed.length > 0) note(`${topology}: ${failed.length} POSTs refused`);
    const refused = new Set(failed);
    await Promise.race([everyEnd, sleep(kill ? 240_000 : 180_000)]);
    watcher.close();
    // A POST refused (or cut off) was answered as such and recorded no turn: not a turn lost.
    const unended = conversations.filter((id) => !endings.has(id) && !refused.has(id));
    if (unended.length > 0) {
      // What the records say of the turns whose end the watcher never saw: the run fails on them.
      const db = new pg.Client({ connectionString: cluster.services.databaseUrl });
      await db.connect();
      const rows = (
        await db.query(
          `SELECT conversation_id, id, status, replica_id, kind, created_at, started_at, ended_at FROM agent_turn WHERE conversation_id = ANY($1) ORDER BY created_at`,
          [unended],
        )
      ).rows as Array<Record<string, unknown>>;
      await db.end();
      note(
        `${topology}: ${unended.length} accepted conversations without an end seen (${sent.size - refused.size} POSTs answered 200): ` +
          unended
            .slice(0, 10)
            .map((id) => {
              const turns = rows.filter((r) => r.conversation_id === id);
              return `${id} [sent ${sent.has(id) ? 'yes' : 'no'}, started ${started.has(id) ? 'yes' : 'no'}] ${
                turns.map((t) => `${String(t.status)}@${String(t.replica_id)}`).join(', ') || 'no turn'
              }`;
            })
            .join('; '),
      );
    }
    const waits = [...started].flatMap(([id, at]) => (sent.has(id) ? [at - sent.get(id)!] : []));
    const completed = [...endings.values()].filter((c) => c === 'agent:complete').length;
    return {
      topology,
      turns: TURNS,
      completed,
      interrupted: endings.size - completed,
      neverEnded: unended.length,
      refused: refused.size,
      turnsPerSecond: endings.size / ((lastEndAt - t0) / 1000),
      waitP50: pct(waits, 50),
      waitP99: pct(waits, 99),
      recoveryMs: kill ? lastEndAt - killedAt : NaN,
    };
  } finally {
    await cluster.stop();
  }
}

interface ScheduleFigures {
  kill: boolean;
  apps: number;
  installS: number;
  /** Installs sent less than 10 s before their target: the window was placed too early (BENCH_SCHEDULE_LEAD_S). */
  lateInstalls: number;
  /** First scheduled − last scheduled among the apps' first ticks, s. */
  spreadS: number;
  /** First ticks whose run began (the server's record), within the wait. */
  ran: number;
  missed: number;
  duplicates: number;
  /** First ticks whose run reached the model within the wait (runs wait for a run slot). */
  reachedModel: number;
  skewP50: number;
  skewP99: number;
  skewMax: number;
  /** First ticks' runs started per second (first start → last). */
  startsPerS: number;
  /** After a kill: kill → the last tick of the window started, s. */
  recoveryS: number;
  /** The restarted replicas' first reconcile pass (ms, the slowest of 3); NaN after a kill run. */
  reconcileMs: number;
  /** `sql` seed: the first pass after the copy, which builds every schedule row and job (ms, the slowest of 3). */
  coldReconcileMs: number;
  /** The same on the fresh, empty database at the first start (ms). */
  reconcileEmptyMs: number;
}

/** The first reconcile pass's duration a replica logged ("schedules reconciled"), or NaN. */
function reconcileMsOf(output: string): number {
  const line = output.split('\n').find((l) => l.includes('schedules reconciled'));
  const m = line === undefined ? null : /"ms":\s*(\d+)|\bms[=:]\s*(\d+)/.exec(line);
  return m ? Number(m[1] ?? m[2]) : NaN;
}

async function waitReconciled(servers: TestServer[], timeoutMs: number): Promise<number> {
  const until = now() + timeoutMs;
  while (now() < until) {
    const each = servers.map((s) => reconcileMsOf(s.output()));
    if (each.every(Number.isFinite)) return Math.max(...each);
    await sleep(250);
  }
  return NaN;
}

/**
 * Scenario 3: SCHEDULE_APPS digital humans, each with one `every` schedule whose period is chosen
 * at install so that its first tick falls at its place in a WINDOW_MS window LEAD_MS after the
 * first install; 3 all-role replicas; `kill`: SIGKILL the third in the middle of the window.
 * Then (without a kill) the replicas are restarted and their first reconcile pass timed.
 */
async function schedules(kill: boolean): Promise<ScheduleFigures> {
  const model = await ScriptedModelServer.start();
  completeEveryRun(model);
  const env = {
    SVC_AI_PROVIDER: 'anthropic',
    SVC_AI_API_URL: model.url,
    SVC_AI_API_KEY: 'k',
    SVC_AI_MODEL: 'scripted-model',
    // Ticks and runs share one job queue: at the default 8 per replica the ticks most likely wait
    // behind the runs' turns (the pool scenario's 64 too; docs/performance.md, "Scale-out: schedules and webhooks").
    SVC_QUEUE_CONCURRENCY: String(SCHEDULE_CONCURRENCY),
  };
  const cluster = await startCluster(['all', 'all', 'all'], env);
  const extra: TestServer[] = [];
  // The model's recorded requests are read as they come and dropped (10,000 runs' bodies would not fit).
  const runs: StartedRun[] = [];
  const drainModel = setInterval(() => runs.push(...startedRuns(model.requests.splice(0))), 500);
  try {
    const reconcileEmptyMs = await waitReconciled(cluster.replicas, 30_000);
    const first = cluster.api[0]!;
    const spaceId = await createSpace(first);
    const t0 = now();
    const windowStart = t0 + LEAD_MS;
    const periods: number[] = new Array<number>(SCHEDULE_APPS);
    const appIds: string[] = new Array<string>(SCHEDULE_APPS);
    let lateInstalls = 0;
    let next = 0;
    let live = cluster.replicas;
    const restart = async (): Promise<number> => {
      await Promise.all(live.map((r) => r.stop()));
      // One at a time into `extra`, so a replica that started is stopped below even when the next one fails.
      live = [];
      for (let i = 0; i < 3; i++) {
        const replica = await startReplica({ services: cluster.services, dataDir: cluster.dataDir, env });
        extra.push(replica);
        live.push(replica);
      }
      return waitReconciled(live, 600_000);
    };
    const agents = cluster.replicas.map(() => new Agent({ keepAlive: true, maxSockets: INSTALLS_IN_FLIGHT }));
    note(
      `schedules${kill ? ', one killed' : ''}: installing ${SCHEDULE_APPS} (${SEED}); window starts in ${LEAD_MS / 1000} s`,
    );
    const installOne = async (i: number): Promise<void> => {
      const target = windowStart + (i / SCHEDULE_APPS) * WINDOW_MS;
      const periodS = Math.round((target - now()) / 1000);
      if (periodS < 10) lateInstalls++;
      periods[i] = Math.max(1, periodS) * 1000;
      const server = cluster.replicas[i % cluster.replicas.length]!;
      const res = await request(server.url)
        .post('/api/apps/install')
        .agent(agents[i % cluster.replicas.length]!)
        .set({ Authorization: `Bearer ${server.password}` })
        .send({
          spec: spec(`tick-${i}`, [
            { id: 't', source: { type: 'schedule', config: { every: `${Math.max(1, periodS)}s` } } },
          ]),
          spaceId,
        });
      if (res.status !== 200) throw new Error(`install ${i} answered ${res.status}: ${JSON.stringify(res.body)}`);
      appIds[i] = res.body.data.appId as string;
      if ((i + 1) % 1000 === 0) note(`  ${i + 1} installed, ${((now() - t0) / 1000).toFixed(0)} s`);
    };
    const installer = async (): Promise<void> => {
      while (next < SCHEDULE_APPS) await installOne(next++);
    };
    let coldReconcileMs = NaN;
    if (SEED === 'sql') {
      await installOne(0);
      const seedMs = Math.round(now());
      const db = new pg.Client({ connectionString: cluster.services.databaseUrl });
      await db.connect();
      try {
        const columns = (
          await db.query<{ column_name: string }>(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'app' AND table_schema = current_schema()",
          )
        ).rows.map((r) => r.column_name);
        // The template's row with a new id, name, tag, period and install time; every other column as installed.
        const value: Record<string, string> = {
          id: 'gen_random_uuid()',
          install_key: "regexp_replace(a.install_key, 'tick-0$', 'tick-' || i)",
          spec:
            "jsonb_set(jsonb_set(jsonb_set(a.spec, '{name}', to_jsonb('Bench tick-' || i)), '{system_prompt}', " +
            "to_jsonb('[[tick-' || i || ']] Report at once.')), '{subscriptions,0,source,config,every}', " +
            "to_jsonb(round((($2::float8 + i * $3::float8 / $4::float8) - $5::float8) / 1000)::bigint || 's'))",
          installed_at: 'to_timestamp($5::float8 / 1000)',
          updated_at: 'to_timestamp($5::float8 / 1000)',
          next_run_at_ms: 'NULL',
        };
        const inserted = await db.query<{ id: string; name: string; installed_ms: string; every: string }>(
          `INSERT INTO app (${columns.map((c) => `"${c}"`).join(', ')}) ` +
            `SELECT ${columns.map((c) => value[c] ?? `a."${c}"`).join(', ')} FROM app a, generate_series(1, $1::int - 1) AS i ` +
            `WHERE a.id = $6 RETURNING id, spec->>'name' AS name, ` +
            `(extract(epoch FROM installed_at) * 1000)::bigint AS installed_ms, spec#>>'{subscriptions,0,source,config,every}' AS every`,
          [SCHEDULE_APPS, windowStart, WINDOW_MS, SCHEDULE_APPS, seedMs, appIds[0]],
        );
        for (const row of inserted.rows) {
          const i = Number(row.name.slice('Bench tick-'.length));
          appIds[i] = row.id;
          periods[i] = Number.parseInt(row.every, 10) * 1000;
        }
      } finally {
        await db.end();
      }
      note(
        `schedules: ${SCHEDULE_APPS - 1} copied in SQL; restarting the replicas (their first pass builds the schedules)`,
      );
      coldReconcileMs = await restart();
    } else {
      await Promise.all(Array.from({ length: INSTALLS_IN_FLIGHT }, installer));
    }
    for (const a of agents) a.destroy();
    const installS = (now() - t0) / 1000;
    const listed = await request(live[0]!.url)
      .get('/api/apps')
      .set({ Authorization: `Bearer ${live[0]!.password}` });
    if (listed.status !== 200)
      throw new Error(`GET /api/apps answered ${listed.status}: ${JSON.stringify(listed.body)}`);
    const installedAt = new Map(
      (listed.body.data as Array<{ id: string; installedAt: number }>).map((a) => [a.id, a.installedAt]),
    );
    // Each app's first tick: its anchor plus its period (docs/api/triggers.md, "Schedules").
    const due = appIds.map((id, i) => installedAt.get(id)! + periods[i]!);
    const dueBy = new Map(due.map((ms, i) => [`tick-${i}`, ms]));
    note(`schedules: installed in ${installS.toFixed(0)} s (late ${lateInstalls}); waiting for the window`);
    let killedAt = NaN;
    if (kill) {
      await sleep(Math.max(0, windowStart + WINDOW_MS / 2 - now()));
      killedAt = now();
      live.at(-1)!.process.kill('SIGKILL');
      note(`schedules: killed replica 3 in the middle of the window`);
    }
    // Each first tick as the server recorded it: its occurrence claimed and its run begun
    // (`trigger_occurrence.started_at_ms`, written just before the run's trigger message). That is
    // the scheduler's part; the run then waits for one of its replica's run slots
    // (SVC_APP_RUNS_PER_PROCESS), and how many reached the model meanwhile is reported apart.
    const dueOf = new Map(appIds.map((id, i) => [id, due[i]!]));
    const db = new pg.Client({ connectionString: cluster.services.databaseUrl });
    await db.connect();
    const begun = async (): Promise<Map<string, number>> => {
      const { rows } = await db.query<{ app_id: string; scheduled_ms: string; started_at_ms: string }>(
        'SELECT app_id, scheduled_ms, started_at_ms FROM trigger_occurrence WHERE started_at_ms IS NOT NULL',
      );
      const firstTicks = new Map<string, number>();
      for (const r of rows)
        if (dueOf.get(r.app_id) === Number(r.scheduled_ms)) firstTicks.set(r.app_id, Number(r.started_at_ms));
      return firstTicks;
    };
    // Until every first tick began, BENCH_SCHEDULE_WAIT_S passed, or nothing new for 150 s (a claim lease of 60 s + a reconcile of 30 s + slack).
    let seen = -1;
    let seenAt = now();
    let started = new Map<string, number>();
    let duplicates = 0;
    try {
      for (;;) {
        await sleep(2000);
        if (now() > windowStart + WINDOW_MS + WAIT_MS) break;
        started = await begun();
        if (started.size >= SCHEDULE_APPS && now() > windowStart + WINDOW_MS) break;
        if (started.size !== seen) {
          seen = started.size;
          seenAt = now();
        } else if (now() - seenAt > 150_000 && now() > windowStart + WINDOW_MS) break;
      }
      await sleep(3000); // a late duplicate shows
      started = await begun();
      // Two runs of one occurrence would share its run id (occurrenceRunId): trigger messages counted per run id.
      const { rows: dupRows } = await db.query<{ extra: string }>(
        `SELECT coalesce(sum(n - 1), 0) AS extra FROM (SELECT count(*) AS n FROM conversation_message
          WHERE role = 'user' AND meta->>'trigger' = 'schedule' GROUP BY meta->>'runId') AS per_run`,
      );
      duplicates = Number(dupRows[0]?.extra ?? 0);
    } finally {
      await db.end();
    }
    clearInterval(drainModel);
    runs.push(...startedRuns(model.requests.splice(0)));
    const reachedModel = new Set(
      runs
        .filter((r) => r.type === 'schedule' && Date.parse(String(r.data.scheduledAt)) === dueBy.get(r.tag ?? ''))
        .map((r) => r.tag),
    ).size;
    const starts = [...started.values()];
    const skews = [...started].map(([appId, ms]) => ms - dueOf.get(appId)!);
    let reconcileMs = NaN;
    if (!kill) {
      note('schedules: restarting the replicas');
      reconcileMs = await restart();
    }
    return {
      kill,
      apps: SCHEDULE_APPS,
      installS,
      lateInstalls,
      spreadS: (Math.max(...due) - Math.min(...due)) / 1000,
      ran: started.size,
      missed: SCHEDULE_APPS - started.size,
      duplicates,
      reachedModel,
      skewP50: pct(skews, 50),
      skewP99: pct(skews, 99),
      skewMax: Math.max(...skews),
      startsPerS: starts.length / ((Math.max(...starts) - Math.min(...starts)) / 1000),
      recoveryS: kill ? (Math.max(...starts) - killedAt) / 1000 : NaN,
      reconcileMs,
      coldReconcileMs,
      reconcileEmptyMs,
    };
  } finally {
    clearInterval(drainModel);
    await Promise.all(extra.map((r) => r.stop().catch(() => undefined)));
    await cluster.stop();
    await model.close();
  }
}

/** Scenario 4: the webhook burst of bench/triggers on 3 all-role replicas, 2,000 deliveries, 50 apps, 50 connections. */
function webhooks(round: number, kill: boolean): Promise<BurstFigures> {
  return burst(round, {
    deliveries: HOOK_DELIVERIES,
    apps: HOOK_APPS,
    connections: HOOK_CONNECTIONS,
    replicas: HOOK_ROLES.length,
    roles: HOOK_ROLES,
    stallMs: 120_000,
    kill,
    log: note,
  });
}

const f1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '—');
const f2 = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : '—');

async function main(): Promise<void> {
  if (!(await servicesAvailable()).ok) {
    process.stdout.write('bench/cluster needs Postgres and Redis (TEST_DATABASE_URL / TEST_REDIS_URL)\n');
    process.exit(1);
  }
  const model = await startStampedModel({ rate: RATE });
  const load = () => loadavg()[0]!.toFixed(1);
  const fanouts: Array<{ one: FanoutFigures; three: FanoutFigures }> = [];
  const pools: PoolFigures[][] = [];
  const scheduleRuns: ScheduleFigures[] = [];
  const scheduleKills: ScheduleFigures[] = [];
  const hookRuns: BurstFigures[] = [];
  const hookKills: BurstFigures[] = [];
  const printSchedule = (run: number, f: ScheduleFigures): void => {
    process.stdout.write(
      `run ${run} schedules${f.kill ? ', one killed mid-window' : ''} (load ${load()}): ${f.apps} installed in ${f1(f.installS)} s ` +
        `(late ${f.lateInstalls}), first ticks spread over ${f1(f.spreadS)} s, ran ${f.ran}, missed ${f.missed}, ` +
        `duplicates ${f.duplicates}, ${f.reachedModel} reached the model, ${f1(f.startsPerS)} runs started/s, skew p50/p99/max ${f1(f.skewP50)}/${f1(f.skewP99)}/${f1(f.skewMax)} ms` +
        (f.kill
          ? `, kill → last tick started ${f1(f.recoveryS)} s`
          : `, reconcile after restart ${f1(f.reconcileMs)} ms`) +
        ` (empty database ${f1(f.reconcileEmptyMs)} ms${Number.isFinite(f.coldReconcileMs) ? `, after the SQL copy ${f1(f.coldReconcileMs)} ms` : ''})\n`,
    );
  };
  const printHooks = (run: number, f: BurstFigures, kill: boolean): void => {
    process.stdout.write(
      `run ${run} webhooks${kill ? ', one killed at half' : ''} [${HOOK_ROLES.join(',')}] (load ${f.load}): accepted ${f.accepted}/${HOOK_DELIVERIES}, ` +
        `429 then retried ${f.refusals}, resent after the kill ${f.resent}, runs started ${f.started}, completed ${f.completed} ` +
        `(failed ${f.failed}), lost ${f.lost}, duplicated ${f.duplicated}, intake ${f1(f.intakePerS)}/s (${f1(f.sendS)} s), ` +
        `drain ${f1(f.drainS)} s, Postgres transactions per delivery ${f1(f.pgPerDeliveryIntake)} in the intake, ` +
        `${f1(f.pgPerDeliveryTotal)} in all; CPU ms per delivery, replicas (those taking deliveries) / Postgres backends: ` +
        `${f2(f.replicaCpuMsIntake)} (${f2(f.intakeReplicaCpuMsIntake)}) / ${f2(f.pgCpuMsIntake)} in the intake, ${f2(f.replicaCpuMsTotal)} / ${f2(f.pgCpuMsTotal)} in all` +
        (kill ? `, kill → last run ended ${f1(f.recoveryS)} s` : '') +
        '\n',
    );
  };
  try {
    for (let run = 1; run <= RUNS; run++) {
      if (ONLY === undefined || ONLY === 'fanout') {
        const one = await fanout(model, 1);
        const three = await fanout(model, 3);
        fanouts.push({ one, three });
        process.stdout.write(
          `run ${run} fan-out (load ${load()}): 1 replica p50/p99 ${f1(one.p50)}/${f1(one.p99)} ms; ` +
            `3 replicas p50/p99 ${f1(three.p50)}/${f1(three.p99)} ms, ${three.deliveries} deliveries, ` +
            `lost ${three.lost}, reordered ${three.reordered}, duplicated ${three.duplicated}, ` +
            `${(three.rssPer1000 / 1024 ** 2).toFixed(1)} MB per 1,000 sockets\n`,
        );
      }
      if (ONLY === undefined || ONLY === 'schedules') {
        if (!KILL_ONLY) {
          const f = await schedules(false);
          scheduleRuns.push(f);
          printSchedule(run, f);
        }
        if (KILL) {
          const k = await schedules(true);
          scheduleKills.push(k);
          printSchedule(run, k);
        }
      }
      if (ONLY === undefined || ONLY === 'webhooks') {
        if (!KILL_ONLY) {
          const f = await webhooks(run * 2 - 1, false);
          hookRuns.push(f);
          printHooks(run, f, false);
        }
        if (KILL) {
          const k = await webhooks(run * 2, true);
          hookKills.push(k);
          printHooks(run, k, true);
        }
      }
      if (ONLY === undefined || ONLY === 'pool') {
        const results = [
          ...(KILL_ONLY
            ? []
            : [
                await pool(model, '2 api + 1 worker', ['api', 'api', 'worker'], false),
                await pool(model, '3 all-role', ['all', 'all', 'all'], false),
              ]),
          ...(KILL ? [await pool(model, '3 all-role, one killed', ['all', 'all', 'all'], true)] : []),
        ];
        pools.push(results);
        for (const r of results)
          process.stdout.write(
            `run ${run} ${r.topology} (load ${load()}): ${r.completed} complete, ${r.interrupted} interrupted, ` +
              `${r.neverEnded} accepted never ended (${r.refused} POSTs refused), ${f1(r.turnsPerSecond)} turns/s, wait p50/p99 ${f1(r.waitP50)}/${f1(r.waitP99)} ms` +
              (Number.isFinite(r.recoveryMs) ? `, every turn ended ${f1(r.recoveryMs / 1000)} s after the kill` : '') +
              '\n',
          );
      }
    }
  } finally {
    model.close();
  }

  const rows: Array<[string, number[], string, boolean | null]> = [];
  if (fanouts.length > 0) {
    const bad = fanouts.map((f) => f.three.lost + f.three.reordered + f.three.duplicated);
    rows.push([`fan-out, 3 replicas: lost + reordered + duplicated`, bad, '0', Math.max(...bad) === 0]);
    rows.push(['fan-out, 1 replica: relay p99 ms (reference)', fanouts.map((f) => f.one.p99), '', null]);
    rows.push(['fan-out, 3 replicas: relay p99 ms', fanouts.map((f) => f.three.p99), '', null]);
    const added = fanouts.map((f) => f.three.p99 - f.one.p99);
    rows.push(['fan-out: p99 added by 3 replicas, ms', added, '(report)', null]);
    rows.push([
      'fan-out: server RSS per 1,000 sockets, MB',
      fanouts.map((f) => f.three.rssPer1000 / 1024 ** 2),
      '≤ 30 KB/socket (29.3)',
      median(fanouts.map((f) => f.three.rssPer1000 / 1024 ** 2)) <= 29.3,
    ]);
  }
  if (pools.length > 0) {
    for (let i = 0; i < pools[0]!.length; i++) {
      const t = pools[0]![i]!.topology;
      const never = pools.map((p) => p[i]!.neverEnded);
      rows.push([`pool ${t}: accepted turns never ended`, never, '0', Math.max(...never) === 0]);
      rows.push([`pool ${t}: POSTs refused`, pools.map((p) => p[i]!.refused), '(report)', null]);
      rows.push([`pool ${t}: turns/s`, pools.map((p) => p[i]!.turnsPerSecond), '(report)', null]);
      rows.push([`pool ${t}: POST → turn-start p99 ms`, pools.map((p) => p[i]!.waitP99), '(report)', null]);
      if (Number.isFinite(pools[0]![i]!.recoveryMs))
        rows.push([
          `pool ${t}: kill → every turn ended, s`,
          pools.map((p) => p[i]!.recoveryMs / 1000),
          '(report)',
          null,
        ]);
    }
  }
  const scheduleRows = (label: string, fs: ScheduleFigures[]): void => {
    if (fs.length === 0) return;
    const bad = fs.map((f) => f.missed);
    rows.push([`${label}: missed`, bad, '0', Math.max(...bad) === 0]);
    const dup = fs.map((f) => f.duplicates);
    rows.push([`${label}: duplicates`, dup, '0', Math.max(...dup) === 0]);
    const p99 = fs.map((f) => f.skewP99);
    rows.push([`${label}: skew p99 ms`, p99, '≤ 1,000 ms', median(p99) <= 1000]);
    rows.push([`${label}: skew p50 ms`, fs.map((f) => f.skewP50), '', null]);
    rows.push([`${label}: first ticks spread over, s`, fs.map((f) => f.spreadS), `≤ ${WINDOW_MS / 1000} s`, null]);
    rows.push([`${label}: runs started/s`, fs.map((f) => f.startsPerS), '(report)', null]);
    rows.push([`${label}: runs that reached the model`, fs.map((f) => f.reachedModel), '(report)', null]);
    rows.push([`${label}: install, s`, fs.map((f) => f.installS), '(report)', null]);
  };
  scheduleRows(`schedules, ${SCHEDULE_APPS}`, scheduleRuns);
  if (scheduleRuns.length > 0) {
    rows.push(['schedules: reconcile after restart, ms', scheduleRuns.map((f) => f.reconcileMs), '(report)', null]);
    if (SEED === 'sql')
      rows.push([
        'schedules: first reconcile after the SQL copy, ms',
        scheduleRuns.map((f) => f.coldReconcileMs),
        '(report)',
        null,
      ]);
  }
  scheduleRows('schedules, one killed', scheduleKills);
  if (scheduleKills.length > 0)
    rows.push(['schedules, one killed: kill → last tick, s', scheduleKills.map((f) => f.recoveryS), '(report)', null]);
  const hookRows = (label: string, fs: BurstFigures[]): void => {
    if (fs.length === 0) return;
    const lost = fs.map((f) => f.lost + (HOOK_DELIVERIES - f.accepted) + (f.started - f.completed));
    rows.push([`${label}: lost or not run`, lost, '0', Math.max(...lost) === 0]);
    const dup = fs.map((f) => f.duplicated);
    rows.push([`${label}: duplicated`, dup, '0', Math.max(...dup) === 0]);
    const intake = fs.map((f) => f.intakePerS);
    rows.push([`${label}: intake, deliveries/s`, intake, '≥ 1,000/s', median(intake) >= 1000]);
    rows.push([`${label}: drain (last ack → last run), s`, fs.map((f) => f.drainS), '(report)', null]);
    rows.push([`${label}: Postgres xacts/delivery, intake`, fs.map((f) => f.pgPerDeliveryIntake), '(report)', null]);
    rows.push([`${label}: Postgres xacts/delivery, in all`, fs.map((f) => f.pgPerDeliveryTotal), '(report)', null]);
    rows.push([`${label}: replicas' CPU ms/delivery, intake`, fs.map((f) => f.replicaCpuMsIntake), '(report)', null]);
    rows.push([
      `${label}: delivery-taking replicas' CPU ms/delivery, intake`,
      fs.map((f) => f.intakeReplicaCpuMsIntake),
      '(report)',
      null,
    ]);
    rows.push([`${label}: Postgres CPU ms/delivery, intake`, fs.map((f) => f.pgCpuMsIntake), '(report)', null]);
    rows.push([`${label}: replicas' CPU ms/delivery, in all`, fs.map((f) => f.replicaCpuMsTotal), '(report)', null]);
  };
  hookRows(`webhooks, ${HOOK_DELIVERIES}`, hookRuns);
  hookRows('webhooks, one killed', hookKills);
  if (hookKills.length > 0)
    rows.push(['webhooks, one killed: kill → last run ended, s', hookKills.map((f) => f.recoveryS), '(report)', null]);
  process.stdout.write(`\nSummary, median of ${RUNS} (load now ${load()})\n`);
  for (const [what, values, target, met] of rows) {
    process.stdout.write(
      `  ${what.padEnd(54)} ${values.map(f1).join(', ').padEnd(28)} median ${f1(median(values)).padStart(8)}  ${target}${met === null ? '' : met ? ' met' : ' NOT met'}\n`,
    );
  }
}

await main();
process.exit(0);
