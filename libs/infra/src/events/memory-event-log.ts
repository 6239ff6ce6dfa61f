import { EVENT_LOG_CAPACITY, EventLog, type LoggedEvent, type ReplayResult } from '#core/ports/event-log.port.js';
import { replayFrom } from './replay.js';

interface Stream {
  last: number;
  /** Kept events are `events[head..]`; the array is compacted now and then, not shifted per event. */
  events: LoggedEvent[];
  head: number;
}

/**
 * One process (no Redis): the log lives in memory. Sequences start from the clock (×1000)
 * so they keep increasing across restarts; a client holding an older seq then gets a gap.
 * At most `maxConversations` logs are kept, the least recently written one leaving first
 * (the Map's insertion order is kept as recency order).
 */
export class MemoryEventLog extends EventLog {
  private readonly streams = new Map<string, Stream>();

  constructor(
    private readonly capacity = EVENT_LOG_CAPACITY,
    private readonly maxConversations = 1000,
  ) {
    super();
  }

  /** The conversation written last: already the newest in `streams`, so not moved again. */
  private newest: Stream | undefined;

  async append(conversationId: string, channel: string, data: Record<string, unknown>): Promise<LoggedEvent> {
    return this.appendNow(conversationId, channel, data);
  }

  override appendNow(conversationId: string, channel: string, data: Record<string, unknown>): LoggedEvent {
    let stream = this.streams.get(conversationId);
    if (stream === undefined || stream !== this.newest) {
      stream ??= { last: Date.now() * 1000, events: [], head: 0 };
      this.streams.delete(conversationId);
      this.streams.set(conversationId, stream);
      this.newest = stream;
      if (this.streams.size > this.maxConversations) this.streams.delete(this.streams.keys().next().value!);
    }
    const seq = ++stream.last;
    const event: LoggedEvent = { seq, channel, data: { ...data, seq } };
    stream.events.push(event);
    if (stream.events.length - stream.head > this.capacity) stream.head++;
    if (stream.head >= this.capacity) {
      stream.events = stream.events.slice(stream.head);
      stream.head = 0;
    }
    return event;
  }

  async since(conversationId: string, afterSeq: number): Promise<ReplayResult> {
    const stream = this.streams.get(conversationId);
    if (!stream) return replayFrom([], afterSeq, 1, null);
    const oldest = stream.events[stream.head]?.seq ?? stream.last + 1;
    return replayFrom(
      stream.events.slice(stream.head).filter((e) => e.seq > afterSeq),
      afterSeq,
      oldest,
      stream.last,
    );
  }
}
