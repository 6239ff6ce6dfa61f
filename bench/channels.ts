/**
 * Message channels benchmark (issue 29's measure). Build first, then:
 *
 *   npm run build:changed && node dist/bench/channels.js [--runs N]
 *
 * (needs Postgres at 127.0.0.1:5432 and Redis at 127.0.0.1:6379). Each run: three replicas on
 * one fresh Postgres database + Redis prefix, one scripted model that answers `echo: <text>`, one
 * digital human with two channel instances: a Telegram bot (the loopback Telegram peer,
 * long-polling mode, so exactly one replica holds the polling lease) and a generic webhook
 * (inbound signed POSTs spread round-robin over the live replicas; replies POSTed back to a
 * loopback callback receiver). BENCH_MESSAGES (1,000) messages over BENCH_CHATS (50) direct
 * chats, half on each platform; each chat sends its next message once the previous one is
 * answered (a burst in one chat would be merged into one turn, by design). When half the
 * messages are answered, the replica holding the Telegram polling lease is killed (SIGKILL).
 * Before measuring, BENCH_WARMUP_CHATS (10) chats on each platform send BENCH_WARMUP_ROUNDS (3)
 * messages each, not measured (compiled code and open connection pools, as in a server in use).
 * A webhook delivery refused by a dead replica is sent again to the next one (as a load balancer
 * or the platform's retry would: the message id keeps it to one turn).
 *
 * Checked, and the run fails otherwise: every message answered (0 lost) and answered once (0
 * duplicate replies); never two Telegram pollers at once.
 * Printed: the takeover time (kill → the first getUpdates from another replica), and the added
 * latency from the platform update received to `agent:turn-start` (over the event socket of
 * every replica, the earliest): for Telegram from the moment the peer answered getUpdates with
 * the update (the last such answer before its turn: an update the killed poller had taken counts
 * from its hand-out to the replica that took over; those updates and their wait from the first
 * hand-out are listed apart), for the webhook from the moment the accepted signed POST was sent;
 * p50/p99 over the messages of the run, before the kill and after the takeover. Target p99 ≤
 * 100 ms on Redis.
 * The whole measurement runs `--runs N` times (default 3); the summary gives each run and the
 * median, with met / NOT met, and the load average.
 *
 * By default each chat sends its next message the moment the previous one is answered (a closed
 * loop): the offered load is whatever the machine can take, so its cores are saturated and the
 * latency is mostly time spent waiting for a core. BENCH_THINK_MS (0) makes each chat pause
 * about that long (0.5–1.5×, at random) before its next message, and begin at a random moment
 * within it, as people do (not 50 chats in step): the latency of a machine with cores to spare.
 * Each run prints the machine's busy share (all cores, /proc/stat) and the messages per second,
 * and lists its BENCH_SLOWEST (15) slowest messages with their turn's start against the takeover.
 * BENCH_CPU_PROF=<dir> runs the replicas under `node --cpu-prof` (the killed one leaves none;
 * summarize one with dist/bench/profile-summary.js).
 */
import { createHmac } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import pg from 'pg';
import request from 'supertest';
import { ChannelCallbackServer } from '#testing/channel-callback-server.js';
import { FakeTelegramServer, type TgUpdate } from '#testing/fake-telegram-server.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import { lastUserTextOf, textReply } from '#testing/scripted-model-server.js';
import { servicesAvailable } from '#testing/test-env.js';
import type { TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1000);
const CHATS = Number(process.env.BENCH_CHATS ?? 50);
const PER_CHAT = Math.ceil(MESSAGES / CHATS);
const TOKEN = '777000:BENCH-channels';
const SECRET = 'bench-channel-secret';
/** How long one message may wait for its answer before it counts as lost. */
const ANSWER_TIMEOUT_MS = Number(process.env.BENCH_ANSWER_TIMEOUT_MS ?? 120_000);
/** Warm-up before measuring: this many chats on each platform, this many messages each. */
const WARMUP_CHATS = Number(process.env.BENCH_WARMUP_CHATS ?? 10);
const WARMUP_ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 3);
/** A chat's pause between an answer and its next message (0: a closed loop, cores saturated). */
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 0);
/** How many of a run's slowest messages are listed (with their time against the takeover). */
const SLOWEST = Number(process.env.BENCH_SLOWEST ?? 15);

const note = (line: string): boolean => process.stderr.write(`[bench] ${line}\n`);
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(', ');
const pct = (xs: number[], p: number): number => {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
function runsOption(): number {
  const at = process.argv.indexOf('--runs');
  const raw = at >= 0 ? process.argv[at + 1] : (process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? '3');
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error('--runs takes a whole number ≥ 1');
  return n;
}

const api = (s: TestServer) => ({
  get: (p: string) => request(s.url).get(p).set('Authorization', `Bearer ${s.password}`),
  post: (p: string, body: object = {}) =>
    request(s.url).post(p).set('Authorization', `Bearer ${s.password}`).send(body),
});
const data = <T>(res: request.Response): T => {
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data as T;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Busy and total CPU time of the whole machine so far, all cores (ms). */
const machineCpu = (): { busy: number; total: number } => {
  let busy = 0;
  let total = 0;
  for (const { times } of cpus()) {
    const all = times.user + times.nice + times.sys + times.irq + times.idle;
    total += all;
    busy += all - times.idle;
  }
  return { busy, total };
};

interface Figures {
  load: string;
  answered: number;
  lost: number;
  duplicates: number;
  conflicts: number;
  takeoverMs: number;
  tgP50: number;
  tgP99: number;
  whP50: number;
  whP99: number;
  allP50: number;
  allP99: number;
  /** The same over the turns that started before the kill: three healthy replicas. */
  steadyP50: number;
  steadyP99: number;
  /** The same over the turns that started after the takeover: two replicas. */
  afterP50: number;
  afterP99: number;
  /** Telegram updates the killed poller had taken, handed out again after the takeover; the longest first hand-out → turn-start. */
  caught: number;
  caughtMaxMs: number;
  wallS: number;
  /** The machine's busy share over the run, all cores (%), and the answered messages per second. */
  busyPct: number;
  perSecond: number;
}

/** The message tag in a text (`tg-3-7`, `wh-30-12`). */
/**
 * The message tags a reply answers: a reply to two messages merged into one turn (one arrived
 * while the other's turn ran) echoes both.
 */
const tagsOf = (text: string): string[] => text.match(/\b(?:tg|wh)-\d+-\d+\b/g) ?? [];

async function measure(round: number): Promise<Figures> {
  const loadAtStart = load();
  const tg = await FakeTelegramServer.start(TOKEN);
  const callback = await ChannelCallbackServer.start(SECRET);
  // As a receiver that keeps the replies' X-Delivery-Id does (docs/api/channels.md, "webhook").
  callback.dropRepeats = true;
  // Every time the peer handed each update to a poller (the platform update "received" by the
  // server). An update handed to the replica that is then killed is handed again to the one that
  // takes its lease over: its latency counts from the hand-out that led to its turn, and the time
  // it waited for the takeover is printed on its own (the takeover and the updates it caught).
  const handedOut = new Map<number, number[]>();
  const peer = tg as unknown as {
    answerPoll: (finish: (status: number, body: unknown) => void, offset: number) => void;
    pending: (offset: number) => TgUpdate[];
  };
  const answerPoll = peer.answerPoll.bind(tg);
  peer.answerPoll = (finish, offset) => {
    const now = Date.now();
    for (const u of peer.pending(offset)) {
      const times = handedOut.get(u.update_id);
      if (times) times.push(now);
      else handedOut.set(u.update_id, [now]);
    }
    answerPoll(finish, offset);
  };
  const replicas: Replicas = await startReplicas({
    count: 3,
    env: { SVC_CHANNEL_ALLOW: '127.0.0.1' },
    nodeArgs: process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
  });
  const redis = new Redis(replicas.services.redisUrl);
  const sockets: WsTestClient[] = [];
  try {
    replicas.model.respond((req) => textReply(`echo: ${lastUserTextOf(req.body)}`));
    const servers = [replicas.a, replicas.b, ...replicas.more];
    const alive = new Set(servers);
    const first = servers[0]!;
    const spaceId = data<{ id: string }>(await api(first).post('/api/spaces', { name: 'channels bench' })).id;
    const spec = {
      spec_version: '1',
      name: 'Echo',
      version: '1.0.0',
      author: 'bench',
      description: 'Echoes.',
      type: 'automation',
      system_prompt: 'Echo.',
      subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
    };
    const appId = data<{ appId: string }>(await api(first).post('/api/apps/install', { spec, spaceId })).appId;
    const tgInstance = data<{ id: string }>(
      await api(first).post('/api/im-channels/instances', {
        type: 'telegram',
        name: 'Bench bot',
        appId,
        config: { botToken: TOKEN, apiRoot: tg.apiRoot },
      }),
    ).id;
    const whInstance = data<{ id: string }>(
      await api(first).post('/api/im-channels/instances', {
        type: 'webhook',
        name: 'Bench hook',
        appId,
        config: { secret: SECRET, callbackUrl: callback.url },
      }),
    ).id;
    for (let waited = 0; ; waited += 200) {
      const [s] = data<Array<{ state: string }>>(
        await api(first).get(`/api/im-channels/status?instanceId=${tgInstance}`),
      );
      if (s?.state === 'online') break;
      if (waited > 60_000) throw new Error(`the Telegram instance is not online: ${JSON.stringify(s)}`);
      await sleep(200);
    }

    // agent:turn-start reaches every signed-in socket; the earliest of the three replicas counts.
    const turnStarts = new Map<string, number[]>();
    for (const s of servers) {
      const ws = await WsTestClient.signedIn(s.wsUrl, s.password);
      ws.socket.on('message', (raw: Buffer) => {
        const at = Date.now();
        const frame = JSON.parse(raw.toString()) as {
          channel?: string;
          data?: { conversationId?: string; seq?: number };
        };
        if (frame.channel !== 'agent:turn-start' || !frame.data?.conversationId) return;
        const key = `${frame.data.conversationId}#${frame.data.seq}`;
        const list = turnStarts.get(key);
        if (list) list.push(at);
        else turnStarts.set(key, [at]);
      });
      ws.socket.on('error', () => undefined);
      sockets.push(ws);
    }
    /** The earliest turn-start of a thread at or after `since`. */
    const turnStartAfter = (conversationId: string, since: number): number | undefined => {
      let best: number | undefined;
      for (const [key, times] of turnStarts) {
        if (!key.startsWith(`${conversationId}#`)) continue;
        const t = Math.min(...times);
        if (t >= since && (best === undefined || t < best)) best = t;
      }
      return best;
    };

    const answersOf = (tag: string): number =>
      tg.sent.filter((m) => tagsOf(m.text).includes(tag)).length +
      callback.replies.filter((r) => tagsOf(r.text).includes(tag)).length;
    let answered = 0;
    let lost = 0;
    const lostTags: string[] = [];
    const tgLatency: number[] = [];
    const whLatency: number[] = [];
    /** Telegram updates handed out more than once (to the killed poller, then again): first hand-out → turn-start. */
    const caughtByKill: number[] = [];
    /** [turn-start time, latency] of every measured message, to split them at the kill. */
    const startedAt: Array<[number, number]> = [];
    /** Every measured message's tag, latency and turn-start time (the slowest are printed). */
    const measured: Array<{ tag: string; ms: number; at: number }> = [];
    let rr = 0;
    const deliverWebhook = async (body: object): Promise<number> => {
      const raw = JSON.stringify(body);
      const signature = `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
      for (let attempt = 0; attempt < 20; attempt++) {
        const list = [...alive];
        const target = list[rr++ % list.length]!;
        const sentAt = Date.now();
        try {
          const res = await fetch(`${target.url}/hooks/channels/${whInstance}`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-Hub-Signature-256': signature },
            body: raw,
          });
          if (res.status === 200) return sentAt;
          note(`webhook answered ${res.status}: ${await res.text()}`);
        } catch {
          // A replica that was killed: the next one gets it.
        }
        await sleep(200);
      }
      throw new Error('no replica accepted a webhook delivery');
    };
    const waitAnswer = async (tag: string): Promise<boolean> => {
      const deadline = Date.now() + ANSWER_TIMEOUT_MS;
      while (answersOf(tag) === 0) {
        if (Date.now() > deadline) return false;
        await sleep(50);
      }
      return true;
    };

    let killedAt = 0;
    let killing: Promise<void> | undefined;
    const killHolder = async (): Promise<void> => {
      const holder = await redis.get(`${replicas.services.redisPrefix}:lease:channel-connection:${tgInstance}`);
      const pid = Number(String(holder).split('-')[0]);
      const victim = servers.find((s) => s.process.pid === pid);
      if (!victim) throw new Error(`the polling lease's holder is no replica: ${holder}`);
      alive.delete(victim);
      killedAt = Date.now();
      victim.process.kill('SIGKILL');
      await victim.exited;
      note(`killed replica pid ${pid} (the Telegram polling lease holder) after ${answered} answers`);
    };

    // Warm-up, not measured: a server in use has its code compiled and its connection pools open.
    // Without it the slowest messages of a run were all among its first ~45 (its first 3 s), each
    // stage of their path slow at once: the replicas' first seconds, not the path.
    for (let round = 0; round < WARMUP_ROUNDS; round++)
      await Promise.all(
        Array.from({ length: WARMUP_CHATS }, async (_, w) => {
          const c = CHATS + w;
          await tg.userMessage({
            chat: { id: 90_000 + w, type: 'private', first_name: `Warm${w}` },
            from: { id: 90_000 + w, first_name: `Warm${w}` },
            text: `message tg-${c}-${round}`,
          });
          await deliverWebhook({
            messageId: `m-warm-${w}-${round}`,
            chatId: `warm-${w}`,
            chatType: 'direct',
            from: { id: `warm-${w}`, name: `Warm ${w}` },
            text: `message wh-${c}-${round}`,
          });
          for (const tag of [`tg-${c}-${round}`, `wh-${c}-${round}`])
            if (!(await waitAnswer(tag))) throw new Error(`warm-up message ${tag} was not answered`);
        }),
      );

    const t0 = Date.now();
    const cpuAtStart = machineCpu();
    const chat = async (c: number): Promise<void> => {
      const telegram = c % 2 === 0;
      if (THINK_MS > 0) await sleep(THINK_MS * Math.random());
      for (let k = 0; k < PER_CHAT && c * PER_CHAT + k < MESSAGES; k++) {
        const tag = `${telegram ? 'tg' : 'wh'}-${c}-${k}`;
        const text = `message ${tag}`;
        if (telegram) {
          const user = { id: 10_000 + c, first_name: `User${c}` };
          const update = await tg.userMessage({
            chat: { id: 10_000 + c, type: 'private', first_name: `User${c}` },
            from: user,
            text,
          });
          const ok = await waitAnswer(tag);
          const times = handedOut.get(update.update_id) ?? [];
          const thread = `app-chat:${appId}:telegram:direct:${10_000 + c}`;
          const started = times.length > 0 ? turnStartAfter(thread, times[0]!) : undefined;
          if (started) {
            const received = Math.max(...times.filter((t) => t <= started));
            tgLatency.push(started - received);
            startedAt.push([started, started - received]);
            measured.push({ tag, ms: started - received, at: started });
            if (times.length > 1) caughtByKill.push(started - times[0]!);
          }
          if (!ok) {
            lost++;
            lostTags.push(tag);
          } else answered++;
        } else {
          const sentAt = await deliverWebhook({
            messageId: `m-${tag}`,
            chatId: `chat-${c}`,
            chatType: 'direct',
            from: { id: `user-${c}`, name: `User ${c}` },
            text,
          });
          const ok = await waitAnswer(tag);
          const started = turnStartAfter(`app-chat:${appId}:webhook:direct:chat-${c}`, sentAt);
          if (started) {
            whLatency.push(started - sentAt);
            startedAt.push([started, started - sentAt]);
            measured.push({ tag, ms: started - sentAt, at: started });
          }
          if (!ok) {
            lost++;
            lostTags.push(tag);
          } else answered++;
        }
        if (!killing && answered >= MESSAGES / 2) killing = killHolder();
        if (killing) await killing;
        if (THINK_MS > 0) await sleep(THINK_MS * (0.5 + Math.random()));
      }
    };
    await Promise.all(Array.from({ length: CHATS }, (_, c) => chat(c)));
    const wallS = (Date.now() - t0) / 1000;
    const cpuAtEnd = machineCpu();
    const busyPct = (100 * (cpuAtEnd.busy - cpuAtStart.busy)) / (cpuAtEnd.total - cpuAtStart.total);
    // Late answers and duplicates: give a recovery or a replay some time to show before counting.
    const lateDeadline = Date.now() + Number(process.env.BENCH_LATE_MS ?? 30_000);
    while (lostTags.some((t) => answersOf(t) === 0) && Date.now() < lateDeadline) await sleep(500);
    await sleep(3000);
    const lateAnswered = lostTags.filter((t) => answersOf(t) > 0);
    const db = new pg.Client({ connectionString: replicas.services.databaseUrl });
    await db.connect();
    const turnsByStatus = (
      await db.query(
        `SELECT status, count(*)::int AS n FROM agent_turn WHERE conversation_id LIKE $1 GROUP BY status ORDER BY status`,
        [`app-chat:${appId}:%`],
      )
    ).rows as Array<{ status: string; n: number }>;
    await db.end();
    const untagged = [...tg.sent.map((m) => m.text), ...callback.replies.map((r) => r.text)].filter(
      (t) => tagsOf(t).length === 0,
    );
    note(
      `run ${round}: thread turns by status ${turnsByStatus.map((r) => `${r.status} ${r.n}`).join(', ')}; ` +
        `${lateAnswered.length} of the unanswered answered later (${lateAnswered.join(' ')}); ` +
        `${untagged.length} replies without a message tag: ${[...new Set(untagged)].slice(0, 3).join(' | ')}`,
    );
    let duplicates = 0;
    for (let c = 0; c < CHATS; c++)
      for (let k = 0; k < PER_CHAT && c * PER_CHAT + k < MESSAGES; k++) {
        const tag = `${c % 2 === 0 ? 'tg' : 'wh'}-${c}-${k}`;
        const n = answersOf(tag);
        if (n > 1) {
          duplicates += n - 1;
          // When each copy left, against the kill: a reply part sent by the killed replica just
          // before it died, its `reply-sent` mark not yet written, is sent again by the replica
          // that takes its job over (at-least-once; Telegram's sendMessage has no idempotency key).
          const times = tg.sent
            .map((msg, i) => [msg, tg.sentTimes[i]] as const)
            .filter(([msg]) => tagsOf(msg.text).includes(tag))
            .map(([, at]) =>
              at === undefined || !killedAt ? '?' : `${at - killedAt >= 0 ? '+' : ''}${at - killedAt} ms`,
            );
          note(`answered ${n} times: ${tag}${times.length ? ` (sent at kill ${times.join(', ')})` : ''}`);
        }
      }
    const firstPoll = tg.pollTimes.find((at) => at > killedAt);
    const takeoverMs = killedAt && firstPoll ? firstPoll - killedAt : NaN;
    // Where the whole run's p99 comes from: its slowest messages, with their turn's start against
    // the takeover (the first getUpdates after the kill).
    const slowest = [...measured].sort((x, y) => y.ms - x.ms).slice(0, SLOWEST);
    if (slowest.length > 0)
      note(
        `run ${round}: slowest ${slowest.length}: ` +
          slowest
            .map(
              (x) =>
                `${x.tag} ${x.ms} ms (${firstPoll ? `takeover${x.at - firstPoll >= 0 ? '+' : ''}${x.at - firstPoll} ms` : '-'})`,
            )
            .join(', '),
      );
    const all = [...tgLatency, ...whLatency];
    const steady = startedAt.filter(([at]) => killedAt === 0 || at < killedAt).map(([, ms]) => ms);
    const afterTakeover = startedAt.filter(([at]) => firstPoll !== undefined && at > firstPoll).map(([, ms]) => ms);
    const f: Figures = {
      load: loadAtStart,
      answered,
      lost,
      duplicates,
      conflicts: tg.conflicts,
      takeoverMs,
      tgP50: pct(tgLatency, 50),
      tgP99: pct(tgLatency, 99),
      whP50: pct(whLatency, 50),
      whP99: pct(whLatency, 99),
      allP50: pct(all, 50),
      allP99: pct(all, 99),
      steadyP50: pct(steady, 50),
      steadyP99: pct(steady, 99),
      afterP50: pct(afterTakeover, 50),
      afterP99: pct(afterTakeover, 99),
      caught: caughtByKill.length,
      caughtMaxMs: caughtByKill.length ? Math.max(...caughtByKill) : 0,
      wallS,
      busyPct,
      perSecond: answered / wallS,
    };
    if (lostTags.length) note(`unanswered within ${ANSWER_TIMEOUT_MS} ms: ${lostTags.join(' ')}`);
    note(
      `run ${round}: ${tgLatency.length} telegram + ${whLatency.length} webhook latencies measured; ` +
        `${tg.count('getUpdates')} getUpdates, ${callback.attempts} callback attempts, ` +
        `${callback.repeatsDropped} webhook replies resent after the kill and dropped by their X-Delivery-Id`,
    );
    return f;
  } finally {
    for (const ws of sockets) ws.close();
    redis.disconnect();
    // The killed replica has exited already: stopping it again is a no-op.
    await replicas.stop().catch((err: Error) => note(`stop: ${err.message}`));
    await tg.close();
    await callback.close();
  }
}

async function main(): Promise<void> {
  const available = await servicesAvailable();
  if (!available.ok) {
    process.stdout.write(`skipped: Postgres/Redis not reachable (${available.reason})\n`);
    return;
  }
  process.env.SVC_TEST_MODE = 'services';
  const runs = runsOption();
  note(
    `3 replicas on Postgres + Redis; ${MESSAGES} messages over ${CHATS} chats (Telegram polling + webhook); ${runs} run(s)`,
  );
  const all: Figures[] = [];
  for (let i = 1; i <= runs; i++) {
    const f = await measure(i);
    all.push(f);
    console.log(
      `run ${i}/${runs} (load ${f.load}): answered ${f.answered}/${MESSAGES}, lost ${f.lost}, duplicate replies ${f.duplicates}, ` +
        `poll conflicts ${f.conflicts}, takeover ${f.takeoverMs} ms, update → turn-start p50 ${f.allP50} ms p99 ${f.allP99} ms ` +
        `(telegram ${f.tgP50}/${f.tgP99}, webhook ${f.whP50}/${f.whP99}), wall ${f.wallS.toFixed(1)} s, ` +
        `${f.perSecond.toFixed(1)} messages/s, machine busy ${f.busyPct.toFixed(0)} %`,
    );
  }
  const m = (pick: (f: Figures) => number) => median(all.map(pick));
  const each = (pick: (f: Figures) => number) => all.map((f) => String(pick(f))).join(', ');
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const rows: Array<[string, string, string, string, string]> = [
    [
      'messages answered',
      each((f) => f.answered),
      `${m((f) => f.answered)}`,
      `${MESSAGES}`,
      verdict(m((f) => f.answered) === MESSAGES),
    ],
    ['lost', each((f) => f.lost), `${m((f) => f.lost)}`, '0', verdict(all.every((f) => f.lost === 0))],
    [
      'duplicate replies',
      each((f) => f.duplicates),
      `${m((f) => f.duplicates)}`,
      '0',
      verdict(all.every((f) => f.duplicates === 0)),
    ],
    [
      'two pollers at once (409s)',
      each((f) => f.conflicts),
      `${m((f) => f.conflicts)}`,
      '0',
      verdict(all.every((f) => f.conflicts === 0)),
    ],
    [
      'polling lease takeover after the kill',
      each((f) => f.takeoverMs),
      `${m((f) => f.takeoverMs)} ms`,
      '≤ 30000 ms',
      verdict(m((f) => f.takeoverMs) <= 30_000),
    ],
    ['update → agent:turn-start p50 (both)', each((f) => f.allP50), `${m((f) => f.allP50)} ms`, '', ''],
    [
      'update → agent:turn-start p99 (both)',
      each((f) => f.allP99),
      `${m((f) => f.allP99)} ms`,
      '≤ 100 ms',
      verdict(m((f) => f.allP99) <= 100),
    ],
    [
      '  before the kill (3 healthy replicas) p50 / p99',
      all.map((f) => `${f.steadyP50}/${f.steadyP99}`).join(', '),
      `${m((f) => f.steadyP50)} / ${m((f) => f.steadyP99)} ms`,
      '≤ 100 ms (p99)',
      verdict(m((f) => f.steadyP99) <= 100),
    ],
    [
      '  after the takeover (2 replicas) p50 / p99',
      all.map((f) => `${f.afterP50}/${f.afterP99}`).join(', '),
      `${m((f) => f.afterP50)} / ${m((f) => f.afterP99)} ms`,
      '≤ 100 ms (p99)',
      verdict(m((f) => f.afterP99) <= 100),
    ],
    [
      '  telegram updates the killed poller had taken: count; longest first hand-out → turn-start',
      all.map((f) => `${f.caught}; ${f.caughtMaxMs}`).join(', '),
      `${m((f) => f.caught)}; ${m((f) => f.caughtMaxMs)} ms`,
      '',
      '',
    ],
    [
      '  telegram p50 / p99',
      all.map((f) => `${f.tgP50}/${f.tgP99}`).join(', '),
      `${m((f) => f.tgP50)} / ${m((f) => f.tgP99)} ms`,
      '',
      '',
    ],
    [
      '  webhook p50 / p99',
      all.map((f) => `${f.whP50}/${f.whP99}`).join(', '),
      `${m((f) => f.whP50)} / ${m((f) => f.whP99)} ms`,
      '',
      '',
    ],
    [
      'answered messages/s; machine busy (all cores)',
      all.map((f) => `${f.perSecond.toFixed(1)}; ${f.busyPct.toFixed(0)} %`).join(', '),
      `${m((f) => f.perSecond).toFixed(1)}; ${m((f) => f.busyPct).toFixed(0)} %`,
      '',
      '',
    ],
    [
      'wall time (first message → last answer)',
      all.map((f) => f.wallS.toFixed(1)).join(', '),
      `${m((f) => f.wallS).toFixed(1)} s`,
      '',
      '',
    ],
  ];
  console.log(
    `\nchannels bench: 3 replicas (Postgres + Redis), ${MESSAGES} messages over ${CHATS} chats ` +
      `(half Telegram long polling, half generic webhook), ` +
      (THINK_MS > 0
        ? `each chat pausing ${THINK_MS / 2}–${(THINK_MS * 3) / 2} ms after an answer, `
        : 'each chat in a closed loop (no pause), ') +
      `the polling lease holder killed at half; ` +
      `median of ${runs} run(s); load average now ${load()}`,
  );
  const w = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log(
    `  ${'figure'.padEnd(w[0]!)}  ${'runs'.padEnd(w[1]!)}  ${'median'.padEnd(w[2]!)}  ${'target'.padEnd(w[3]!)}  verdict`,
  );
  for (const r of rows)
    console.log(
      `  ${r[0].padEnd(w[0]!)}  ${r[1].padEnd(w[1]!)}  ${r[2].padEnd(w[2]!)}  ${r[3].padEnd(w[3]!)}  ${r[4]}`,
    );
  if (all.some((f) => f.lost > 0 || f.duplicates > 0 || f.conflicts > 0)) {
    console.log('FAILED: a message was lost or answered twice, or two replicas polled at once');
    process.exitCode = 1;
  }
}

await main();
