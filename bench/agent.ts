/**
 * Agent benchmark. Build first, then: `node dist/bench/agent.js` (Redis at 127.0.0.1:6379 and
 * Postgres at 127.0.0.1:5432 are used for the "redis" mode when they answer).
 *
 * Prints, side by side:
 *  1. POST /api/agent/message → agent:turn-start latency, p50/p99, embedded and Redis modes;
 *  2. a 5,000-chunk reply (written by the model at a steady BENCH_RATE, default 1,000
 *     chunks/s) relayed to 100 subscribed sockets: delta throughput and p99 relay
 *     latency (from the model endpoint writing a chunk to each socket receiving it), against a
 *     bare `ws` relay of the same chunks from the same model stream as the reference, and the ratio.
 *
 * The model endpoint here is a minimal Anthropic-wire SSE server that stamps every text chunk
 * with the time it was written, so latency is measured end to end.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import WebSocket, { WebSocketServer } from 'ws';
import { servicesAvailable } from '#testing/test-env.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 40);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 5000);
const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 100);
/** Chunks per second the model writes: a steady producer, so latency measures the relay, not a backlog. */
const RATE = Number(process.env.BENCH_RATE ?? 1000);

type Reply = 'short' | 'burst' | 'paced';

/** Anthropic Messages SSE: `short` = one text chunk; `stream` = CHUNKS chunks "<i>:<writeTimeMs>;". */
function startModel(): Promise<{ url: string; next: (r: Reply) => void; close: () => void }> {
  const queue: Reply[] = [];
  const server = http.createServer(async (req, res) => {
    for await (const _ of req) void _;
    const kind = queue.shift() ?? 'short';
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
      for (let i = 0; i < CHUNKS; i++) {
        if (
          !send('content_block_delta', {
            index: 0,
            delta: { type: 'text_delta', text: `${i}:${performance.timeOrigin + performance.now()};` },
          })
        ) {
          await new Promise((r) => res.once('drain', r));
        }
        if (i % 50 === 49) await new Promise((r) => setImmediate(r));
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
        next: (r) => queue.push(r),
        close: () => server.close(),
      }),
    ),
  );
}

const now = (): number => performance.timeOrigin + performance.now();
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (x: number): string => `${x.toFixed(1)} ms`;

interface RelayFigures {
  throughput: number;
  p50: number;
  p99: number;
}

/** Parses "<i>:<ts>;" chunks out of a delta and records latency and the last index seen. */
function meter(): { onDelta: (delta: string) => void; latencies: number[]; count: () => number } {
  const latencies: number[] = [];
  let seen = 0;
  return {
    onDelta(delta) {
      const t = now();
      for (const part of delta.split(';')) {
        const at = Number(part.split(':')[1]);
        if (Number.isFinite(at)) {
          latencies.push(t - at);
          seen++;
        }
      }
    },
    latencies,
    count: () => seen,
  };
}

async function measureServer(
  label: string,
  server: TestServer,
  model: Awaited<ReturnType<typeof startModel>>,
): Promise<{ turnStart: number[]; relay: RelayFigures }> {
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
  const turnStart: number[] = [];
  const conv = await newConversation();
  const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
  ws.send({ type: 'subscribe', payload: { conversationId: conv } });
  await ws.roundTrip();
  for (let i = 0; i < TURNS; i++) {
    model.next('short');
    const started = now();
    const pending = ws.event('agent:turn-start', 10_000);
    await request(server.url)
      .post('/api/agent/message')
      .set(auth)
      .send({ spaceId: space.id, conversationId: conv, message: `m${i}` });
    await pending;
    turnStart.push(now() - started);
    await ws.event('agent:complete', 30_000);
  }
  ws.close();

  // 2. 5,000-chunk reply to 100 subscribed sockets: a burst for throughput, a paced one for latency
  const burst = await relayThroughServer(server, model, await newConversation(), space.id, 'burst');
  const paced = await relayThroughServer(server, model, await newConversation(), space.id, 'paced');
  return { turnStart, relay: { throughput: burst.throughput, p50: paced.p50, p99: paced.p99 } };
}

async function relayThroughServer(
  server: TestServer,
  model: Awaited<ReturnType<typeof startModel>>,
  streamConv: string,
  spaceId: string,
  kind: Reply,
): Promise<RelayFigures> {
  const auth = { Authorization: `Bearer ${server.password}` };
  const sockets: WebSocket[] = [];
  const meters = Array.from({ length: SOCKETS }, () => meter());
  const done: Array<Promise<void>> = [];
  for (let i = 0; i < SOCKETS; i++) {
    const socket = new WebSocket(server.wsUrl);
    await new Promise((r) => socket.once('open', r));
    socket.send(JSON.stringify({ type: 'auth', payload: { token: server.password } }));
    socket.send(JSON.stringify({ type: 'subscribe', payload: { conversationId: streamConv } }));
    const m = meters[i]!;
    done.push(
      new Promise((resolve) =>
        socket.on('message', (raw) => {
          const frame = JSON.parse(raw.toString()) as { channel?: string; data?: { delta?: string } };
          if (frame.channel === 'agent:message' && typeof frame.data?.delta === 'string') m.onDelta(frame.data.delta);
          if (frame.channel === 'agent:complete') resolve();
        }),
      ),
    );
    sockets.push(socket);
  }
  await new Promise((r) => setTimeout(r, 300));
  model.next(kind);
  const t0 = now();
  await request(server.url)
    .post('/api/agent/message')
    .set(auth)
    .send({ spaceId, conversationId: streamConv, message: 'stream' });
  await Promise.all(done);
  const elapsed = now() - t0;
  for (const s of sockets) s.close();
  const all = meters.flatMap((m) => m.latencies);
  const delivered = meters.reduce((n, m) => n + m.count(), 0);
  return { throughput: delivered / (elapsed / 1000), p50: pct(all, 50), p99: pct(all, 99) };
}

/** Reference: read the same model stream and broadcast each chunk to 100 bare ws clients. */
async function measureBareRelay(model: Awaited<ReturnType<typeof startModel>>): Promise<RelayFigures> {
  const burst = await bareRelay(model, 'burst');
  const paced = await bareRelay(model, 'paced');
  return { throughput: burst.throughput, p50: paced.p50, p99: paced.p99 };
}

async function bareRelay(model: Awaited<ReturnType<typeof startModel>>, kind: Reply): Promise<RelayFigures> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((r) => wss.once('listening', r));
  const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  const meters = Array.from({ length: SOCKETS }, () => meter());
  const clients: WebSocket[] = [];
  const done: Array<Promise<void>> = [];
  for (let i = 0; i < SOCKETS; i++) {
    const socket = new WebSocket(url);
    await new Promise((r) => socket.once('open', r));
    const m = meters[i]!;
    done.push(
      new Promise((resolve) =>
        socket.on('message', (raw) => {
          const frame = JSON.parse(raw.toString()) as { delta?: string; end?: boolean };
          if (typeof frame.delta === 'string') m.onDelta(frame.delta);
          if (frame.end) resolve();
        }),
      ),
    );
    clients.push(socket);
  }
  model.next(kind);
  const t0 = now();
  const res = await fetch(`${model.url}/v1/messages`, { method: 'POST', body: '{}' });
  const decoder = new TextDecoder();
  let buffer = '';
  const broadcast = (frame: string): void => {
    for (const c of wss.clients) c.send(frame);
  };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) !== -1) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = event.split('\n').find((l) => l.startsWith('data: '));
      if (!data) continue;
      const parsed = JSON.parse(data.slice(6)) as { type: string; delta?: { text?: string } };
      if (parsed.type === 'content_block_delta' && parsed.delta?.text)
        broadcast(JSON.stringify({ delta: parsed.delta.text }));
    }
  }
  broadcast(JSON.stringify({ end: true }));
  await Promise.all(done);
  const elapsed = now() - t0;
  for (const c of clients) c.close();
  wss.close();
  const all = meters.flatMap((m) => m.latencies);
  return {
    throughput: meters.reduce((n, m) => n + m.count(), 0) / (elapsed / 1000),
    p50: pct(all, 50),
    p99: pct(all, 99),
  };
}

async function main(): Promise<void> {
  const model = await startModel();
  const env = {
    SVC_AI_PROVIDER: 'anthropic',
    SVC_AI_API_URL: model.url,
    SVC_AI_API_KEY: 'bench',
    SVC_AI_MODEL: 'claude-bench',
  };
  const results: Array<{ mode: string; turnStart: number[]; relay: RelayFigures }> = [];

  process.env.SVC_TEST_MODE = 'embedded';
  const embedded = await startServer({ env });
  try {
    results.push({ mode: 'embedded', ...(await measureServer('embedded', embedded, model)) });
  } finally {
    await embedded.stop();
  }

  if ((await servicesAvailable()).ok) {
    const services = await createSharedServices();
    const redis = await startServer({ env, services });
    try {
      results.push({ mode: 'redis', ...(await measureServer('redis', redis, model)) });
    } finally {
      await redis.stop();
      await services.dispose();
    }
  } else {
    process.stdout.write('redis mode skipped: Postgres/Redis not reachable\n');
  }

  const bare = await measureBareRelay(model);
  model.close();

  process.stdout.write(`\nPOST /api/agent/message → agent:turn-start (${TURNS} turns)\n`);
  for (const r of results)
    process.stdout.write(`  ${r.mode.padEnd(9)} p50 ${ms(pct(r.turnStart, 50))}   p99 ${ms(pct(r.turnStart, 99))}\n`);
  process.stdout.write(`\n${CHUNKS}-chunk reply relayed to ${SOCKETS} subscribed sockets\n`);
  process.stdout.write(
    `  ${'relay'.padEnd(12)} ${'deltas/s'.padStart(12)} ${'p50'.padStart(10)} ${'p99'.padStart(10)}   ratio vs bare (throughput, p99)\n` +
      `  (deltas/s: delivered to all sockets, model writing as fast as it can; p50/p99: model at ${RATE} chunks/s)\n`,
  );
  const row = (name: string, f: RelayFigures, ratio: string): void => {
    process.stdout.write(
      `  ${name.padEnd(12)} ${Math.round(f.throughput).toString().padStart(12)} ${ms(f.p50).padStart(10)} ${ms(f.p99).padStart(10)}   ${ratio}\n`,
    );
  };
  row('bare ws', bare, 'reference');
  for (const r of results) {
    row(
      `svc ${r.mode}`,
      r.relay,
      `${(r.relay.throughput / bare.throughput).toFixed(2)}x, ${(r.relay.p99 / bare.p99).toFixed(1)}x`,
    );
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
