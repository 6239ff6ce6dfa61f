import { Injectable, Logger } from '@nestjs/common';
import type { AgentEventPayloads } from '#contracts/agent.js';
import type { ConversationChannel } from '#contracts/events.js';
import { EventBus } from '../ports/event-bus.port.js';
import { EventLog, type LoggedEvent } from '../ports/event-log.port.js';
import type { Emit } from './engine/step-emitter.js';
import { preciseNow, relayTrace } from '../kernel/relay-trace.js';
import { streamedReply } from './streamed-reply.js';

/**
 * Emits the events of one conversation: stamps `spaceId`, `conversationId` and a `seq` that
 * increases per conversation, keeps them in the shared log for replay, and publishes them
 * (`EventBus.publishLogged`: over Redis, one round trip does both, and the events that come
 * while a conversation's previous round trip is in flight share its next one).
 *
 * Callers may fire events without awaiting them (stream deltas): they go out in call order,
 * so seqs and delivery follow emission order without a round trip per event. Awaiting an
 * event means it and every event fired before it went out.
 */
@Injectable()
export class ConversationEvents {
  private readonly logger = new Logger('ConversationEvents');

  constructor(
    private readonly bus: EventBus,
    private readonly log: EventLog,
  ) {}

  emit<C extends ConversationChannel>(
    spaceId: string,
    conversationId: string,
    channel: C,
    payload: AgentEventPayloads[C],
  ): Promise<number> {
    return this.publish(spaceId, conversationId, channel, payload).then((logged) => logged.seq);
  }

  private publish(
    spaceId: string,
    conversationId: string,
    channel: ConversationChannel,
    payload: object,
  ): Promise<LoggedEvent> {
    const traced = relayTrace.traces(conversationId);
    const built = traced ? preciseNow() : 0;
    const published = this.bus.publishLogged(this.log, conversationId, channel, {
      ...payload,
      spaceId,
      conversationId,
    });
    if (!traced) return published;
    return published.then((logged) => {
      relayTrace.mark(conversationId, logged.seq, 'built', built);
      return logged;
    });
  }

  /** `emit` bound to one conversation. */
  /** The reply text the conversation's latest turn streamed, as its event log still holds it ('' when none). */
  async streamedReply(conversationId: string): Promise<string> {
    const logged = await this.log.since(conversationId, 0);
    return streamedReply(logged.events);
  }

  emitterFor(spaceId: string, conversationId: string): Emit {
    return async (channel, payload) => {
      await this.emit(spaceId, conversationId, channel, payload);
    };
  }

  /** Fire-and-forget for high-rate events; a failure is logged, not thrown. */
  fire<C extends ConversationChannel>(
    spaceId: string,
    conversationId: string,
    channel: C,
    payload: AgentEventPayloads[C],
  ): void {
    this.publish(spaceId, conversationId, channel, payload).catch((err: Error) =>
      this.logger.warn(`event ${channel} of ${conversationId} was not delivered: ${err.message}`),
    );
  }
}
