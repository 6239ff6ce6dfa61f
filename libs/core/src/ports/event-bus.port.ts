import type { BusEvent } from '#contracts/events.js';

export type BusEventHandler = (event: BusEvent, frame: string) => void;

/**
 * Carries events to every replica's gateway. Each published event reaches every
 * subscriber of every replica exactly once, the publisher's own replica included.
 * The handler receives the event and its wire frame, serialized once.
 */
export abstract class EventBus {
  abstract publish(channel: string, data: object): Promise<void>;
  /** Returns a function that removes the handler. */
  abstract subscribe(handler: BusEventHandler): () => void;
}
