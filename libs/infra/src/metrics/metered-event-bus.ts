import { AgentChannels } from '#contracts/agent.js';
import type { BusEventHandler } from '#core/ports/event-bus.port.js';
import { EventBus } from '#core/ports/event-bus.port.js';
import type { EventLog, LoggedEvent } from '#core/ports/event-log.port.js';
import type { Metrics, TurnOutcome } from '#core/ports/metrics.port.js';
import { traceEventPublished } from '../tracing/tracing.js';

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

  async publish(channel: string, data: object): Promise<void> {
    const started = performance.now();
    try {
      await this.inner.publish(channel, data);
    } finally {
      this.metrics.eventPublished((performance.now() - started) / 1000);
    }
    traceEventPublished(channel);
    // Deltas are the bulk of the traffic: one string comparison each, then out.
    if (channel.charCodeAt(0) === 97 /* a */ && channel.startsWith('agent:')) this.observeAgent(channel, data);
  }

  /** The inner bus's way (one round trip over Redis), timed and read like `publish`. */
  override async publishLogged(
    log: EventLog,
    conversationId: string,
    channel: string,
    data: Record<string, unknown>,
  ): Promise<LoggedEvent> {
    const started = performance.now();
    let logged: LoggedEvent;
    try {
      logged = await this.inner.publishLogged(log, conversationId, channel, data);
    } finally {
      this.metrics.eventPublished((performance.now() - started) / 1000);
    }
    traceEventPublished(channel);
    if (channel.charCodeAt(0) === 97 /* a */ && channel.startsWith('agent:')) this.observeAgent(channel, logged.data);
    return logged;
  }

  subscribe(handler: BusEventHandler): () => void {
    return this.inner.subscribe(handler);
  }

  private observeAgent(channel: string, data: object): void {
    const d = data as Record<string, unknown>;
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
