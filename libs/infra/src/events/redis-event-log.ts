import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { EVENT_LOG_CAPACITY, EventLog, type LoggedEvent, type ReplayResult } from '#core/ports/event-log.port.js';
import { KeyedBatcher } from './keyed-batcher.js';
import { replayFrom } from './replay.js';

/**
 * Seq and append in one step, so concurrent writers on several replicas never collide. The
 * data JSON is spliced in as text: decoding it in Lua would turn empty arrays into objects.
 */
const APPEND = `
local seq = redis.call('INCR', KEYS[1])
local entry = '{"seq":' .. seq .. ',"channel":' .. cjson.encode(ARGV[1]) .. ',"data":' .. ARGV[2] .. '}'
redis.call('RPUSH', KEYS[2], entry)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return seq`;

/**
 * APPEND of a batch of one conversation's events, then one PUBLISH of all their frames on the
 * bus channel, in the same step: one round trip and one bus message for a burst of events.
 * The seqs are consecutive (one INCRBY), so writers on other replicas never interleave inside
 * a batch. ARGV[4..] are pairs: the channel as JSON, the data as JSON without seq; each frame is
 * `eventFrame(channel, data)` with the seq spliced in last, and the frames are joined by "\n"
 * (which JSON text never holds raw), so a batch of one is exactly one frame.
 */
const APPEND_PUBLISH_BATCH = `
local n = (#ARGV - 3) / 2
local last = redis.call('INCRBY', KEYS[1], n)
local first = last - n + 1
local entries = {}
local frames = {}
for i = 1, n do
  local seq = first + i - 1
  local channel = ARGV[2 + 2 * i]
  local data = ARGV[3 + 2 * i]
  entries[i] = '{"seq":' .. seq .. ',"channel":' .. channel .. ',"data":' .. data .. '}'
  local sep = ','
  if data == '{}' then sep = '' end
  frames[i] = '{"type":"event","channel":' .. channel .. ',"data":' .. string.sub(data, 1, -2) .. sep .. '"seq":' .. seq .. '}}'
end
redis.call('RPUSH', KEYS[2], unpack(entries))
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[1]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PUBLISH', ARGV[3], table.concat(frames, '\\n'))
return first`;
const APPEND_PUBLISH_BATCH_SHA = createHash('sha1').update(APPEND_PUBLISH_BATCH).digest('hex');
/** Events per script call: bounds the call's arguments (Lua's unpack) and one bus message. */
export const MAX_BATCH_EVENTS = 256;
/** Data bytes per script call past its first event, so a few large events do not make one huge message. */
const MAX_BATCH_CHARS = 512 * 1024;

/** One event waiting for its batch: serialized when it was emitted, as the caller's object was then. */
interface Outgoing {
  channel: string;
  /** The data without seq. */
  rest: Record<string, unknown>;
  json: string;
}

const RETAIN_MS = 7 * 24 * 3600 * 1000;

/** The log in Redis: a counter and a capped list per conversation, shared by all replicas. */
export class RedisEventLog extends EventLog {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly capacity = EVENT_LOG_CAPACITY,
  ) {
    super();
  }

  /**
   * One event, on its own round trip. Not ordered against `appendAndPublish` events of the same
   * conversation still waiting for their batch: a log is written through one of the two (the
   * Redis bus uses `appendAndPublish`, other buses `append`).
   */
  async append(conversationId: string, channel: string, data: Record<string, unknown>): Promise<LoggedEvent> {
    const [seqKey, listKey] = this.keys(conversationId);
    const { seq: _ignored, ...rest } = data;
    const seq = Number(
      await this.redis.eval(
        APPEND,
        2,
        seqKey,
        listKey,
        channel,
        JSON.stringify(rest),
        String(this.capacity),
        String(RETAIN_MS),
      ),
    );
    return { seq, channel, data: { ...rest, seq } };
  }

  /**
   * `append`, and the event's bus frame (`eventFrame(channel, data)` with the seq last in the
   * data, as every adapter writes it) published on `busChannel` in the same step. Events of a
   * conversation that come while its previous call is in flight are coalesced into its next
   * call (consecutive seqs, one bus message carrying their frames in seq order; see
   * `busFrames` in event-frame.ts). Calls of a conversation go one at a time, in call order, so seqs follow the
   * call order and each promise settles after every earlier one of its conversation.
   */
  appendAndPublish(
    conversationId: string,
    channel: string,
    data: Record<string, unknown>,
    busChannel: string,
  ): Promise<LoggedEvent> {
    // The caller's object becomes the logged event's data (its only caller, ConversationEvents,
    // builds one per event); copied only to drop a seq it brought.
    const rest = 'seq' in data ? withoutSeq(data) : data;
    return this.batcherFor(busChannel).add(conversationId, { channel, rest, json: JSON.stringify(rest) });
  }

  async since(conversationId: string, afterSeq: number): Promise<ReplayResult> {
    const [seqKey, listKey] = this.keys(conversationId);
    const [last, head] = await Promise.all([this.redis.get(seqKey), this.redis.lindex(listKey, 0)]);
    if (last === null) return replayFrom([], afterSeq, 1, null);
    const oldest = head === null ? Number(last) + 1 : (JSON.parse(head) as LoggedEvent).seq;
    // The list holds consecutive seqs, so the first wanted entry's index is known.
    const start = Math.max(0, afterSeq + 1 - oldest);
    const raw = head === null ? [] : await this.redis.lrange(listKey, start, -1);
    return replayFrom(raw.map(parseEntry), afterSeq, oldest, Number(last));
  }

  /** One batcher per bus channel (in practice one), so a batch has one channel to publish on. */
  private readonly batchers = new Map<string, KeyedBatcher<Outgoing, LoggedEvent>>();

  private batcherFor(busChannel: string): KeyedBatcher<Outgoing, LoggedEvent> {
    let batcher = this.batchers.get(busChannel);
    if (!batcher) {
      batcher = new KeyedBatcher(
        (conversationId, events) => this.appendBatch(conversationId, events, busChannel),
        MAX_BATCH_EVENTS,
        (event) => event.json.length,
        MAX_BATCH_CHARS,
      );
      this.batchers.set(busChannel, batcher);
    }
    return batcher;
  }

  private async appendBatch(conversationId: string, events: Outgoing[], busChannel: string): Promise<LoggedEvent[]> {
    const [seqKey, listKey] = this.keys(conversationId);
    const args = [seqKey, listKey, String(this.capacity), String(RETAIN_MS), busChannel];
    for (const event of events) args.push(channelJson(event.channel), event.json);
    const first = Number(await this.evalCached(args));
    // `rest` is the event's own data (see appendAndPublish): it takes its seq in place rather
    // than being copied once more per event.
    return events.map((event, i) => {
      event.rest.seq = first + i;
      return { seq: first + i, channel: event.channel, data: event.rest };
    });
  }

  /** EVALSHA (the script is not resent each call); EVAL once where Redis does not hold it yet. */
  private async evalCached(args: string[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(APPEND_PUBLISH_BATCH_SHA, 2, ...args);
    } catch (err) {
      if (!(err as Error).message?.startsWith('NOSCRIPT')) throw err;
      return this.redis.eval(APPEND_PUBLISH_BATCH, 2, ...args);
    }
  }

  private keys(conversationId: string): [string, string] {
    const base = `${this.prefix}:events:log:${conversationId}`;
    return [`${base}:seq`, `${base}:list`];
  }
}

/** A few dozen channel names, each JSON-encoded once (a stream repeats one per event). */
const channelJsons = new Map<string, string>();
function channelJson(channel: string): string {
  let json = channelJsons.get(channel);
  if (json === undefined) {
    json = JSON.stringify(channel);
    if (channelJsons.size < 1000) channelJsons.set(channel, json);
  }
  return json;
}

function withoutSeq(data: Record<string, unknown>): Record<string, unknown> {
  const { seq: _ignored, ...rest } = data;
  return rest;
}

function parseEntry(raw: string): LoggedEvent {
  const entry = JSON.parse(raw) as LoggedEvent;
  entry.data.seq = entry.seq;
  return entry;
}
