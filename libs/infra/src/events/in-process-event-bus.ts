import type { BusEvent } from '#contracts/events.js';
import { type BusEventHandler, EventBus } from '#core/ports/event-bus.port.js';
import type { AppLogger } from '../logging/logger.js';
import { eventFrame } from '#contracts/events.js';

/** One process per data folder (no REDIS_URL): events stay inside this process. */
export class InProcessEventBus extends EventBus {
  private readonly handlers = new Set<BusEventHandler>();

  constructor(private readonly logger?: AppLogger) {
    super();
  }

  async publish(channel: string, data: object): Promise<void> {
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
