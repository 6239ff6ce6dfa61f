import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventBus } from '#core/ports/event-bus.port.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { RecordingMetrics } from '#testing/fakes.js';
import { MeteredEventBus } from './metered-event-bus.js';

/** These tests publish partial payloads: the bus passes on whatever it is given. */
const loose = (bus: EventBus) => bus as unknown as { publish(channel: string, data: object): Promise<void> };

describe('MeteredEventBus', () => {
  it('times every publish and passes it on', async () => {
    const inner = new RecordingEventBus();
    const metrics = new RecordingMetrics();
    const bus = new MeteredEventBus(inner, metrics);
    await loose(bus).publish('agent:message', { conversationId: 'c', delta: 'x' });
    await loose(bus).publish('artifact:changed-batch', { spaceId: 's' });
    assert.deepEqual(inner.channels(), ['agent:message', 'artifact:changed-batch']);
    assert.equal(metrics.of('eventPublished').length, 2);
    assert.deepEqual(metrics.of('turnEnded'), []);
  });

  it('reads each turn ending from agent:error and agent:complete of its conversation', async () => {
    const metrics = new RecordingMetrics();
    const bus = new MeteredEventBus(new RecordingEventBus(), metrics);
    await loose(bus).publish('agent:complete', {
      conversationId: 'a',
      duration: 1500,
      tokenUsage: { totalCostUsd: 0.25 },
    });
    await loose(bus).publish('agent:error', { conversationId: 'b', error: 'boom' });
    await loose(bus).publish('agent:error', { conversationId: 'c', error: 'stopped', errorType: 'interrupted' });
    await loose(bus).publish('agent:complete', { conversationId: 'c', duration: 10 });
    await loose(bus).publish('agent:complete', { conversationId: 'b', duration: 20 });
    await loose(bus).publish('agent:complete', { conversationId: 'b', duration: 30 });
    assert.deepEqual(metrics.of('turnEnded'), [
      ['completed', 1.5, 0.25],
      ['interrupted', 0.01, 0],
      ['failed', 0.02, 0],
      ['completed', 0.03, 0],
    ]);
  });
});
