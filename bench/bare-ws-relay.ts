/**
 * The reference relay of bench/agent: bare `ws`, in a process of its own like the server under
 * test (sharing the bench's process would leave it one event loop with the bench's clients).
 * Prints its port; `GET /relay?model=<url>&kind=<reply>` reads that model stream (Anthropic
 * wire, as the server does) and sends each text chunk to every connected client as
 * `{"delta": …}`, then `{"end": true}`.
 *
 * Two ways, as `&coalesce=` says:
 *  - naive (the default): one `send` per frame per client, at once. It backlogs at 100 sockets
 *    (one syscall per frame per socket), so its p99 there is seconds: a weak reference;
 *  - coalescing (`coalesce=1`): the server's own way of writing (events.gateway's `send`/`flush`):
 *    each client's frames of one tick are queued and written at the end of the tick
 *    (setImmediate), its TCP socket corked around them, so they leave in one write. No records,
 *    no auth: the practical limit of Node for this job.
 * And two kinds of frame, as `&frames=` says: `small` (the default), `{"delta": …}` (~40 bytes);
 * `spec`, the frame the server sends for each chunk, the spec's `agent:message` event in its
 * envelope (~250 bytes: type, channel, the delta with its flags, the space and conversation ids
 * given as `&spaceId=` and `&conversationId=`, a `seq`), built the same way for every chunk. The
 * clients' share of the CPU grows with the bytes they read (on the bench's shared cores 2-3× per
 * delta), so only a relay sending the same frames does the server's job.
 * With BARE_RELAY_REDIS (a Redis URL) in its environment and `&bus=1`, coalescing goes through
 * Redis as a relay across replicas must: each tick's frames are one PUBLISH (joined by "\n", as
 * the server's batches are) on a channel of its own, and its subscription's messages are what
 * it writes to the clients, coalesced the same way. No log, no seq: the hop alone.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { WebSocketServer } from 'ws';

const busUrl = process.env.BARE_RELAY_REDIS;
const busChannel = `bench:bare-relay:${randomUUID()}`;
const publisher = busUrl ? new Redis(busUrl) : null;
const subscriber = busUrl ? new Redis(busUrl) : null;

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://bare');
  const model = url.searchParams.get('model');
  if (url.pathname !== '/relay' || !model) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(202).end();
  broadcast =
    url.searchParams.get('bus') === '1' && publisher
      ? overBus
      : url.searchParams.get('coalesce') === '1'
        ? coalesced
        : naive;
  frameOf = url.searchParams.get('frames') === 'spec' ? specFrame(url.searchParams) : smallFrame;
  relay(model, url.searchParams.get('kind') ?? 'burst').catch((err: unknown) => {
    process.stderr.write(`bare relay failed: ${String(err)}\n`);
    process.exit(1);
  });
});
const wss = new WebSocketServer({ server });

function naive(frame: string): void {
  for (const client of wss.clients) client.send(frame);
}

/** The frames of this tick, written to every client when it ends. */
let held: string[] = [];
function flush(): void {
  const frames = held;
  held = [];
  for (const client of wss.clients) {
    const tcp = (client as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    tcp?.cork();
    for (const frame of frames) client.send(frame);
    tcp?.uncork();
  }
}
function coalesced(frame: string): void {
  held.push(frame);
  if (held.length === 1) setImmediate(flush);
}

/** The frames of this tick, published as one message when it ends. */
let outgoing: string[] = [];
function publishHeld(): void {
  const frames = outgoing;
  outgoing = [];
  void publisher!.publish(busChannel, frames.join('\n'));
}
function overBus(frame: string): void {
  outgoing.push(frame);
  if (outgoing.length === 1) setImmediate(publishHeld);
}
subscriber?.on('message', (_channel: string, message: string) => {
  for (const frame of message.split('\n')) coalesced(frame);
});

let broadcast: (frame: string) => void = naive;

const smallFrame = (text: string): string => JSON.stringify({ delta: text });
function specFrame(params: URLSearchParams): (text: string) => string {
  const spaceId = params.get('spaceId') ?? randomUUID();
  const conversationId = params.get('conversationId') ?? randomUUID();
  let seq = Date.now() * 1000;
  return (text) =>
    JSON.stringify({
      type: 'event',
      channel: 'agent:message',
      data: { delta: text, isStreaming: true, isComplete: false, spaceId, conversationId, seq: ++seq },
    });
}
let frameOf: (text: string) => string = smallFrame;

async function relay(model: string, kind: string): Promise<void> {
  const res = await fetch(`${model}/v1/messages`, { method: 'POST', body: `{"bench":"bench:${kind}"}` });
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) !== -1) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = event.split('\n').find((l) => l.startsWith('data: '));
      if (!data) continue;
      const parsed = JSON.parse(data.slice(6)) as { type: string; delta?: { text?: string } };
      if (parsed.type === 'content_block_delta' && parsed.delta?.text) {
        broadcast(frameOf(parsed.delta.text));
      }
    }
  }
  broadcast(JSON.stringify({ end: true }));
}

const subscribed = subscriber ? subscriber.subscribe(busChannel) : Promise.resolve();
void subscribed.then(() =>
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`)),
);
process.on('SIGTERM', () => process.exit(0));
