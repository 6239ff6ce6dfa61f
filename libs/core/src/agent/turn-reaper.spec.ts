import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeEventLog, FakeTurnRepository, RecordingEventBus } from '#testing/fake-agent-ports.js';
import { RecordingJobQueue } from '#testing/fake-triggers.js';
import { FakeClock } from '#testing/fakes.js';
import { ConversationEvents } from './conversation-events.js';
import { STALE_TURN_MS, TurnReaper } from './turn-reaper.js';

function reaperAt(nowMs: number) {
  const turns = new FakeTurnRepository();
  const queue = new RecordingJobQueue();
  const clock = new FakeClock(nowMs);
  const events = new ConversationEvents(new RecordingEventBus(), new FakeEventLog());
  return { turns, queue, clock, reaper: new TurnReaper(turns, events, clock, undefined, undefined, queue) };
}

const turn = (id: string, conversationId: string) => ({
  id,
  kind: 'chat' as const,
  conversationId,
  spaceId: 's1',
  request: {},
});

describe('TurnReaper: a queued turn whose job was never added', () => {
  it('gets its job again once it has waited past STALE_TURN_MS, under the same job id', async () => {
    const { turns, queue, clock, reaper } = reaperAt(Date.now());
    await turns.createQueued(turn('t1', 'c1'));
    await reaper.reap();
    assert.equal(queue.named('agent.turn').length, 0, 'a fresh queued turn is left to its own job');

    clock.advance(STALE_TURN_MS + 1_000);
    await reaper.reap();
    assert.deepEqual(queue.named('agent.turn'), [
      { id: 'turn-t1', data: { turnId: 't1', kind: 'chat' }, options: { jobId: 'turn-t1' } },
    ]);
    await reaper.reap();
    assert.equal(queue.named('agent.turn').length, 1, 'adding again under the same id changes nothing');
  });

  it('leaves an ended turn alone', async () => {
    const { turns, queue, clock, reaper } = reaperAt(Date.now());
    await turns.createQueued(turn('t2', 'c2'));
    await turns.finish('t2', 'interrupted', 'Stopped by user.');
    clock.advance(STALE_TURN_MS + 1_000);
    await reaper.reap();
    assert.equal(queue.named('agent.turn').length, 0);
  });
});
