import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeEventLog, FakeTurnRepository, RecordingEventBus } from '#testing/fake-agent-ports.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';
import type { UnplannedEnding } from './turn-plan-builder.js';
import type { TurnPlanBuilders } from './turn-plan-builders.js';
import { RecordingJobQueue } from '#testing/fake-triggers.js';
import { FakeClock } from '#testing/fakes.js';
import { ConversationEvents } from './conversation-events.js';
import { STALE_TURN_MS, TurnReaper } from './turn-reaper.js';

function reaperAt(nowMs: number) {
  const turns = new FakeTurnRepository();
  const queue = new RecordingJobQueue();
  const clock = new FakeClock(nowMs);
  const events = new ConversationEvents(new RecordingEventBus(), new FakeEventLog());
  return { turns, queue, clock, events, reaper: new TurnReaper(turns, events, clock, undefined, undefined, queue) };
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

describe('TurnReaper: a lost turn whose kind asks to run it again', () => {
  /** Plan builders where turns with `request.channel` are run again, recording what they were told. */
  function rerunningReaper(nowMs: number) {
    const world = reaperAt(nowMs);
    const endings: Array<{ turnId: string; rerun: boolean | undefined }> = [];
    const builders = {
      rerunWhenLost: async (t: TurnRecord) => t.request.channel !== undefined,
      endedWithoutPlan: async (t: TurnRecord, ending: UnplannedEnding) => {
        endings.push({ turnId: t.id, rerun: ending.rerun });
      },
    } as unknown as TurnPlanBuilders;
    const reaper = new TurnReaper(world.turns, world.events, world.clock, undefined, builders, world.queue);
    return { ...world, reaper, endings };
  }
  const lose = async (turns: FakeTurnRepository, id: string, request: Record<string, unknown>) => {
    await turns.createQueued({ ...turn(id, `c-${id}`), kind: 'app-chat', request });
    await turns.claim(id, 'dead-replica');
  };

  it('queues one new turn with the same request and rerunOf, announces it, and says so to the plan builder', async () => {
    const { turns, queue, clock, reaper, endings } = rerunningReaper(Date.now());
    await lose(turns, 'lost', { appId: 'a1', channel: { provider: 'telegram' } });
    clock.advance(STALE_TURN_MS + 1_000);
    assert.equal(await reaper.reap(), 1);

    assert.equal((await turns.findById('lost'))?.status, 'interrupted');
    const again = await turns.findActive('c-lost');
    assert.ok(again && again.id !== 'lost', 'a new turn waits in the same conversation');
    assert.equal(again.status, 'queued');
    assert.equal(again.kind, 'app-chat');
    assert.deepEqual(again.request, { appId: 'a1', channel: { provider: 'telegram' }, rerunOf: 'lost' });
    assert.deepEqual(queue.named('agent.turn'), [
      { id: `turn-${again.id}`, data: { turnId: again.id, kind: 'app-chat' }, options: { jobId: `turn-${again.id}` } },
    ]);
    assert.deepEqual(endings, [{ turnId: 'lost', rerun: true }]);
  });

  it('runs a turn again only once, and never a kind that does not ask', async () => {
    const { turns, queue, clock, reaper, endings } = rerunningReaper(Date.now());
    await lose(turns, 'second', { appId: 'a1', channel: { provider: 'telegram' }, rerunOf: 'first' });
    await lose(turns, 'web', { appId: 'a1' });
    clock.advance(STALE_TURN_MS + 1_000);
    assert.equal(await reaper.reap(), 2);

    assert.equal(await turns.findActive('c-second'), null);
    assert.equal(await turns.findActive('c-web'), null);
    assert.equal(queue.named('agent.turn').length, 0);
    assert.deepEqual(
      endings.sort((x, y) => x.turnId.localeCompare(y.turnId)),
      [
        { turnId: 'second', rerun: false },
        { turnId: 'web', rerun: false },
      ],
    );
  });
});
