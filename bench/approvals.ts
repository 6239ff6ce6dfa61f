/**
 * Tool-approval benchmark. Build first, then: `node dist/bench/approvals.js` (needs Postgres at
 * 127.0.0.1:5432 and Redis at 127.0.0.1:6379: the figure is the Redis deployment's).
 *
 * Prints approve → tool start, p50/p99 of BENCH_APPROVALS (default 40) held calls in a row: from
 * sending `POST /api/agent/approve` to a client receiving the call's `agent:tool-call` without
 * `requiresApproval` (announced just before the tool runs), under a policy on Bash. Two cases:
 *  1. one replica (the answer and the turn on the same process, the wake-up through Redis);
 *  2. two replicas, the answer sent to the one that does not run the turn (the replica running it
 *     learns of the answer over Redis).
 * The HTTP answer time of the approve request is printed beside it. Target (docs/performance.md):
 * p99 ≤ 200 ms.
 */
import request from 'supertest';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import { ScriptedModelServer, textReply } from '#testing/scripted-model-server.js';
import { servicesAvailable } from '#testing/test-env.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

const COUNT = Number(process.env.BENCH_APPROVALS ?? 40);
const TARGET_P99_MS = 200;

const note = (line: string): boolean => process.stderr.write(`[bench] ${line}\n`);
const pct = (xs: number[], p: number): number => {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (x: number): string => `${x.toFixed(1)} ms`;

interface Figures {
  toolStart: number[];
  answer: number[];
}

const api = (s: TestServer) => ({
  get: (p: string) => request(s.url).get(p).set('Authorization', `Bearer ${s.password}`),
  post: (p: string, body: object) => request(s.url).post(p).set('Authorization', `Bearer ${s.password}`).send(body),
});

/**
 * COUNT held calls, each in a conversation of its own: the turn is started on `starter`, the
 * answer goes to the replica `answerer` picks for it (given the pid running the turn).
 */
async function measure(
  model: ScriptedModelServer,
  servers: TestServer[],
  answerer: (runningPid: number) => TestServer,
): Promise<Figures> {
  const starter = servers[0]!;
  const policy = await api(starter).post('/api/config', { approvals: { tools: ['Bash'] } });
  if (policy.status !== 200) throw new Error(`setting the policy failed: ${JSON.stringify(policy.body)}`);
  const space = (await api(starter).post('/api/spaces', { name: `approvals bench ${Date.now()}` })).body.data;
  const figures: Figures = { toolStart: [], answer: [] };
  for (let i = -1; i < COUNT; i++) {
    const conversationId = (await api(starter).post(`/api/spaces/${space.id}/conversations`, {})).body.data
      .id as string;
    const ws = await WsTestClient.signedIn(starter.wsUrl, starter.password);
    ws.send({ type: 'subscribe', payload: { conversationId } });
    await ws.roundTrip();
    const toolId = `toolu_bench_${i + 1}`;
    model.enqueue({ steps: [{ toolCall: { id: toolId, name: 'Bash', input: { command: 'true' } } }] }, textReply('ok'));
    await api(starter).post('/api/agent/message', { spaceId: space.id, conversationId, message: 'run' });
    const isCall = (f: Frame, held: boolean) =>
      f.type === 'event' &&
      f.channel === 'agent:tool-call' &&
      f.data?.id === toolId &&
      (f.data?.requiresApproval === true) === held;
    await ws.next((f) => isCall(f, true), 15_000);
    const state = (await api(starter).get(`/api/agent/session/${conversationId}`)).body.data;
    const target = answerer(Number(String(state.replicaId).split('-')[0]));
    const started = ws.next((f) => isCall(f, false), 15_000);
    const t0 = performance.now();
    const answered = await api(target).post('/api/agent/approve', { conversationId, toolId });
    const t1 = performance.now();
    if (answered.status !== 200) throw new Error(`approve failed: ${JSON.stringify(answered.body)}`);
    await started;
    const t2 = performance.now();
    await ws.event('agent:complete', 15_000);
    ws.close();
    // The first one warms the code paths; it is not counted.
    if (i < 0) continue;
    figures.answer.push(t1 - t0);
    figures.toolStart.push(t2 - t0);
  }
  return figures;
}

function print(label: string, f: Figures): boolean {
  const p99 = pct(f.toolStart, 99);
  process.stdout.write(
    `${label}: approve → tool start p50 ${ms(pct(f.toolStart, 50))}, p99 ${ms(p99)} ` +
      `(approve answered p50 ${ms(pct(f.answer, 50))}, p99 ${ms(pct(f.answer, 99))}; ${f.toolStart.length} calls) ` +
      `${p99 <= TARGET_P99_MS ? 'meets' : 'MISSES'} p99 ≤ ${TARGET_P99_MS} ms\n`,
  );
  return p99 <= TARGET_P99_MS;
}

async function main(): Promise<void> {
  const available = await servicesAvailable();
  if (!available.ok) {
    process.stdout.write(`skipped: Postgres/Redis not reachable (${available.reason})\n`);
    return;
  }
  process.env.SVC_TEST_MODE = 'services';
  let ok = true;

  note('one replica on Postgres + Redis');
  {
    const model = await ScriptedModelServer.start();
    const services = await createSharedServices();
    const server = await startServer({ env: model.serverEnv(), services });
    try {
      ok = print('redis, one replica', await measure(model, [server], () => server)) && ok;
    } finally {
      await server.stop();
      await services.dispose();
      await model.close();
    }
  }

  note('two replicas on Postgres + Redis, answered on the other one');
  {
    const replicas: Replicas = await startReplicas();
    try {
      const { a, b, model } = replicas;
      const other = (pid: number) => (pid === a.process.pid ? b : a);
      ok = print('redis, answered on the other replica', await measure(model, [a, b], other)) && ok;
    } finally {
      await replicas.stop();
    }
  }
  if (!ok) process.exitCode = 1;
}

await main();
