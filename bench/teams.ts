/**
 * Team mailbox benchmark (issue 27's measure). Build first, then: `node dist/bench/teams.js`
 * (needs Postgres at 127.0.0.1:5432 and Redis at 127.0.0.1:6379).
 *
 * Three replicas on one Postgres + Redis, one scripted model. A team of a lead (whose turn
 * hangs, so the run stays open) + 3 senders + 1 receiver. Each sender is started by a person's
 * message through a different replica's API; its turn then calls `team_send` to the receiver
 * (BATCH calls per model step) until BENCH_MESSAGES (default 1,000) messages were sent in all.
 * The receiver answers each turn with a line of text, so its mail arrives as one turn after
 * another, on whichever replica ends or starts them.
 *
 * Checked from the records, and the run fails otherwise:
 * - the receiver never had two turns at once: its transcript conversation's turn records
 *   (`agent_turn`, started_at/ended_at) do not overlap;
 * - per-sender order is kept in what the receiver's transcript shows, each message once;
 * - none is lost: every message sent is in that transcript and taken from the mailbox.
 * Printed: deliveries/s (messages over the time from the first send to the last one taken by
 * the receiver's turn) and the mailbox wait p50/p99 (`team_mailbox`: taken_at − created_at, the
 * moment a turn of the receiver took the message, for the step it starts or runs next).
 */
import pg from 'pg';
import request from 'supertest';
import type { RecordedModelRequest, ScriptedReply } from '#testing/scripted-model-server.js';
import { textReply } from '#testing/scripted-model-server.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import { servicesAvailable } from '#testing/test-env.js';
import type { TestServer } from '#testing/test-server.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1000);
const SENDERS = ['Sender1', 'Sender2', 'Sender3'];
/** team_send calls per model step of a sender. */
const BATCH = 10;
const TIMEOUT_MS = Math.max(120_000, MESSAGES * 300);

const note = (line: string): boolean => process.stderr.write(`[bench] ${line}\n`);
const pct = (xs: number[], p: number): number => {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (x: number): string => `${x.toFixed(1)} ms`;

const spec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'bench',
  description: `${name} of the bench team.`,
  type: 'automation',
  system_prompt: `You are the ${name}.`,
});

const api = (s: TestServer) => ({
  get: (p: string) => request(s.url).get(p).set('Authorization', `Bearer ${s.password}`),
  post: (p: string, body: object = {}) =>
    request(s.url).post(p).set('Authorization', `Bearer ${s.password}`).send(body),
});
const data = <T>(res: request.Response): T => {
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data as T;
};

const whoAmI = (req: RecordedModelRequest) =>
  /You are \\"([^"\\]+)\\" \(/.exec(JSON.stringify((req.body as { system?: unknown }).system ?? ''))?.[1] ?? '';

/** How many messages each sender sends: MESSAGES split as evenly as it goes. */
const quotas = new Map(
  SENDERS.map((name, i) => [name, Math.floor(MESSAGES / SENDERS.length) + (i < MESSAGES % SENDERS.length ? 1 : 0)]),
);

/** Sender: the next BATCH team_send calls after those already in its transcript; the receiver: a line of text. */
function script(req: RecordedModelRequest): ScriptedReply {
  const me = whoAmI(req);
  if (me === 'Lead') return { steps: [{ hang: true }] };
  const quota = quotas.get(me);
  if (quota === undefined) return textReply('Got it.');
  const messages = (req.body as { messages: Array<{ content: unknown }> }).messages;
  const sent = messages
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string; name?: string }>) : []))
    .filter((b) => b.type === 'tool_use' && b.name === 'team_send').length;
  if (sent >= quota) return textReply('All sent.');
  const steps = [];
  for (let i = sent; i < Math.min(quota, sent + BATCH); i++) {
    steps.push({ toolCall: { name: 'team_send', input: { to: 'Receiver', message: `${me} #${i}` } } });
  }
  return { steps };
}

interface TurnRow {
  id: string;
  status: string;
  replica_id: string | null;
  started_at: Date | null;
  ended_at: Date | null;
}

async function main(): Promise<void> {
  const available = await servicesAvailable();
  if (!available.ok) {
    process.stdout.write(`skipped: Postgres/Redis not reachable (${available.reason})\n`);
    return;
  }
  process.env.SVC_TEST_MODE = 'services';
  note(`3 replicas on Postgres + Redis, ${MESSAGES} messages from ${SENDERS.length} senders to one receiver`);
  const replicas: Replicas = await startReplicas({
    count: 3,
    env: {
      // The bench's own volume is above a run's default limits (200 messages, 50 steps a turn).
      SVC_TEAM_MAX_MESSAGES: String(MESSAGES + 100),
      SVC_AGENT_MAX_STEPS: '500',
    },
  });
  const db = new pg.Client({ connectionString: replicas.services.databaseUrl });
  await db.connect();
  try {
    const servers = [replicas.a, replicas.b, ...replicas.more];
    const first = servers[0]!;
    replicas.model.respond(script);
    const space = data<{ id: string }>(await api(first).post('/api/spaces', { name: 'teams bench' }));
    const install = async (name: string) =>
      data<{ appId: string }>(await api(first).post('/api/apps/install', { spec: spec(name), spaceId: space.id }))
        .appId;
    const ids: Record<string, string> = {};
    for (const name of ['Lead', 'Receiver', ...SENDERS]) ids[name] = await install(name);
    const team = data<{ id: string }>(
      await api(first).post('/api/teams', {
        input: {
          name: 'Bench',
          goal: 'Pass messages.',
          owningSpaceId: space.id,
          leadAppId: ids.Lead,
          members: ['Receiver', ...SENDERS].map((name) => ({ appId: ids[name], memberName: name })),
        },
      }),
    );
    const epoch = data<{ id: string }>(await api(first).post(`/api/teams/${team.id}/run`));
    const receiver = ids.Receiver!;
    const conversationId = `app-chat:${receiver}:team:${team.id}:${epoch.id}`;

    const t0 = Date.now();
    // Each sender's first message through a different replica.
    await Promise.all(
      SENDERS.map(async (name, i) =>
        data(
          await api(servers[i % servers.length]!).post(`/api/teams/${team.id}/members/${ids[name]}/send`, {
            message: `Send your messages to Receiver.`,
          }),
        ),
      ),
    );

    // Done when every message was taken and nobody but the (hanging) lead works.
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const [{ taken, total }] = (
        await db.query(
          `SELECT count(*) FILTER (WHERE taken_at IS NOT NULL)::int AS taken, count(*)::int AS total
           FROM team_mailbox WHERE epoch_id = $1 AND to_app_id = $2`,
          [epoch.id, receiver],
        )
      ).rows as Array<{ taken: number; total: number }>;
      const { rows: active } = await db.query(
        `SELECT conversation_id FROM agent_turn WHERE status IN ('queued', 'running') AND conversation_id LIKE $1`,
        [`%:team:${team.id}:${epoch.id}`],
      );
      const lead = `app-chat:${ids.Lead}:team:${team.id}:${epoch.id}`;
      if (taken === MESSAGES && total === MESSAGES && active.every((r) => r.conversation_id === lead)) break;
      if (Date.now() > deadline) {
        throw new Error(`timed out: ${taken}/${total} of ${MESSAGES} messages taken; ${active.length} turns active`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const wallMs = Date.now() - t0;

    // 1. never two turns at once for the receiver.
    const turns = (
      await db.query(
        `SELECT id, status, replica_id, started_at, ended_at FROM agent_turn
         WHERE conversation_id = $1 ORDER BY started_at NULLS LAST, created_at`,
        [conversationId],
      )
    ).rows as TurnRow[];
    const ran = turns.filter((t) => t.started_at);
    let overlaps = 0;
    for (let i = 1; i < ran.length; i++) {
      const previousEnd = ran[i - 1]!.ended_at;
      if (!previousEnd || ran[i]!.started_at! < previousEnd) overlaps++;
    }
    const replicasUsed = new Set(ran.map((t) => String(t.replica_id).split('-')[0]));
    const failedTurns = turns.filter((t) => t.status !== 'completed').length;

    // 2 + 3. what the receiver's transcript shows: each message once, in order per sender.
    const transcript = data<Array<{ role: string; content: string }>>(
      await api(servers[1 % servers.length]!).get(
        `/api/teams/${team.id}/chat-messages?appId=${receiver}&epochId=${epoch.id}`,
      ),
    );
    const seen = new Map<string, number[]>(SENDERS.map((s) => [s, []]));
    for (const m of transcript.filter((x) => x.role === 'user')) {
      for (const hit of m.content.matchAll(/\[Message from (Sender\d)\]\n(Sender\d) #(\d+)/g)) {
        if (hit[1] !== hit[2]) throw new Error(`a message of ${hit[2]} attributed to ${hit[1]}`);
        seen.get(hit[1]!)!.push(Number(hit[3]));
      }
    }
    let received = 0;
    let outOfOrder = 0;
    let missing = 0;
    for (const [sender, got] of seen) {
      received += got.length;
      const quota = quotas.get(sender)!;
      const at = got.findIndex((n, i) => n !== i);
      if (at >= 0) {
        outOfOrder++;
        note(`${sender} out of order at #${at}: ${got.slice(Math.max(0, at - 3), at + 12).join(' ')}`);
      }
      missing += quota - new Set(got).size;
    }

    // Figures from the mailbox's own timestamps (Postgres' clock, both ends).
    const mail = (
      await db.query(
        `SELECT extract(epoch FROM created_at) * 1000 AS sent, extract(epoch FROM taken_at) * 1000 AS taken
         FROM team_mailbox WHERE epoch_id = $1 AND to_app_id = $2`,
        [epoch.id, receiver],
      )
    ).rows.map((r) => ({ sent: Number(r.sent), taken: Number(r.taken) }));
    const waits = mail.map((m) => m.taken - m.sent);
    const spanMs = Math.max(...mail.map((m) => m.taken)) - Math.min(...mail.map((m) => m.sent));
    const modelCalls = replicas.model.requests.length;

    process.stdout.write(
      `teams, 3 replicas: ${received} of ${MESSAGES} messages received (${missing} lost, ` +
        `${outOfOrder} senders out of order), ${ran.length} receiver turns on ${replicasUsed.size} replicas ` +
        `(${overlaps} overlapping, ${failedTurns} not completed)\n` +
        `  deliveries/s ${((mail.length / spanMs) * 1000).toFixed(1)} (first send → last taken ${(spanMs / 1000).toFixed(2)} s; ` +
        `wall ${(wallMs / 1000).toFixed(2)} s; ${modelCalls} model calls)\n` +
        `  mailbox wait (sent → taken by the receiver's turn) p50 ${ms(pct(waits, 50))}, p99 ${ms(pct(waits, 99))}, ` +
        `max ${ms(Math.max(...waits))}\n`,
    );
    const ok = received === MESSAGES && missing === 0 && outOfOrder === 0 && overlaps === 0;
    await api(first).post(`/api/teams/${team.id}/pause`);
    if (!ok) {
      process.stdout.write('FAILED: a message was lost or reordered, or the receiver had two turns at once\n');
      process.exitCode = 1;
    }
  } finally {
    await db.end();
    await replicas.stop();
  }
}

await main();
