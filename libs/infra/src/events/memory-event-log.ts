import { EVENT_LOG_CAPACITY, EventLog, type LoggedEvent, type ReplayResult } from '#core/ports/event-log.port.js';
import { replayFrom } from './replay.js';

interface Stream {
  last: number;
  events: LoggedEvent[];
}

/**
 * One process (no Redis): the log lives in memory. Sequences start from the clock (×1000)
 * so they keep increasing across restarts; a client holding an older seq then gets a gap.
 */
export class MemoryEventLog extends EventLog {
  private readonly streams = new Map<string, Stream>();
  private readonly idleConversations: string[] = [];

  constructor(
    private readonly capacity = EVENT_LOG_CAPACITY,
    private readonly maxConversations = 1000,
  ) {
    super();
  }

  async append(conversationId: string, channel: string, data: Record<string, unknown>): Promise<LoggedEvent> {
    let stream = this.streams.get(conversationId);
    if (!stream) {
      stream = { last: Date.now() * 1000, events: [] };
      this.streams.set(conversationId, stream);
      this.idleConversations.push(conversationId);
      if (this.idleConversations.length > this.maxConversations) this.streams.delete(this.idleConversations.shift()!);
    }
    const seq = ++stream.last;
    const event: LoggedEvent = { seq, channel, data: { ...data, seq } };
    stream.events.push(event);
    if (stream.events.length > this.capacity) stream.events.splice(0, stream.events.length - this.capacity);
    return event;
  }

  async since(conversationId: string, afterSeq: number): Promise<ReplayResult> {
    const stream = this.streams.get(conversationId);
    if (!stream) return replayFrom([], afterSeq, 1, null);
    const oldest = stream.events[0]?.seq ?? stream.last + 1;
    return replayFrom(
      stream.events.filter((e) => e.seq > afterSeq),
      afterSeq,
      oldest,
      stream.last,
    );
  }
}
