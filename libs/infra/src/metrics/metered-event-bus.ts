import { AgentChannels } from '#contracts/agent.js';
import { MCP_STATUS_CHANNEL } from '#contracts/mcp.js';
import type { ConversationChannel, EventChannel, EventMap } from '#contracts/events.js';
import type { BusEventHandler } from '#core/ports/event-bus.port.js';
import { EventBus } from '#core/ports/event-bus.port.js';
import type { EventLog, LoggedEvent } from '#core/ports/event-log.port.js';
import type { Metrics, TurnOutcome } from '#core/ports/metrics.port.js';
import { traceEventPublished } from '../tracing/tracing.js';

const loggedData = (logged: LoggedEvent): object => logged.data;

/**
 * Times every publish and reads the turn's ending events on their way out. Only the
 * replica that publishes an event sees it here, so a turn is counted once however many
 * replicas deliver it.
 */
export class MeteredEventBus extends EventBus {
  /** conversationId → outcome announced by agent:error, until its agent:complete. */
  private readonly endings = new Map<string, TurnOutcome>();

  constructor(
    private readonly inner: EventBus,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  publish<C extends EventChannel>(channel: C, data: EventMap[C]): Promise<void> {
    const started = performance.now();
    let pending: Promise<void>;
    try {
      pending = this.inner.publish(channel, data);
    } catch (err) {
      this.timed(started);
      return Promise.reject(err as Error);
    }
    return this.observed(channel, started, pending, () => data);
  }

  /** The inner bus's way (one round trip over Redis), timed and read like `publish`. */
  override publishLogged(
    log: EventLog,
    conversationId: string,
    channel: ConversationChannel,
    data: Record<string, unknown>,
  ): Promise<LoggedEvent> {
    const started = performance.now();
    let pending: Promise<LoggedEvent>;
    try {
      pending = this.inner.publishLogged(log, conversationId, channel, data);
    } catch (err) {
      this.timed(started);
      return Promise.reject(err as Error);
    }
    return this.observed(channel, started, pending, loggedData);
  }

  /**
   * What every way of publishing goes through, so that none of them misses a step: the time
   * it took (metric, even when it failed), then the trace event and the turn-ending readout.
   * Chained on the publish's own promise, not awaited in an async function: stream deltas come
   * through here by the thousand per second (so no closure more than the two callbacks).
   */
  private observed<T>(
    channel: string,
    started: number,
    pending: Promise<T>,
    published: (result: T) => object,
  ): Promise<T> {
    return pending.then(
      (result) => {
        this.timed(started);
        traceEventPublished(channel);
        // Deltas are the bulk of the traffic: one string comparison each, then out.
        if (channel.charCodeAt(0) === 97 /* a */ && channel.startsWith('agent:'))
          this.observeAgent(channel, published(result));
        return result;
      },
      (err: unknown) => {
        this.timed(started);
        throw err;
      },
    );
  }

  private timed(started: number): void {
    this.metrics.eventPublished((performance.now() - started) / 1000);
  }

  subscribe(handler: BusEventHandler): () => void {
    return this.inner.subscribe(handler);
  }

  private observeAgent(channel: string, data: object): void {
    const d = data as Record<string, unknown>;
    if (channel === MCP_STATUS_CHANNEL) {
      // Each process announces all of its own connections at every change: the gauge is that list.
      const counts: Record<string, number> = {};
      for (const server of (d.servers as Array<{ status?: unknown }> | undefined) ?? []) {
        if (typeof server?.status === 'string') counts[server.status] = (counts[server.status] ?? 0) + 1;
      }
      this.metrics.mcpServers(counts);
      return;
    }
    const conversationId = typeof d.conversationId === 'string' ? d.conversationId : '';
    if (channel === AgentChannels.error) {
      this.endings.set(conversationId, d.errorType === 'interrupted' ? 'interrupted' : 'failed');
    } else if (channel === AgentChannels.complete) {
      const outcome = this.endings.get(conversationId) ?? 'completed';
      this.endings.delete(conversationId);
      const usage = d.tokenUsage as { totalCostUsd?: unknown } | undefined;
      const cost = typeof usage?.totalCostUsd === 'number' ? usage.totalCostUsd : 0;
      const duration = typeof d.duration === 'number' ? d.duration / 1000 : 0;
      this.metrics.turnEnded(outcome, duration, cost);
    }
  }
}
