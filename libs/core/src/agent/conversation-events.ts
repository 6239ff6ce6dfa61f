import { Injectable, Logger } from '@nestjs/common';
import { EventBus } from '../ports/event-bus.port.js';
import { EventLog } from '../ports/event-log.port.js';
import type { Emit } from './engine/step-emitter.js';

/**
 * Emits the events of one conversation: stamps `spaceId`, `conversationId` and a `seq` that
 * increases per conversation, keeps them in the shared log for replay, then publishes them.
 *
 * Callers may fire events without awaiting them (stream deltas): appends are issued in call
 * order on one connection, so seqs follow that order, and each publish is issued once its
 * append has answered, again in order — delivery order is emission order without a round
 * trip per event. Awaiting an event means it and every event fired before it went out.
 */
@Injectable()
export class ConversationEvents {
  private readonly logger = new Logger('ConversationEvents');

  constructor(
    private readonly bus: EventBus,
    private readonly log: EventLog,
  ) {}

  emit(spaceId: string, conversationId: string, channel: string, payload: object): Promise<number> {
    const appended = this.log.append(conversationId, channel, { ...payload, spaceId, conversationId });
    return appended.then(async (logged) => {
      await this.bus.publish(channel, logged.data);
      return logged.seq;
    });
  }

  /** `emit` bound to one conversation. */
  emitterFor(spaceId: string, conversationId: string): Emit {
    return async (channel, payload) => {
      await this.emit(spaceId, conversationId, channel, payload);
    };
  }

  /** Fire-and-forget for high-rate events; a failure is logged, not thrown. */
  fire(spaceId: string, conversationId: string, channel: string, payload: object): void {
    this.emit(spaceId, conversationId, channel, payload).catch((err: Error) =>
      this.logger.warn(`event ${channel} of ${conversationId} was not delivered: ${err.message}`),
    );
  }
}
