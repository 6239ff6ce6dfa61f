import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeEventLog, FakeTurnRepository, RecordingEventBus } from '#testing/fake-agent-ports.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';
import type { LostTurnOutcome, UnplannedEnding } from './turn-plan-builder.js';
import type { TurnPlanBuilders } from './turn-plan-builders.js';
import { RecordingJobQueue } from '#testing/fake-triggers.js';
import { FakeClock } from '#testing/fakes.js';
import { ConversationEvents } from './conversation-events.js';
import { STALE_TURN_MS, TurnReaper } from './turn-reaper.js';
import type { TurnRunner } from './turn-runner.js';

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
  /**
   * Plan builders where turns with `request.channel` are run again, or completed when
   * `request.replyRecorded`, recording what they were told.
   */
  function rerunningReaper(nowMs: number) {
    const world = reaperAt(nowMs);
    const endings: Array<{ turnId: string; rerun: boolean | undefined }> = [];
    const delivered: string[] = [];
    const builders = {
      whenLost: async (t: TurnRecord): Promise<LostTurnOutcome> =>
        t.request.channel === undefined ? 'interrupt' : t.request.replyRecorded ? 'completed' : 'rerun',
      endedWithoutPlan: async (t: TurnRecord, ending: UnplannedEnding) => {
        endings.push({ turnId: t.id, rerun: ending.rerun });
      },
      completedWhenLost: async (t: TurnRecord) => {
        delivered.push(t.id);
      },
    } as unknown as TurnPlanBuilders;
    const reaper = new TurnReaper(world.turns, world.events, world.clock, undefined, builders, world.queue);
    return { ...world, reaper, endings, delivered };
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

  it('completes a turn whose whole reply was recorded: agent:complete, its reply delivered, no rerun, no error', async () => {
    const { turns, queue, clock, reaper, endings, delivered, events } = rerunningReaper(Date.now());
    const published: string[] = [];
    const emitterFor = events.emitterFor.bind(events);
    events.emitterFor = (spaceId, conversationId) => {
      const emit = emitterFor(spaceId, conversationId);
      return async (channel, payload) => {
        published.push(channel);
        await emit(channel, payload);
      };
    };
    await lose(turns, 'replied', { appId: 'a1', channel: { provider: 'telegram' }, replyRecorded: true });
    clock.advance(STALE_TURN_MS + 1_000);
    assert.equal(await reaper.reap(), 1);

    assert.equal((await turns.findById('replied'))?.status, 'completed');
    assert.equal(await turns.findActive('c-replied'), null, 'nothing runs it again');
    assert.equal(queue.named('agent.turn').length, 0);
    assert.deepEqual(published, ['agent:complete']);
    assert.deepEqual(delivered, ['replied']);
    assert.deepEqual(endings, [], 'nobody is told of an interruption');
  });

  it('gives input that reached a completed lost turn after its last step a follow-up turn of its own', async () => {
    const { turns, queue, clock, reaper } = rerunningReaper(Date.now());
    const request = { appId: 'a1', channel: { provider: 'telegram' }, replyRecorded: true };
    await lose(turns, 'late', request);
    const later = { appId: 'a1', channel: { provider: 'telegram', replyTo: 'm-2' } };
    await turns.addPendingInput('c-late', {
      messageId: 'm-2',
      content: 'and another thing',
      createdAt: new Date().toISOString(),
      kind: 'app-chat',
      request: later,
    });
    clock.advance(STALE_TURN_MS + 1_000);
    assert.equal(await reaper.reap(), 1);

    const followUp = await turns.findActive('c-late');
    assert.ok(followUp, 'the later message gets a turn');
    assert.deepEqual([followUp.status, followUp.kind, followUp.request], ['queued', 'app-chat', later]);
    assert.deepEqual(queue.named('agent.turn'), [
      {
        id: `turn-${followUp.id}`,
        data: { turnId: followUp.id, kind: 'app-chat' },
        options: { jobId: `turn-${followUp.id}` },
      },
    ]);
  });
});

describe('TurnReaper: an end recorded but never announced', () => {
  function world(nowMs: number, runningHere: string[] = []) {
    const turns = new FakeTurnRepository();
    const bus = new RecordingEventBus();
    const clock = new FakeClock(nowMs);
    const events = new ConversationEvents(bus, new FakeEventLog());
    const runner = { isRunningHere: (id: string) => runningHere.includes(id) } as unknown as TurnRunner;
    return { turns, bus, clock, reaper: new TurnReaper(turns, events, clock, runner) };
  }
  // The replica recorded the end, then died before publishing it.
  const endedSilently = async (turns: FakeTurnRepository, id: string, end: () => Promise<unknown>) => {
    await turns.createQueued(turn(id, `c-${id}`));
    await turns.claim(id, 'dead-replica');
    await end();
  };

  it('announces a completed turn once with agent:complete and clears the mark', async () => {
    const { turns, bus, clock, reaper } = world(Date.now());
    await endedSilently(turns, 't1', () => turns.complete('t1', 'follow-up'));
    await reaper.reap();
    assert.deepEqual(bus.channels(), [], 'not before STALE_TURN_MS: its runner may still be publishing');

    clock.advance(STALE_TURN_MS + 1_000);
    await reaper.reap();
    await reaper.reap();
    assert.deepEqual(bus.channels(), ['agent:complete']);
    assert.equal(typeof bus.on('agent:complete')[0]?.duration, 'number');
    assert.deepEqual(await turns.findUnannounced(new Date(clock.now())), []);
  });

  it('announces a failed or interrupted turn with the agent:error its record tells, then agent:complete', async () => {
    const { turns, bus, clock, reaper } = world(Date.now());
    await endedSilently(turns, 'f', () => turns.finish('f', 'failed', 'The model said no.'));
    await endedSilently(turns, 'i', () => turns.finish('i', 'interrupted', 'Stopped by user.'));
    clock.advance(STALE_TURN_MS + 1_000);
    await reaper.reap();
    assert.deepEqual(bus.channels(), ['agent:error', 'agent:complete', 'agent:error', 'agent:complete']);
    assert.deepEqual(
      bus.on('agent:error').map(({ error, errorType }) => (errorType ? { error, errorType } : { error })),
      [{ error: 'The model said no.' }, { error: 'Stopped by user.', errorType: 'interrupted' }],
    );
    assert.deepEqual(await turns.findUnannounced(new Date(clock.now())), []);
  });

  it('leaves alone an end its runner, here, is still publishing', async () => {
    const { turns, bus, clock, reaper } = world(Date.now(), ['t2']);
    await endedSilently(turns, 't2', () => turns.complete('t2', 'follow-up'));
    clock.advance(STALE_TURN_MS + 1_000);
    await reaper.reap();
    assert.deepEqual(bus.channels(), []);
    assert.equal((await turns.findUnannounced(new Date(clock.now()))).length, 1);
  });

  it('announces the turns it reaps itself once (their mark is cleared as they are announced)', async () => {
    const { turns, bus, clock, reaper } = world(Date.now());
    await turns.createQueued(turn('lost', 'c-lost'));
    await turns.claim('lost', 'dead-replica');
    clock.advance(STALE_TURN_MS + 1_000);
    await reaper.reap();
    clock.advance(STALE_TURN_MS + 1_000);
    await reaper.reap();
    assert.deepEqual(bus.channels(), ['agent:error', 'agent:complete']);
    assert.deepEqual(await turns.findUnannounced(new Date(clock.now())), []);
  });
});
