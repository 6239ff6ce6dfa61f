import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BusEvent } from '#contracts/events.js';
import type { EventBus } from '#core/ports/event-bus.port.js';
import { InProcessEventBus } from '#infra/events/in-process-event-bus.js';
import { Redis } from 'ioredis';
import { RedisEventBus } from '#infra/events/redis-event-bus.js';
import { RedisEventLog } from '#infra/events/redis-event-log.js';
import { MemoryEventLog } from '#infra/events/memory-event-log.js';
import { sleep, waitFor } from '#testing/fakes.js';
import { testMode, testRedisUrl, uniqueSuffix } from '#testing/test-env.js';

interface Received {
  event: BusEvent;
  frame: string;
}

function recorder(bus: EventBus): { got: Received[]; stop: () => void } {
  const got: Received[] = [];
  const stop = bus.subscribe((event, frame) => got.push({ event, frame }));
  return { got, stop };
}

const expectedFrame = (channel: string, data: object): string => JSON.stringify({ type: 'event', channel, data });

describe('InProcessEventBus', () => {
  it('delivers to every handler with one identical frame string', async () => {
    const bus = new InProcessEventBus();
    const frames: string[] = [];
    const events: BusEvent[] = [];
    for (let i = 0; i < 3; i++) {
      bus.subscribe((event, frame) => {
        events.push(event);
        frames.push(frame);
      });
    }
    const data = { id: 'c1', text: 'héllo "world"', nested: { n: 1 } };
    await bus.publish('chat:message', data);

    assert.equal(frames.length, 3);
    assert.equal(frames[0], expectedFrame('chat:message', data));
    assert.deepEqual(JSON.parse(frames[0]!), { type: 'event', channel: 'chat:message', data });
    for (const frame of frames) assert.equal(frame, frames[0]);
    for (const event of events) assert.deepEqual(event, { channel: 'chat:message', data });
  });

  it('a throwing handler neither stops the others nor fails the publisher', async () => {
    const bus = new InProcessEventBus();
    bus.subscribe(() => {
      throw new Error('boom');
    });
    const after = recorder(bus);
    await bus.publish('x', { n: 1 });
    assert.equal(after.got.length, 1);
  });

  it('delivers in publish order', async () => {
    const bus = new InProcessEventBus();
    const { got } = recorder(bus);
    for (let i = 0; i < 50; i++) await bus.publish('seq', { i });
    assert.deepEqual(
      got.map((r) => r.event.data.i),
      Array.from({ length: 50 }, (_, i) => i),
    );
  });

  it('unsubscribe stops delivery to that handler only', async () => {
    const bus = new InProcessEventBus();
    const a = recorder(bus);
    const b = recorder(bus);
    await bus.publish('x', { n: 1 });
    a.stop();
    await bus.publish('x', { n: 2 });
    a.stop(); // twice is harmless
    assert.deepEqual(
      a.got.map((r) => r.event.data.n),
      [1],
    );
    assert.deepEqual(
      b.got.map((r) => r.event.data.n),
      [1, 2],
    );
  });

  it('publishing with no subscribers is fine', async () => {
    await new InProcessEventBus().publish('nobody', {});
  });
});

describe('RedisEventBus', { skip: testMode() !== 'services' ? 'needs Redis (services mode)' : false }, () => {
  const prefix = `svc-test-${uniqueSuffix()}`;
  const buses: RedisEventBus[] = [];
  let a: RedisEventBus;
  let b: RedisEventBus;

  const open = async (p: string): Promise<RedisEventBus> => {
    const bus = new RedisEventBus(testRedisUrl(), p);
    buses.push(bus);
    await bus.whenReady();
    return bus;
  };

  before(async () => {
    a = await open(prefix);
    b = await open(prefix);
  });

  after(async () => {
    await Promise.all(buses.map((bus) => bus.close()));
  });

  it('an event published on one replica reaches the handlers on both, exactly once each, in order (100 events)', async () => {
    const onA1 = recorder(a);
    const onA2 = recorder(a);
    const onB = recorder(b);
    try {
      const count = 100;
      for (let i = 0; i < count; i++) await a.publish('seq', { i, from: 'a' });
      const all = [onA1, onA2, onB];
      await waitFor(() => all.every((r) => r.got.length >= count), {
        timeoutMs: 10_000,
        what: `${count} events on every handler (got ${all.map((r) => r.got.length).join('/')})`,
      });
      await sleep(300); // any duplicate would have arrived by now
      const expected = Array.from({ length: count }, (_, i) => i);
      for (const r of all) {
        assert.equal(r.got.length, count, 'each event exactly once');
        assert.deepEqual(
          r.got.map((x) => x.event.data.i),
          expected,
        );
        assert.equal(r.got[7]!.frame, expectedFrame('seq', { i: 7, from: 'a' }));
        assert.deepEqual(r.got[7]!.event, { channel: 'seq', data: { i: 7, from: 'a' } });
      }
      // Handlers of one replica share one frame string per event.
      for (let i = 0; i < count; i++) assert.equal(onA1.got[i]!.frame, onA2.got[i]!.frame);
    } finally {
      onA1.stop();
      onA2.stop();
      onB.stop();
    }
  });

  it('works the other way round, and the publisher hears its own events once', async () => {
    const onA = recorder(a);
    const onB = recorder(b);
    try {
      await b.publish('ping', { k: 1 });
      await b.publish('ping', { k: 2 });
      await waitFor(() => onA.got.length >= 2 && onB.got.length >= 2, { timeoutMs: 5000, what: 'two events on each' });
      await sleep(200);
      for (const r of [onA, onB]) {
        assert.deepEqual(
          r.got.map((x) => x.event.data.k),
          [1, 2],
        );
      }
    } finally {
      onA.stop();
      onB.stop();
    }
  });

  it('unsubscribe stops delivery', async () => {
    const onA = recorder(a);
    const onB = recorder(b);
    try {
      await a.publish('u', { n: 1 });
      await waitFor(() => onA.got.length === 1 && onB.got.length === 1, { timeoutMs: 5000, what: 'first event' });
      onA.stop();
      await a.publish('u', { n: 2 });
      await waitFor(() => onB.got.length === 2, { timeoutMs: 5000, what: 'second event on b' });
      await sleep(100);
      assert.equal(onA.got.length, 1);
    } finally {
      onB.stop();
    }
  });

  it('buses with different prefixes are isolated', async () => {
    const c = await open(`svc-test-${uniqueSuffix()}`);
    const onA = recorder(a);
    const onC = recorder(c);
    try {
      await a.publish('iso', { from: 'a' });
      await c.publish('iso', { from: 'c' });
      await waitFor(() => onA.got.length >= 1 && onC.got.length >= 1, { timeoutMs: 5000, what: 'own events' });
      await sleep(300);
      assert.deepEqual(
        onA.got.map((r) => r.event.data.from),
        ['a'],
      );
      assert.deepEqual(
        onC.got.map((r) => r.event.data.from),
        ['c'],
      );
    } finally {
      onA.stop();
      onC.stop();
    }
  });

  it('publishLogged with the Redis log: one step assigns the seq, keeps the event and publishes the same frame', async () => {
    const redis = new Redis(testRedisUrl());
    const log = new RedisEventLog(redis, prefix);
    const onB = recorder(b);
    try {
      const conversation = `c-${uniqueSuffix()}`;
      // Fired without waiting, as stream deltas are: seqs and delivery keep the call order.
      const calls = Array.from({ length: 200 }, (_, i) =>
        a.publishLogged(log, conversation, i % 50 === 0 ? 'agent:thought' : 'agent:message', {
          delta: `d${i} "quoted" ü`,
          list: [],
          conversationId: conversation,
        }),
      );
      const logged = await Promise.all(calls);
      const empty = await a.publishLogged(log, conversation, 'agent:complete', {});
      await waitFor(() => onB.got.length >= 201, { timeoutMs: 10_000, what: '201 events on the other replica' });
      const seqs = logged.map((e) => e.seq);
      assert.deepEqual(
        seqs,
        Array.from({ length: 200 }, (_, i) => seqs[0]! + i),
        'consecutive seqs in call order',
      );
      assert.equal(empty.seq, seqs[199]! + 1);
      onB.got.forEach((r, i) => {
        const expected = i < 200 ? logged[i]! : empty;
        // Byte for byte what every other adapter publishes: eventFrame(channel, data with seq last).
        assert.equal(r.frame, expectedFrame(expected.channel, expected.data));
        assert.deepEqual(
          { channel: r.event.channel, data: r.event.data },
          { channel: expected.channel, data: expected.data },
        );
        // Read from the frame without decoding it (the gateway's way for a delta): the data's own.
        if (i < 200) {
          assert.equal(r.event.conversationId, conversation);
          assert.equal(r.event.seq, expected.seq);
        }
      });
      assert.deepEqual(onB.got[200]!.event.data, { seq: empty.seq });
      assert.equal(onB.got[200]!.event.conversationId, undefined, 'no conversationId member: decoded whole');
      const replay = await log.since(conversation, seqs[9]!);
      assert.equal(replay.complete, true);
      assert.deepEqual(replay.events, [...logged.slice(10), empty]);
    } finally {
      onB.stop();
      redis.disconnect();
    }
  });

  it('publishLogged batches a burst: two replicas firing into one conversation (and one each of their own) get gap-free seqs in call order, delivered once in seq order everywhere', async () => {
    const redisA = new Redis(testRedisUrl());
    const redisB = new Redis(testRedisUrl());
    const raw = new Redis(testRedisUrl());
    // Capacity below the burst: trimming cuts through batches and the log still replays from its oldest.
    const logA = new RedisEventLog(redisA, prefix, 500);
    const logB = new RedisEventLog(redisB, prefix, 500);
    const onA = recorder(a);
    const onB = recorder(b);
    let messages = 0;
    let batched = 0;
    raw.on('message', (_channel: string, message: string) => {
      messages++;
      if (message.includes('\n')) batched++;
    });
    await raw.subscribe(`${prefix}:events`);
    try {
      const shared = `s-${uniqueSuffix()}`;
      const own = { a: `oa-${uniqueSuffix()}`, b: `ob-${uniqueSuffix()}` };
      const count = 400;
      const fire = (bus: RedisEventBus, log: RedisEventLog, from: 'a' | 'b') =>
        Array.from({ length: count }, (_, i) => [
          bus.publishLogged(log, shared, 'agent:message', { conversationId: shared, from, i }),
          bus.publishLogged(log, own[from], 'agent:message', { conversationId: own[from], from, i }),
        ]).flat();
      const results = await Promise.all([...fire(a, logA, 'a'), ...fire(b, logB, 'b')]);
      const total = 4 * count;
      for (const r of [onA, onB]) {
        await waitFor(() => r.got.length >= total, {
          timeoutMs: 20_000,
          what: `${total} events (got ${r.got.length})`,
        });
      }
      await sleep(300);
      assert.ok(batched > 0 && messages < total, `bursts shared messages (${messages} messages, ${batched} batches)`);

      const sharedResults = results.filter((e) => e.data.conversationId === shared);
      const seqs = sharedResults.map((e) => e.seq).sort((x, y) => x - y);
      assert.deepEqual(
        seqs,
        Array.from({ length: 2 * count }, (_, i) => i + 1),
        'gap-free, no seq twice',
      );
      for (const from of ['a', 'b'] as const) {
        const mine = results.filter((e) => e.data.conversationId === shared && e.data.from === from);
        assert.deepEqual(
          mine.map((e) => e.data.i),
          Array.from({ length: count }, (_, i) => i),
        );
        for (let i = 1; i < mine.length; i++) assert.ok(mine[i]!.seq > mine[i - 1]!.seq, 'seqs follow call order');
        const ownSeqs = results.filter((e) => e.data.conversationId === own[from]).map((e) => e.seq);
        assert.deepEqual(
          ownSeqs,
          Array.from({ length: count }, (_, i) => i + 1),
        );
      }
      for (const r of [onA, onB]) {
        assert.equal(r.got.length, total, 'each event exactly once');
        for (const conversation of [shared, own.a, own.b]) {
          const got = r.got.filter((x) => x.event.data.conversationId === conversation);
          assert.deepEqual(
            got.map((x) => x.event.data.seq),
            Array.from({ length: got.length }, (_, i) => i + 1),
            'delivered in seq order',
          );
        }
        const bySeq = new Map(sharedResults.map((e) => [e.seq, e]));
        for (const x of r.got.filter((y) => y.event.data.conversationId === shared)) {
          const logged = bySeq.get(x.event.data.seq as number)!;
          assert.equal(x.frame, expectedFrame(logged.channel, logged.data));
        }
      }
      const replay = await logA.since(shared, 0);
      assert.equal(replay.complete, false);
      assert.equal(!replay.complete && replay.fromSeq, 2 * count - 499);
      assert.deepEqual(
        replay.events.map((e) => e.seq),
        Array.from({ length: 500 }, (_, i) => 2 * count - 499 + i),
      );
      const tail = await logB.since(shared, 2 * count - 10);
      assert.equal(tail.complete, true);
      assert.deepEqual(
        tail.events.map((e) => e.data),
        seqs.slice(-10).map((seq) => sharedResults.find((e) => e.seq === seq)!.data),
      );
    } finally {
      onA.stop();
      onB.stop();
      raw.disconnect();
      redisA.disconnect();
      redisB.disconnect();
    }
  });

  it('publishLogged: a batch that fails rejects each of its events, and the conversation goes on', async () => {
    const redis = new Redis(testRedisUrl());
    const log = new RedisEventLog(redis, prefix);
    const conversation = `f-${uniqueSuffix()}`;
    const onA = recorder(a);
    try {
      // The seq key holding a non-number makes the script's INCRBY fail for this conversation.
      await redis.set(`${prefix}:events:log:${conversation}:seq`, 'not-a-number');
      const outcomes = Array.from({ length: 20 }, (_, i) =>
        a.publishLogged(log, conversation, 'agent:message', { i }).then(
          (e) => e.seq,
          (err: Error) => err.message,
        ),
      );
      const settled = await Promise.all(outcomes);
      assert.ok(
        settled.every((x) => typeof x === 'string' && /not an integer/.test(x)),
        `every event reports the failure: ${settled.join(', ')}`,
      );
      await redis.del(`${prefix}:events:log:${conversation}:seq`);
      const next = await a.publishLogged(log, conversation, 'agent:message', { i: 20 });
      assert.equal(next.seq, 1);
      // Only that one went out (and it is heard here, not by the next test's recorder).
      await waitFor(() => onA.got.length >= 1, { timeoutMs: 5000, what: 'the event after the failure' });
      await sleep(100);
      assert.deepEqual(
        onA.got.map((r) => r.event.data),
        [{ i: 20, seq: 1 }],
      );
    } finally {
      onA.stop();
      redis.disconnect();
    }
  });

  it('publishLogged with another log appends, then publishes', async () => {
    const log = new MemoryEventLog();
    const onA = recorder(a);
    try {
      const logged = await a.publishLogged(log, 'm', 'agent:message', { delta: 'x' });
      await waitFor(() => onA.got.length === 1, { timeoutMs: 5000, what: 'the event' });
      assert.deepEqual(onA.got[0]!.event, { channel: 'agent:message', data: { delta: 'x', seq: logged.seq } });
      assert.deepEqual((await log.since('m', 0)).events, [logged]);
    } finally {
      onA.stop();
    }
  });

  it('a throwing handler does not stop the others', async () => {
    const stopBad = a.subscribe(() => {
      throw new Error('boom');
    });
    const onA = recorder(a);
    try {
      await a.publish('t', { ok: true });
      await waitFor(() => onA.got.length === 1, { timeoutMs: 5000, what: 'event after a throwing handler' });
    } finally {
      stopBad();
      onA.stop();
    }
  });
});
