/**
 * Agent benchmark. Build first, then: `node dist/bench/agent.js` (Redis at 127.0.0.1:6379 and
 * Postgres at 127.0.0.1:5432 are used for the "redis" mode when they answer).
 *
 * Prints, side by side in one run:
 *  1. POST /api/agent/message → agent:turn-start latency, p50/p99 of BENCH_TURNS (default 40)
 *     turns in a row, per mode, after untimed turns in BENCH_WARM_UP_CONVERSATIONS (default 4)
 *     other conversations, two each, that warm the server's code paths (the first turn after
 *     start is printed on its own);
 *     beside an authenticated GET /api/system/version after each turn on the same keep-alive
 *     connection, the reference (target: turn-start p99 ≤ 3× its p99);
 *  2. for each socket count of BENCH_SOCKETS (default "10,100,1000"), a reply relayed to that many
 *     subscribed sockets: delta throughput (a burst of at least BENCH_BURST_DELIVERIES chunk
 *     deliveries, default 200,000, i.e. 20,000 chunks to 10 sockets, the model writing as fast
 *     as it can; deltas delivered per second from the model's first chunk to the last delivery,
 *     the whole turn's rate and each relay's CPU time per delivered delta beside it) and p50/p99
 *     relay latency (a BENCH_CHUNKS-chunk reply, default 5,000, the model writing at a steady
 *     BENCH_RATE, default 1,000 chunks/s; from the model endpoint writing a chunk to each socket
 *     receiving it; at most BENCH_PACED_DELIVERIES chunks × sockets), against two bare `ws`
 *     relays of the same model stream in the same run (bench/bare-ws-relay: the naive one, one
 *     `send` per frame per socket, and the coalescing one, the server's corked once-per-tick
 *     writes of the server's own frames without records or auth, the reference of the targets;
 *     the coalescing one with 40-byte frames is printed beside it), and the ratios
 *     (throughput ×, p99 ×, p99 added over bare in ms). The measuring clients read both
 *     relays' frames the same lean way (see `scanFrame`);
 *  3. where each chunk waits: per-stage p50/p99 of the paced relay (model write → event built →
 *     log append → bus publish → gateway → frame written to the last socket → client receive),
 *     from the server's SVC_RELAY_TRACE timestamps joined with the clients' by `seq`;
 *  4. BENCH_CONCURRENT (default 200) concurrent streaming turns, one conversation and one
 *     subscribed socket each, BENCH_CONCURRENT_CHUNKS (default 200) chunks each: every `seq` and
 *     every chunk is checked (0 lost, 0 reordered, 0 duplicated, or the run fails).
 * The whole of it runs BENCH_RUNS times (default 3), each run printed; then each of the targets of docs/performance.md
 * targets with every run's figure and their median, and whether the median meets it.
 * BENCH_MODES (default "embedded,redis") picks the modes; BENCH_CPU_PROF=<dir> runs the servers
 * under `node --cpu-prof` and leaves their profiles there (summarize one with
 * `node dist/bench/profile-summary.js <file>`).
 *
 * The model endpoint here is a minimal Anthropic-wire SSE server that stamps every text chunk
 * with its index and the time it was written, so latency is measured end to end.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import WebSocket from 'ws';
import { servicesAvailable, testRedisUrl } from '#testing/test-env.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';
import { ownCpuMicros, processCpuMicros } from './process-cpu.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 40);
/** Conversations of untimed turns before the series (the first one's first turn is timed on its own). */
const WARM_UP_CONVERSATIONS = Number(process.env.BENCH_WARM_UP_CONVERSATIONS ?? 4);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 5000);
/**
 * Deliveries (chunks × sockets) a throughput burst makes at least: a burst of 5,000 chunks to 10
 * sockets lasted ~0.3 s, short enough for one scheduling hiccup to move the figure by a third.
 */
const BURST_DELIVERIES = Number(process.env.BENCH_BURST_DELIVERIES ?? 200_000);
/**
 * Chunks of a throughput burst to `sockets`: at least BURST_DELIVERIES deliveries, and CHUNKS
 * chunks as long as that stays within BENCH_MAX_BURST_DELIVERIES (default 1,000,000): 5,000 chunks
 * to 1,000 sockets (5 million frames; the naive bare relay wrote each with a syscall of its own)
 * took the loaded 2-core machine over ten minutes a relay, so 1,000 sockets get 1,000 chunks.
 */
const MAX_BURST_DELIVERIES = Number(process.env.BENCH_MAX_BURST_DELIVERIES ?? 1_000_000);
const burstChunks = (sockets: number): number =>
  Math.max(Math.ceil(BURST_DELIVERIES / sockets), Math.min(CHUNKS, Math.ceil(MAX_BURST_DELIVERIES / sockets)));
/** Empty (`BENCH_SOCKETS=`): no relay section, e.g. to measure turn-start on its own. */
const SOCKET_COUNTS = (process.env.BENCH_SOCKETS ?? '10,100,1000').split(',').filter(Boolean).map(Number);
/**
 * Deliveries a paced (latency) reply makes at most: 5,000 chunks to 1,000 sockets would be 5
 * million frames in 5 s, more than the measuring clients (one process, one event loop) can read,
 * so the figure would be theirs; at 1,000 sockets the paced reply is 500 chunks.
 */
const PACED_DELIVERIES = Number(process.env.BENCH_PACED_DELIVERIES ?? 500_000);
const pacedAsk = (sockets: number): Ask => {
  const chunks = Math.min(CHUNKS, Math.ceil(PACED_DELIVERIES / sockets));
  return chunks === CHUNKS ? 'paced' : `paced*${chunks}`;
};
/** Chunks per second the model writes: a steady producer, so latency measures the relay, not a backlog. */
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 200);
const CONCURRENT_CHUNKS = Number(process.env.BENCH_CONCURRENT_CHUNKS ?? 200);
const MODES = (process.env.BENCH_MODES ?? 'embedded,redis').split(',');
const CPU_PROF = process.env.BENCH_CPU_PROF;
/** Whole runs (every mode and the bare relay each time); the summary is the median of each figure. */
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

/** `short`: one text chunk; `burst`: CHUNKS (or `*<n>`) chunks as fast as the socket takes them; `paced`: at RATE/s; `many`: CONCURRENT_CHUNKS in a burst. */
type Reply = 'short' | 'burst' | 'paced' | 'many';
/** What a user message asks the model for: a reply kind, optionally `*<chunks>`. */
type Ask = Reply | `${Reply}*${number}`;

/** Progress, on stderr (the figures go to stdout). */
const note = (line: string): boolean => process.stderr.write(`[bench] ${line}\n`);
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (msecs: number): Promise<void> => new Promise((r) => setTimeout(r, msecs));

type Model = Awaited<ReturnType<typeof startModel>>;

/** Anthropic Messages SSE; text chunks are "<i>:<writeTimeMs>;". */
function startModel(): Promise<{ url: string; close: () => void }> {
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const part of req) body += String(part);
    // The reply asked for is named in the user's message ("bench:<kind>"); anything else
    // (a title, a summary) gets the short one.
    const asked = /bench:(short|burst|paced|many)(?:\*(\d+))?/.exec(body);
    const kind = (asked?.[1] ?? 'short') as Reply;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (event: string, data: object): boolean =>
      res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    send('message_start', {
      message: {
        id: 'msg_b',
        type: 'message',
        role: 'assistant',
        model: 'bench',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 10, output_tokens: 0 },
      },
    });
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    if (kind === 'short') {
      send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } });
    } else {
      const count = asked?.[2] ? Number(asked[2]) : kind === 'many' ? CONCURRENT_CHUNKS : CHUNKS;
      const t0 = performance.now();
      for (let i = 0; i < count; i++) {
        if (kind === 'paced') {
          const wait = t0 + (i * 1000) / RATE - performance.now();
          if (wait >= 1) await sleep(wait);
        }
        if (!send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `${i}:${now()};` } })) {
          await new Promise((r) => res.once('drain', r));
        }
        if (kind !== 'paced' && i % 50 === 49) await new Promise((r) => setImmediate(r));
      }
    }
    send('content_block_stop', { index: 0 });
    send('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } });
    send('message_stop', {});
    res.end();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => server.close(),
      }),
    ),
  );
}

const pct = (xs: number[], p: number): number => {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (x: number): string => `${x.toFixed(1)} ms`;

interface RelayFigures {
  /** Deltas delivered per second from the model's first chunk to the last delivery (the stream itself). */
  throughput: number;
  /** The same over the whole turn: from the request that starts it to its end on every socket. */
  turnThroughput: number;
  /** CPU time of the relay's process (every thread) per delivered delta, µs, over the whole turn. */
  cpuPerDelta: number;
  /** CPU time of this process (the model endpoint and the clients) per delivered delta, µs. */
  benchCpuPerDelta: number;
  p50: number;
  p99: number;
  /** Sockets the server dropped under the 4 MiB backlog rule (the client read too slowly). */
  dropped?: number;
}

/** One received chunk: the event's seq, when the model wrote it, when this socket got it. */
interface Received {
  seq: number;
  wrote: number;
  got: number;
}

/**
 * Records every "<i>:<ts>;" chunk of the deltas one socket receives, as columns of numbers: an
 * object and two splits per chunk made this the bench's costliest function (a sixth of its
 * CPU at 100 sockets), which the measured relays then waited on.
 */
class Meter {
  private readonly seqs: number[] = [];
  private readonly wrote: number[] = [];
  private readonly got: number[] = [];

  get count(): number {
    return this.got.length;
  }

  onDelta(delta: string, seq: number): void {
    const got = now();
    for (let start = 0; start < delta.length;) {
      const colon = delta.indexOf(':', start);
      if (colon === -1) break;
      const end = delta.indexOf(';', colon);
      const at = Number(delta.slice(colon + 1, end === -1 ? delta.length : end));
      if (Number.isFinite(at)) {
        this.seqs.push(seq);
        this.wrote.push(at);
        this.got.push(got);
      }
      if (end === -1) break;
      start = end + 1;
    }
  }

  /** Built when the figures are computed, after the measurement. */
  get received(): Received[] {
    return this.got.map((got, i) => ({ seq: this.seqs[i]!, wrote: this.wrote[i]!, got }));
  }
}

function figures(meters: Meter[], elapsed: number, cpu: number, benchCpu: number): RelayFigures {
  const received = meters.flatMap((m) => m.received);
  const latencies = received.map((r) => r.got - r.wrote);
  let firstWrote = Infinity;
  let lastGot = -Infinity;
  for (const r of received) {
    if (r.wrote < firstWrote) firstWrote = r.wrote;
    if (r.got > lastGot) lastGot = r.got;
  }
  return {
    throughput: latencies.length / ((lastGot - firstWrote) / 1000),
    turnThroughput: latencies.length / (elapsed / 1000),
    cpuPerDelta: cpu / latencies.length,
    benchCpuPerDelta: benchCpu / latencies.length,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
  };
}

interface Relay {
  sockets: number;
  figures: RelayFigures;
  conversationId: string;
  meters: Meter[];
}

interface ModeResult {
  mode: string;
  /** POST → agent:turn-start of the server's first turn after start (not in `turnStart`). */
  firstTurn: number;
  turnStart: number[];
  /** POST /api/agent/message → its answer (after the turn's job is queued). */
  answered: number[];
  /** The reference of turn-start: an authenticated GET /api/system/version after each turn, same connection. */
  versionGet: number[];
  relays: Relay[];
  concurrent: ConcurrentFigures;
  stages: Map<number, StageFigures>;
}

async function measureServer(label: string, server: TestServer, trace: string): Promise<ModeResult> {
  const auth = { Authorization: `Bearer ${server.password}` };
  const space = (
    await request(server.url)
      .post('/api/spaces')
      .set(auth)
      .send({ name: `bench ${label}` })
  ).body.data;
  const newConversation = async (): Promise<string> =>
    (await request(server.url).post(`/api/spaces/${space.id}/conversations`).set(auth).send({})).body.data.id as string;

  // 1. POST → agent:turn-start
  note(`${label}: ${TURNS} turns for turn-start latency`);
  const turnStart: number[] = [];
  const conv = await newConversation();
  const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
  ws.send({ type: 'subscribe', payload: { conversationId: conv } });
  await ws.roundTrip();
  // The keep-alive connection is opened (and this process's `fetch` loaded, ~10-20 ms on its
  // first call) by a request of its own before the first timed turn: what is timed is the
  // server's path, not the client's start.
  const opening = now();
  await (await fetch(`${server.url}/api/system/version`, { headers: auth })).arrayBuffer();
  note(`${label}: the connection opened by GET /api/system/version in ${ms(now() - opening)}`);
  const answered: number[] = [];
  /** Authenticated GET /api/system/version on the same keep-alive connection, one after each turn: the reference. */
  const versionGet: number[] = [];
  const timedVersion = async (): Promise<number> => {
    const started = now();
    const res = await fetch(`${server.url}/api/system/version`, { headers: auth });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET /api/system/version answered ${res.status}`);
    return now() - started;
  };
  /** One turn: POST → its agent:turn-start, and POST → the POST's answer. */
  const timedTurn = async (conversationId: string, message: string): Promise<[number, number]> => {
    // The moment the event arrives, whether or not the POST has answered yet (it answers once
    // the turn's job is queued too); over one keep-alive connection, as a client would send.
    const arrived = ws.event('agent:turn-start', 10_000).then(() => now());
    const started = now();
    const res = await fetch(`${server.url}/api/agent/message`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ spaceId: space.id, conversationId, message }),
    });
    await res.arrayBuffer();
    const answer = now() - started;
    if (res.status !== 200) throw new Error(`POST /api/agent/message answered ${res.status}`);
    const start = (await arrived) - started;
    await ws.event('agent:complete', 30_000);
    return [start, answer];
  };
  // The server's first turn after start runs its code paths cold (24-76 ms where warm turns
  // take 4-15): it is timed and printed on its own, in a conversation of its own, and the
  // series below measures the server as it serves turns. One turn leaves them far from warm
  // (the next conversation's first message still took 23-32 ms over Redis, its memory read
  // alone 6-9 ms against ~1 warm): WARM_UP_CONVERSATIONS conversations of two turns each come
  // first, untimed, as a server in use is past them.
  let firstTurn = NaN;
  for (let i = 0; i < Math.max(1, WARM_UP_CONVERSATIONS); i++) {
    const warmUp = await newConversation();
    ws.send({ type: 'subscribe', payload: { conversationId: warmUp } });
    await ws.roundTrip();
    const [start] = await timedTurn(warmUp, 'warm-up');
    if (i === 0) {
      firstTurn = start;
      continue;
    }
    await timedTurn(warmUp, 'warm-up');
    await timedVersion();
  }
  for (let i = 0; i < TURNS; i++) {
    const [start, answer] = await timedTurn(conv, `m${i}`);
    turnStart.push(start);
    answered.push(answer);
    versionGet.push(await timedVersion());
  }
  ws.close();
  if (process.env.BENCH_TURN_DETAIL)
    note(`${label}: each turn-start (ms, in order): ${turnStart.map((x) => x.toFixed(1)).join(' ')}`);

  // 2. a CHUNKS-chunk reply to N subscribed sockets: a burst for throughput, a paced one for latency
  const relays: Relay[] = [];
  for (const sockets of SOCKET_COUNTS) {
    note(`${label}: relay to ${sockets} sockets`);
    const burst = await relayThroughServer(
      server,
      await newConversation(),
      space.id,
      `burst*${burstChunks(sockets)}`,
      sockets,
    );
    // Only the paced relays are traced (their stages are read below): the burst's throughput is
    // the server's own, as the references' is.
    const pacedConversation = await newConversation();
    appendFileSync(`${trace}.conversations`, `${pacedConversation}\n`);
    const paced = await relayThroughServer(server, pacedConversation, space.id, pacedAsk(sockets), sockets);
    relays.push({
      sockets,
      figures: {
        throughput: burst.figures.throughput,
        turnThroughput: burst.figures.turnThroughput,
        cpuPerDelta: burst.figures.cpuPerDelta,
        benchCpuPerDelta: burst.figures.benchCpuPerDelta,
        p50: paced.figures.p50,
        p99: paced.figures.p99,
        dropped: (burst.figures.dropped ?? 0) + (paced.figures.dropped ?? 0),
      },
      conversationId: paced.conversationId,
      meters: paced.meters,
    });
  }

  // 4. concurrent streaming turns, every seq checked
  note(`${label}: ${CONCURRENT} concurrent turns`);
  const concurrent = await concurrentTurns(server, space.id);

  await server.stop();
  // A server without SVC_RELAY_TRACE (an older build) leaves no stamps: no breakdown then.
  const stamps = existsSync(trace) ? (JSON.parse(readFileSync(trace, 'utf8')) as Record<string, number[]>) : {};
  const stages = new Map(relays.map((r) => [r.sockets, stageFigures(stamps, r.conversationId, r.meters)]));
  for (const r of relays) r.meters = [];
  return { mode: label, firstTurn, turnStart, answered, versionGet, relays, concurrent, stages };
}

/** Opens N sockets signed in and subscribed to one conversation; `onFrame` sees every frame. */
async function subscribers(
  server: TestServer,
  conversationId: string,
  count: number,
  onFrame: (i: number, frame: Frame) => void,
  read: (text: string) => Frame = (text) => JSON.parse(text) as Frame,
): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < count; i++) {
    const socket = new WebSocket(server.wsUrl);
    await new Promise((r) => socket.once('open', r));
    // One sign-in at a time: sign-ins in flight count towards the lockout until they settle.
    const signedIn = new Promise<string>((resolve) => socket.once('message', (raw) => resolve(raw.toString())));
    socket.send(JSON.stringify({ type: 'auth', payload: { token: server.password } }));
    const reply = await signedIn;
    if (!reply.includes('auth:success')) throw new Error(`sign-in refused: ${reply}`);
    socket.send(JSON.stringify({ type: 'subscribe', payload: { conversationId } }));
    socket.on('message', (raw) => onFrame(i, read(raw.toString())));
    sockets.push(socket);
  }
  // The subscription is in once a ping sent after it is answered (frames are handled in order).
  await Promise.all(
    sockets.map(
      (s) =>
        new Promise<void>((resolve) => {
          const onPong = (raw: WebSocket.RawData): void => {
            if (raw.toString() !== '{"type":"pong"}') return;
            s.off('message', onPong);
            resolve();
          };
          s.on('message', onPong);
          s.send('{"type":"ping"}');
        }),
    ),
  );
  return sockets;
}

interface Frame {
  type?: string;
  channel?: string;
  data?: { delta?: string; seq?: number; conversationId?: string };
}

/**
 * The relay figures' reading of a frame: its channel, `delta` and `seq` found by position, not
 * a whole JSON.parse. The measuring clients share this process with the model endpoint, and with
 * JSON.parse of every frame it was this process that ran out of CPU first (the server's frames
 * carry the spec's envelope: ~250 bytes against the bare relay's ~40), so the figure measured
 * the clients, not the relay. The bare relay's clients read its frames the same way. The bench's
 * own chunks hold no quotes or escapes, so a string value ends at the next quote.
 */
function scanFrame(text: string): Frame {
  const stringAfter = (key: string): string | undefined => {
    const at = text.indexOf(key);
    return at === -1 ? undefined : text.slice(at + key.length, text.indexOf('"', at + key.length));
  };
  const seqAt = text.indexOf('"seq":');
  return {
    channel: stringAfter('"channel":"'),
    data: {
      delta: stringAfter('"delta":"'),
      ...(seqAt === -1 ? {} : { seq: Number.parseInt(text.slice(seqAt + 6, seqAt + 32), 10) }),
    },
  };
}

async function relayThroughServer(
  server: TestServer,
  conversationId: string,
  spaceId: string,
  kind: Ask,
  count: number,
): Promise<{ figures: RelayFigures; conversationId: string; meters: Meter[] }> {
  const auth = { Authorization: `Bearer ${server.password}` };
  const meters = Array.from({ length: count }, () => new Meter());
  let resolveDone: () => void = () => undefined;
  let completed = 0;
  const finished = new Set<number>();
  const done = new Promise<void>((r) => (resolveDone = r));
  const finish = (i: number): void => {
    if (finished.has(i)) return;
    finished.add(i);
    if (++completed === count) resolveDone();
  };
  const sockets = await subscribers(
    server,
    conversationId,
    count,
    (i, frame) => {
      if (frame.channel === 'agent:message' && typeof frame.data?.delta === 'string')
        meters[i]!.onDelta(frame.data.delta, frame.data.seq ?? NaN);
      if (frame.channel === 'agent:complete') finish(i);
    },
    scanFrame,
  );
  // A socket the server drops (its backlog passed 4 MiB: this client read too slowly) ends here too.
  let dropped = 0;
  sockets.forEach((s, i) =>
    s.on('close', () => {
      if (finished.has(i)) return;
      dropped++;
      finish(i);
    }),
  );
  const t0 = now();
  const cpu0 = processCpuMicros(server.process.pid);
  const benchCpu0 = ownCpuMicros();
  await request(server.url)
    .post('/api/agent/message')
    .set(auth)
    .send({ spaceId, conversationId, message: `bench:${kind}` });
  await Promise.race([
    done,
    sleep(120_000).then(() => {
      const state = sockets.map((s, i) => `${meters[i]!.count}/${s.readyState}`).join(' ');
      throw new Error(`${kind} relay: not every socket saw agent:complete in 120 s (chunks/readyState: ${state})`);
    }),
  ]);
  const elapsed = now() - t0;
  const cpu = processCpuMicros(server.process.pid) - cpu0;
  const benchCpu = ownCpuMicros() - benchCpu0;
  for (const s of sockets) s.close();
  return { figures: { ...figures(meters, elapsed, cpu, benchCpu), dropped }, conversationId, meters };
}

interface ConcurrentFigures {
  turns: number;
  events: number;
  lost: number;
  reordered: number;
  duplicated: number;
  seconds: number;
}

/**
 * CONCURRENT turns at once, each on its own conversation with one subscribed socket. Every
 * event a socket receives must carry the next seq of its conversation (no gap, no repeat, no
 * step back), and the chunks must arrive complete and in order.
 */
async function concurrentTurns(server: TestServer, spaceId: string): Promise<ConcurrentFigures> {
  const auth = { Authorization: `Bearer ${server.password}` };
  const result: ConcurrentFigures = { turns: CONCURRENT, events: 0, lost: 0, reordered: 0, duplicated: 0, seconds: 0 };
  const conversations: string[] = [];
  for (let i = 0; i < CONCURRENT; i++) {
    conversations.push(
      (await request(server.url).post(`/api/spaces/${spaceId}/conversations`).set(auth).send({})).body.data
        .id as string,
    );
  }
  const sockets: WebSocket[] = [];
  const finished: Array<Promise<void>> = [];
  for (const conversationId of conversations) {
    let lastSeq = -1;
    let nextChunk = 0;
    let resolveDone: () => void = () => undefined;
    finished.push(new Promise<void>((r) => (resolveDone = r)));
    const [socket] = await subscribers(server, conversationId, 1, (_i, frame) => {
      // Events of every audience carry a seq of their own conversation: only this one's count.
      if (frame.type !== 'event' || frame.data?.conversationId !== conversationId) return;
      if (typeof frame.data.seq !== 'number') return;
      const seq = frame.data.seq;
      result.events++;
      if (lastSeq !== -1) {
        if (seq === lastSeq) result.duplicated++;
        else if (seq < lastSeq) result.reordered++;
        else if (seq > lastSeq + 1) result.lost += seq - lastSeq - 1;
      }
      lastSeq = Math.max(lastSeq, seq);
      if (frame.channel === 'agent:message' && typeof frame.data.delta === 'string') {
        for (const part of frame.data.delta.split(';')) {
          const index = Number(part.split(':')[0]);
          if (part === '' || !Number.isInteger(index)) continue;
          if (index === nextChunk) nextChunk++;
          else if (index < nextChunk) result.reordered++;
          else {
            result.lost += index - nextChunk;
            nextChunk = index + 1;
          }
        }
      }
      if (frame.channel === 'agent:complete') {
        result.lost += CONCURRENT_CHUNKS - nextChunk;
        resolveDone();
      }
    });
    sockets.push(socket!);
  }
  const t0 = now();
  await Promise.all(
    conversations.map((conversationId) => {
      return request(server.url)
        .post('/api/agent/message')
        .set(auth)
        .send({ spaceId, conversationId, message: 'bench:many' })
        .expect(200);
    }),
  );
  const timeout = sleep(300_000).then(() => {
    throw new Error('concurrent turns did not all complete within 300 s');
  });
  await Promise.race([Promise.all(finished), timeout]);
  result.seconds = (now() - t0) / 1000;
  for (const s of sockets) s.close();
  return result;
}

const STAGES = [
  'model → built',
  'built → appended',
  'appended → published',
  'published → gateway',
  'gateway → written',
  'written → client',
];
type StageFigures = Array<{ p50: number; p99: number }>;

/**
 * Joins the server's per-event stamps [built, appended, published, gateway, written] with the
 * clients' (model write time in the chunk, receive time) by seq. `written` is when the frame
 * was handed to the last subscribed socket, so `written → client` can be negative for the first ones.
 */
function stageFigures(stamps: Record<string, number[]>, conversationId: string, meters: Meter[]): StageFigures {
  const columns: number[][] = STAGES.map(() => []);
  for (const m of meters) {
    for (const r of m.received) {
      const s = stamps[`${conversationId}:${r.seq}`];
      if (!s || s.length < 5) continue;
      const points = [r.wrote, ...s, r.got];
      for (let i = 0; i < STAGES.length; i++) columns[i]!.push(points[i + 1]! - points[i]!);
    }
  }
  return columns.map((c) => ({ p50: pct(c, 50), p99: pct(c, 99) }));
}

/**
 * Reference: a bare ws relay (its own process) reads the same model stream and sends each chunk
 * to N clients; `coalesce`: the server's way, each client's frames of a tick in one corked write.
 */
async function measureBareRelay(
  model: Model,
  count: number,
  coalesce: boolean,
  frames: 'small' | 'spec',
  bus = false,
): Promise<RelayFigures> {
  const burst = await bareRelay(model, `burst*${burstChunks(count)}`, count, coalesce, frames, bus);
  const paced = await bareRelay(model, pacedAsk(count), count, coalesce, frames, bus);
  return { ...burst, p50: paced.p50, p99: paced.p99 };
}

async function bareRelay(
  model: Model,
  kind: Ask,
  count: number,
  coalesce: boolean,
  frames: 'small' | 'spec',
  bus: boolean,
): Promise<RelayFigures> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./bare-ws-relay.js', import.meta.url))], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: bus ? { ...process.env, BARE_RELAY_REDIS: testRedisUrl() } : process.env,
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the bare relay exited (${code})`)));
      child.stdout!.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim())));
    });
    const meters = Array.from({ length: count }, () => new Meter());
    const clients: WebSocket[] = [];
    const done: Array<Promise<void>> = [];
    for (let i = 0; i < count; i++) {
      const socket = new WebSocket(`ws://127.0.0.1:${port}`);
      await new Promise((r) => socket.once('open', r));
      const m = meters[i]!;
      done.push(
        new Promise((resolve) =>
          socket.on('message', (raw) => {
            const text = raw.toString();
            const delta = scanFrame(text).data?.delta;
            if (typeof delta === 'string') m.onDelta(delta, 0);
            else if (text === '{"end":true}') resolve();
          }),
        ),
      );
      clients.push(socket);
    }
    const t0 = now();
    const cpu0 = processCpuMicros(child.pid);
    const benchCpu0 = ownCpuMicros();
    const started = await fetch(
      `http://127.0.0.1:${port}/relay?model=${encodeURIComponent(model.url)}&kind=${encodeURIComponent(kind)}&coalesce=${coalesce ? 1 : 0}&bus=${bus ? 1 : 0}&frames=${frames}&spaceId=${randomUUID()}&conversationId=${randomUUID()}`,
    );
    if (started.status !== 202) throw new Error(`the bare relay answered ${started.status}`);
    await Promise.all(done);
    const elapsed = now() - t0;
    const cpu = processCpuMicros(child.pid) - cpu0;
    const benchCpu = ownCpuMicros() - benchCpu0;
    for (const c of clients) c.close();
    return figures(meters, elapsed, cpu, benchCpu);
  } finally {
    child.kill('SIGTERM');
  }
}

async function runMode(mode: string, modelEnv: Record<string, string>): Promise<ModeResult | null> {
  const traceDir = mkdtempSync(join(tmpdir(), 'svc-bench-trace-'));
  const trace = join(traceDir, 'trace.json');
  // The conversations to trace (bench/agent's paced relays), listed as each is created.
  writeFileSync(`${trace}.conversations`, '');
  const env: Record<string, string> = {
    ...modelEnv,
    SVC_RELAY_TRACE: trace,
    // The concurrent turns run at once, not 8 at a time.
    SVC_QUEUE_CONCURRENCY: String(Math.min(256, Math.max(8, CONCURRENT))),
  };
  const nodeArgs = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
  try {
    if (mode === 'embedded') {
      process.env.SVC_TEST_MODE = 'embedded';
      const server = await startServer({ env, nodeArgs });
      try {
        return await measureServer(mode, server, trace);
      } finally {
        await server.stop();
      }
    }
    if (!(await servicesAvailable()).ok) {
      process.stdout.write(`${mode} mode skipped: Postgres/Redis not reachable\n`);
      return null;
    }
    const services = await createSharedServices();
    const server = await startServer({ env, services, nodeArgs });
    try {
      return await measureServer(mode, server, trace);
    } finally {
      await server.stop();
      await services.dispose();
    }
  } finally {
    rmSync(traceDir, { recursive: true, force: true });
  }
}

/** One whole run: every mode, then the bare relay; its figures printed as they are. */
async function runOnce(
  model: Model,
  modelEnv: Record<string, string>,
  run: number,
): Promise<{
  results: ModeResult[];
  bare: Map<number, RelayFigures>;
  coalescing: Map<number, RelayFigures>;
  coalescingSmall: Map<number, RelayFigures>;
  /** The coalescing relay with the server's frames through Redis pub/sub (redis mode only). */
  coalescingRedis: Map<number, RelayFigures>;
  failed: boolean;
}> {
  const results: ModeResult[] = [];
  for (const mode of MODES) {
    note(`run ${run}: ${mode}`);
    const result = await runMode(mode, modelEnv);
    if (result) results.push(result);
  }
  const bare = new Map<number, RelayFigures>();
  const coalescing = new Map<number, RelayFigures>();
  const coalescingSmall = new Map<number, RelayFigures>();
  const coalescingRedis = new Map<number, RelayFigures>();
  const overRedis = results.some((r) => r.mode === 'redis');
  note(
    `run ${run}: bare ws relays (naive, coalescing with the server's frames, coalescing with small frames${overRedis ? ', coalescing through Redis' : ''})`,
  );
  for (const sockets of SOCKET_COUNTS) {
    bare.set(sockets, await measureBareRelay(model, sockets, false, 'small'));
    coalescing.set(sockets, await measureBareRelay(model, sockets, true, 'spec'));
    coalescingSmall.set(sockets, await measureBareRelay(model, sockets, true, 'small'));
    if (overRedis) coalescingRedis.set(sockets, await measureBareRelay(model, sockets, true, 'spec', true));
  }

  out(`
=== run ${run} of ${RUNS} (Node ${process.version}; load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(', ')})`);
  out(`POST /api/agent/message → agent:turn-start (${TURNS} turns)`);
  for (const r of results)
    out(
      `  ${r.mode.padEnd(9)} p50 ${ms(pct(r.turnStart, 50))}   p99 ${ms(pct(r.turnStart, 99))}` +
        `   (the POST's own answer: p50 ${ms(pct(r.answered, 50))}, p99 ${ms(pct(r.answered, 99))};` +
        ` the server's first turn after start, not in these: ${ms(r.firstTurn)})`,
    );
  for (const r of results)
    out(
      `  ${r.mode.padEnd(9)} reference, GET /api/system/version on the same connection: p50 ${ms(pct(r.versionGet, 50))}   p99 ${ms(pct(r.versionGet, 99))}` +
        `   → turn-start p99 ${(pct(r.turnStart, 99) / pct(r.versionGet, 99)).toFixed(2)}× its p99`,
    );

  for (const sockets of SOCKET_COUNTS) {
    const ref = bare.get(sockets)!;
    const co = coalescing.get(sockets)!;
    const small = coalescingSmall.get(sockets)!;
    const hop = coalescingRedis.get(sockets);
    out(`
${pacedAsk(sockets) === 'paced' ? CHUNKS : pacedAsk(sockets).split('*')[1]}-chunk paced reply (${burstChunks(sockets)}-chunk burst) relayed to ${sockets} subscribed sockets`);
    out(
      `  ${'relay'.padEnd(13)} ${'deltas/s'.padStart(9)} ${'p50'.padStart(9)} ${'p99'.padStart(9)}   vs coalescing bare (vs naive bare): throughput ×, p99 ×, p99 added`,
    );
    out(`  (deltas/s: delivered to all sockets, model as fast as it can; p50/p99: model at ${RATE} chunks/s)`);
    const row = (name: string, f: RelayFigures, ratio: string): void => {
      out(
        `  ${name.padEnd(13)} ${Math.round(f.throughput).toString().padStart(9)} ${ms(f.p50).padStart(9)} ${ms(f.p99).padStart(9)}   ${ratio}   (whole turn ${Math.round(f.turnThroughput)}/s; CPU/delta: relay ${f.cpuPerDelta.toFixed(1)} µs, bench ${f.benchCpuPerDelta.toFixed(1)} µs)`,
      );
    };
    const vs = (f: RelayFigures, b: RelayFigures): string =>
      `${(f.throughput / b.throughput).toFixed(2)}x, ${(f.p99 / b.p99).toFixed(2)}x, ${(f.p99 - b.p99).toFixed(1)} ms`;
    row('bare ws', ref, 'naive reference');
    row('bare coalesc.', co, `reference: the server's frames (vs naive: ${vs(co, ref)})`);
    row('  40 B frames', small, `the same, {"delta"} frames only (vs naive: ${vs(small, ref)})`);
    if (hop) row('  over Redis', hop, `the same through Redis pub/sub (vs coalescing: ${vs(hop, co)})`);
    for (const r of results) {
      const f = r.relays.find((x) => x.sockets === sockets)!.figures;
      row(
        `svc ${r.mode}`,
        f,
        `${vs(f, co)} (${vs(f, ref)})` + (f.dropped ? `  (${f.dropped} slow sockets dropped by the 4 MiB rule)` : ''),
      );
      if (r.mode === 'redis' && hop)
        out(`  ${''.padEnd(13)} ${''.padStart(29)}   vs coalescing over Redis: ${vs(f, hop)}`);
    }
    for (const r of results) {
      out(`  where a chunk waits (${r.mode}, p50 / p99):`);
      const stages = r.stages.get(sockets)!;
      out(
        `    ${STAGES.map((name, i) => `${name} ${stages[i]!.p50.toFixed(2)} / ${stages[i]!.p99.toFixed(2)}`).join('; ')}`,
      );
    }
  }

  out(`
${CONCURRENT} concurrent streaming turns (${CONCURRENT_CHUNKS} chunks each), every seq checked`);
  let failed = false;
  for (const r of results) {
    const c = r.concurrent;
    out(
      `  ${r.mode.padEnd(9)} ${c.events} events in ${c.seconds.toFixed(1)} s: lost ${c.lost}, reordered ${c.reordered}, duplicated ${c.duplicated}`,
    );
    if (c.lost + c.reordered + c.duplicated > 0) failed = true;
  }
  return { results, bare, coalescing, coalescingSmall, coalescingRedis, failed };
}

const out = (line: string): boolean => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const model = await startModel();
  const modelEnv = {
    SVC_AI_PROVIDER: 'anthropic',
    SVC_AI_API_URL: model.url,
    SVC_AI_API_KEY: 'bench',
    SVC_AI_MODEL: 'claude-bench',
  };
  const runs: Array<Awaited<ReturnType<typeof runOnce>>> = [];
  for (let run = 1; run <= RUNS; run++) runs.push(await runOnce(model, modelEnv, run));
  model.close();

  // The targets (docs/performance.md), each as the median over the runs (every run's figure beside it).
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  out(`
=== median of ${RUNS} run${RUNS === 1 ? '' : 's'} against the targets`);
  out(`  ${'figure'.padEnd(52)} ${'runs'.padEnd(26)} ${'median'.padStart(9)}  target`);
  const line = (figure: string, xs: number[], unit: string, target: string, met: (m: number) => boolean): void => {
    if (xs.length === 0 || xs.some((x) => !Number.isFinite(x))) return;
    const f = (x: number): string => `${x.toFixed(unit === 'x' ? 2 : 1)}${unit === 'x' ? '×' : ` ${unit}`}`;
    const m = median(xs);
    out(
      `  ${figure.padEnd(52)} ${xs.map(f).join(', ').padEnd(26)} ${f(m).padStart(9)}  ${target} ${met(m) ? 'met' : 'NOT met'}`,
    );
  };
  for (const mode of MODES) {
    const per = runs.map((r) => r.results.find((x) => x.mode === mode)).filter((x) => x !== undefined);
    if (per.length === 0) continue;
    const embedded = mode === 'embedded';
    line(
      `${mode}: POST → turn-start p99`,
      per.map((r) => pct(r.turnStart, 99)),
      'ms',
      embedded ? '≤ 20 ms' : '(none)',
      (m) => !embedded || m <= 20,
    );
    line(
      `${mode}: GET /api/system/version p99 (reference)`,
      per.map((r) => pct(r.versionGet, 99)),
      'ms',
      '(none)',
      () => true,
    );
    line(
      `${mode}: turn-start p99 × GET version p99`,
      per.map((r) => pct(r.turnStart, 99) / pct(r.versionGet, 99)),
      'x',
      '≤ 3×',
      (m) => m <= 3,
    );
    line(
      `${mode}: first turn after start, POST → turn-start`,
      per.map((r) => r.firstTurn),
      'ms',
      '(none)',
      () => true,
    );
    for (const sockets of SOCKET_COUNTS) {
      const svc = runs.map(
        (r) => r.results.find((x) => x.mode === mode)?.relays.find((x) => x.sockets === sockets)?.figures,
      );
      const bare = runs.map((r) => r.bare.get(sockets)!);
      const co = runs.map((r) => r.coalescing.get(sockets)!);
      const small = runs.map((r) => r.coalescingSmall.get(sockets)!);
      const ok = svc.every((f) => f !== undefined);
      if (!ok) continue;
      line(
        `${mode}, ${sockets} sockets: throughput × coalescing bare`,
        svc.map((f, i) => f!.throughput / co[i]!.throughput),
        'x',
        '≥ 0.8×',
        (m) => m >= 0.8,
      );
      const hop = runs.map((r) => r.coalescingRedis.get(sockets));
      if (mode === 'redis' && hop.every((f) => f !== undefined)) {
        line(
          `${mode}, ${sockets} sockets: the same × coalescing bare over Redis`,
          svc.map((f, i) => f!.throughput / hop[i]!.throughput),
          'x',
          '(none)',
          () => true,
        );
        line(
          `coalescing bare over Redis × coalescing bare, ${sockets}`,
          hop.map((f, i) => f!.throughput / co[i]!.throughput),
          'x',
          '(none)',
          () => true,
        );
      }
      line(
        `${mode}, ${sockets} sockets: the same × bare with 40 B frames`,
        svc.map((f, i) => f!.throughput / small[i]!.throughput),
        'x',
        '(none)',
        () => true,
      );
      if (sockets <= 10) {
        line(
          `${mode}, ${sockets} sockets: p99 added over coalescing bare`,
          svc.map((f, i) => f!.p99 - co[i]!.p99),
          'ms',
          '≤ 2 ms',
          (m) => m <= 2,
        );
      } else {
        line(
          `${mode}, ${sockets} sockets: p99 × coalescing bare`,
          svc.map((f, i) => f!.p99 / co[i]!.p99),
          'x',
          '≤ 2×',
          (m) => m <= 2,
        );
      }
      const throughput = svc.map((f, i) => f!.throughput / bare[i]!.throughput);
      line(
        `${mode}, ${sockets} sockets: throughput × bare`,
        throughput,
        'x',
        sockets === 10 ? '≥ 1×' : '(none)',
        (m) => sockets !== 10 || m >= 1,
      );
      if (sockets === 10) {
        const limit = embedded ? 5 : 10;
        const added = svc.map((f, i) => f!.p99 - bare[i]!.p99);
        line(`${mode}, ${sockets} sockets: p99 added over bare`, added, 'ms', `≤ ${limit} ms`, (m) => m <= limit);
      } else {
        const times = svc.map((f, i) => f!.p99 / bare[i]!.p99);
        line(
          `${mode}, ${sockets} sockets: p99 × bare`,
          times,
          'x',
          sockets === 100 ? '≤ 2×' : '(none)',
          (m) => sockets !== 100 || m <= 2,
        );
      }
    }
    const bad = per.map((r) => r.concurrent.lost + r.concurrent.reordered + r.concurrent.duplicated);
    out(
      `  ${`${mode}: ${CONCURRENT} turns, lost + reordered + duplicated`.padEnd(52)} ${bad.join(', ').padEnd(26)} ${String(Math.max(...bad)).padStart(9)}  0 ${Math.max(...bad) === 0 ? 'met' : 'NOT met'}`,
    );
  }
  if (runs.some((r) => r.failed)) throw new Error('events were lost, reordered or duplicated');
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
