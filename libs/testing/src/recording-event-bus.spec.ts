import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventChannel } from '#contracts/events.js';
import { RecordingEventBus } from './fake-agent-ports.js';

describe('RecordingEventBus', () => {
  it('records the channels of EventMap and refuses any other', async () => {
    const bus = new RecordingEventBus();
    await bus.publish('space:changed', { spaceId: 's1', change: 'updated' });
    assert.deepEqual(bus.channels(), ['space:changed']);
    await assert.rejects(
      bus.publish('space:renamed' as EventChannel, { spaceId: 's1', change: 'updated' }),
      /EventMap lacks/,
    );
    assert.deepEqual(bus.channels(), ['space:changed']);
  });
});
