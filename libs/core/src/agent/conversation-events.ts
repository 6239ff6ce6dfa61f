import { Injectable } from '@nestjs/common';
import { EventBus } from '../ports/event-bus.port.js';
import { EventLog } from '../ports/event-log.port.js';

/**
 * Emits the events of one conversation: stamps `spaceId`, `conversationId` and a `seq` that
 * increases per conversation, keeps them in the shared log for replay, then publishes them.
 */
@Injectable()
export class ConversationEvents {
  constructor(
    private readonly bus: EventBus,
    private readonly log: EventLog,
  ) {}

  async emit(spaceId: string, conversationId: string, channel: string, payload: object): Promise<number> {
    const logged = await this.log.append(conversationId, channel, { ...payload, spaceId, conversationId });
    await this.bus.publish(channel, logged.data);
    return logged.seq;
  }
}
