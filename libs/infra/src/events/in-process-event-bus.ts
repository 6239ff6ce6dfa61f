import type { BusEvent, ConversationChannel } from '#contracts/events.js';
import { type BusEventHandler, EventBus } from '#core/ports/event-bus.port.js';
import type { EventLog, LoggedEvent } from '#core/ports/event-log.port.js';
import { relayTrace } from '#core/kernel/relay-trace.js';
import type { AppLogger } from '../logging/logger.js';
import { eventFrame } from '#contracts/events.js';

/** One process per data folder (no REDIS_URL): events stay inside this process. */
export class InProcessEventBus extends EventBus {
  private readonly handlers = new Set<BusEventHandler>();

  constructor(private readonly logger?: AppLogger) {
    super();
  }

  async publish(channel: string, data: object): Promise<void> {
    this.deliver(channel, data);
  }

  /**
   * With the log in this process too (the embedded default), an event is kept and delivered
   * before this returns: no promise hop between the two, which a stream delta would pay per
   * chunk.
   */
  override publishLogged(
    log: EventLog,
    conversationId: string,
    channel: ConversationChannel,
    data: Record<string, unknown>,
  ): Promise<LoggedEvent> {
    const logged = log.appendNow(conversationId, channel, data);
    if (logged === null) return super.publishLogged(log, conversationId, channel, data);
    relayTrace.markLogged(conversationId, logged.seq);
    this.deliver(channel, logged.data);
    return Promise.resolve(logged);
  }

  private deliver(channel: string, data: object): void {
    const frame = eventFrame(channel, data);
    const event: BusEvent = { channel, data: data as Record<string, unknown> };
    for (const handler of this.handlers) {
      // One failing handler must not keep the event from the others, nor fail the publisher.
      try {
        handler(event, frame);
      } catch (err) {
        this.logger?.warn('event handler failed', { channel, error: (err as Error).message });
      }
    }
  }

  subscribe(handler: BusEventHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
}
