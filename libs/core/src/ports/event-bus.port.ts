import type { BusEvent, ConversationChannel, EventChannel, EventMap } from '#contracts/events.js';
import { relayTrace } from '../kernel/relay-trace.js';
import type { EventLog, LoggedEvent } from './event-log.port.js';

export type BusEventHandler = (event: BusEvent, frame: string) => void;

/**
 * Carries events to every replica's gateway. Each published event reaches every
 * subscriber of every replica exactly once, the publisher's own replica included.
 * The handler receives the event and its wire frame, serialized once. Only the channels of
 * `EventMap` (libs/contracts/src/events.ts) are published, each with its payload type.
 */
export abstract class EventBus {
  abstract publish<C extends EventChannel>(channel: C, data: EventMap[C]): Promise<void>;
  /** Returns a function that removes the handler. */
  abstract subscribe(handler: BusEventHandler): () => void;

  /**
   * Keeps a conversation event in `log` (which assigns its seq), then publishes it with that
   * seq. Calls are answered in call order, so events go out in seq order. An adapter whose
   * log and bus share a store overrides this to do both in one round trip.
   */
  async publishLogged(
    log: EventLog,
    conversationId: string,
    channel: ConversationChannel,
    data: Record<string, unknown>,
  ): Promise<LoggedEvent> {
    const logged = await log.append(conversationId, channel, data);
    relayTrace.markLogged(conversationId, logged.seq);
    // The log answers the payload it was given, stamped with spaceId, conversationId and seq.
    await this.publish(channel, logged.data as EventMap[typeof channel]);
    return logged;
  }
}
