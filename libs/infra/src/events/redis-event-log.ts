import type { Redis } from 'ioredis';
import { EVENT_LOG_CAPACITY, EventLog, type LoggedEvent, type ReplayResult } from '#core/ports/event-log.port.js';
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
 * APPEND, then PUBLISH of the event's frame on the bus channel, in the same step: one round
 * trip per event instead of two in a row. The frame is spliced as text around the new seq:
 * ARGV[5] is the frame up to the data's last field, ARGV[6] what separates `"seq"` from it.
 */
const APPEND_PUBLISH = `${APPEND.replace(/return seq$/, '')}
redis.call('PUBLISH', ARGV[7], ARGV[5] .. ARGV[6] .. '"seq":' .. seq .. '}}')
return seq`;
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
   * data, as every adapter writes it) published on `busChannel` by the same script.
   */
  async appendAndPublish(
    conversationId: string,
    channel: string,
    data: Record<string, unknown>,
    busChannel: string,
  ): Promise<LoggedEvent> {
    const [seqKey, listKey] = this.keys(conversationId);
    const { seq: _ignored, ...rest } = data;
    const json = JSON.stringify(rest);
    const framePrefix = `{"type":"event","channel":${JSON.stringify(channel)},"data":${json.slice(0, -1)}`;
    const seq = Number(
      await this.redis.eval(
        APPEND_PUBLISH,
        2,
        seqKey,
        listKey,
        channel,
        json,
        String(this.capacity),
        String(RETAIN_MS),
        framePrefix,
        json === '{}' ? '' : ',',
        busChannel,
      ),
    );
    return { seq, channel, data: { ...rest, seq } };
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

  private keys(conversationId: string): [string, string] {
    const base = `${this.prefix}:events:log:${conversationId}`;
    return [`${base}:seq`, `${base}:list`];
  }
}

function parseEntry(raw: string): LoggedEvent {
  const entry = JSON.parse(raw) as LoggedEvent;
  entry.data.seq = entry.seq;
  return entry;
}
