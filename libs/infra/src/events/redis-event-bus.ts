import { Redis } from 'ioredis';
import { type BusEventHandler, EventBus } from '#core/ports/event-bus.port.js';
import type { EventLog, LoggedEvent } from '#core/ports/event-log.port.js';
import { relayTrace } from '#core/kernel/relay-trace.js';
import type { AppLogger } from '../logging/logger.js';
import { type ConversationChannel, eventFrame } from '#contracts/events.js';
import { busFrames, fromFrame } from './event-frame.js';
import { RedisEventLog } from './redis-event-log.js';

/**
 * Events cross replicas through Redis pub/sub. A publisher does not deliver locally:
 * its own subscription hears the message back like every other replica, so each
 * socket receives each event exactly once and in publish order. One message may carry
 * several frames of one conversation (see `busFrames`); each handler gets them one by one.
 */
export class RedisEventBus extends EventBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channel: string;
  private readonly handlers = new Set<BusEventHandler>();
  private ready: Promise<unknown>;

  constructor(
    url: string,
    prefix: string,
    private readonly logger?: AppLogger,
  ) {
    super();
    this.channel = `${prefix}:events`;
    this.pub = new Redis(url, { maxRetriesPerRequest: 3 });
    this.sub = new Redis(url, { maxRetriesPerRequest: null });
    for (const client of [this.pub, this.sub]) {
      client.on('error', (err) => this.logger?.warn('event bus redis error', { error: err.message }));
    }
    this.sub.on('message', (_channel: string, message: string) => {
      for (const frame of busFrames(message)) this.deliver(frame);
    });
    this.ready = this.sub.subscribe(this.channel);
  }

  /** Resolves once this replica is listening, so nothing published after start is missed. */
  async whenReady(): Promise<void> {
    await this.ready;
  }

  async publish(channel: string, data: object): Promise<void> {
    await this.pub.publish(this.channel, eventFrame(channel, data));
  }

  /**
   * With the Redis log: seq, append and publish in one script. A conversation's events that
   * come while its previous call is in flight share the next call and one bus message, which
   * every replica's subscription splits back into frames, in seq order.
   */
  override publishLogged(
    log: EventLog,
    conversationId: string,
    channel: ConversationChannel,
    data: Record<string, unknown>,
  ): Promise<LoggedEvent> {
    if (!(log instanceof RedisEventLog)) return super.publishLogged(log, conversationId, channel, data);
    const logged = log.appendAndPublish(conversationId, channel, data, this.channel);
    if (!relayTrace.enabled) return logged;
    return logged.then((event) => {
      relayTrace.markLogged(conversationId, event.seq);
      return event;
    });
  }

  subscribe(handler: BusEventHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async ping(): Promise<void> {
    await this.pub.ping();
  }

  async close(): Promise<void> {
    await Promise.all([this.pub.quit().catch(() => undefined), this.sub.quit().catch(() => undefined)]);
  }

  private deliver(frame: string): void {
    const event = fromFrame(frame);
    if (!event) return;
    for (const handler of this.handlers) {
      try {
        handler(event, frame);
      } catch (err) {
        this.logger?.warn('event handler failed', { channel: event.channel, error: (err as Error).message });
      }
    }
  }
}
