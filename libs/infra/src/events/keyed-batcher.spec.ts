import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { busFrames } from './event-frame.js';
import { KeyedBatcher } from './keyed-batcher.js';

/** A sender whose calls the test answers by hand, like a store assigning consecutive numbers per key. */
function manualSender(): {
  calls: Array<{ key: string; items: string[]; answer: () => void; fail: (err: Error) => void }>;
  send: (key: string, items: string[]) => Promise<number[]>;
} {
  const next = new Map<string, number>();
  const calls: Array<{ key: string; items: string[]; answer: () => void; fail: (err: Error) => void }> = [];
  const send = (key: string, items: string[]): Promise<number[]> =>
    new Promise((resolve, reject) => {
      calls.push({
        key,
        items,
        answer: () => {
          const first = next.get(key) ?? 1;
          next.set(key, first + items.length);
          resolve(items.map((_, i) => first + i));
        },
        fail: reject,
      });
    });
  return { calls, send };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('KeyedBatcher', () => {
  it('sends an idle key at once, then coalesces what comes while its call is in flight, in order', async () => {
    const { calls, send } = manualSender();
    const batcher = new KeyedBatcher(send, 100);
    const settled: number[] = [];
    const results = Array.from({ length: 5 }, (_, i) =>
      batcher.add('c', `e${i}`).then((seq) => {
        settled.push(seq);
        return seq;
      }),
    );
    assert.deepEqual(
      calls.map((c) => c.items),
      [['e0']],
      'the first item leaves alone, without waiting',
    );
    calls[0]!.answer();
    await tick();
    assert.deepEqual(
      calls.map((c) => c.items),
      [['e0'], ['e1', 'e2', 'e3', 'e4']],
    );
    calls[1]!.answer();
    assert.deepEqual(await Promise.all(results), [1, 2, 3, 4, 5], 'each item gets its own result');
    assert.deepEqual(settled, [1, 2, 3, 4, 5], 'and they settle in add order');
    await tick();
    assert.equal(batcher.activeKeys, 0, 'an idle key keeps nothing');
  });

  it('keys do not wait for each other', async () => {
    const { calls, send } = manualSender();
    const batcher = new KeyedBatcher(send, 100);
    const a = batcher.add('a', 'a0');
    const b = batcher.add('b', 'b0');
    const a1 = batcher.add('a', 'a1');
    assert.deepEqual(
      calls.map((c) => [c.key, c.items]),
      [
        ['a', ['a0']],
        ['b', ['b0']],
      ],
    );
    calls[1]!.answer();
    assert.equal(await b, 1);
    calls[0]!.answer();
    assert.equal(await a, 1);
    await tick();
    calls[2]!.answer();
    assert.equal(await a1, 2);
  });

  it('caps a batch by items and by weight (a heavy first item still goes)', async () => {
    const { calls, send } = manualSender();
    const batcher = new KeyedBatcher(send, 3, (item: string) => item.length, 10);
    const all = ['x', 'a', 'b', 'c', 'd', 'e', 'LLLLLLLLLLLLLLLL', 'f', 'gggggg', 'hhhhhh'].map((item) =>
      batcher.add('k', item),
    );
    for (let i = 0; i < 6; i++) {
      calls[i]?.answer();
      await tick();
    }
    assert.deepEqual(
      calls.map((c) => c.items),
      [['x'], ['a', 'b', 'c'], ['d', 'e'], ['LLLLLLLLLLLLLLLL'], ['f', 'gggggg'], ['hhhhhh']],
    );
    assert.deepEqual(await Promise.all(all), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('a failed call rejects its own items only; the key goes on with the next ones', async () => {
    const { calls, send } = manualSender();
    const batcher = new KeyedBatcher(send, 100);
    const outcomes = Array.from({ length: 4 }, (_, i) =>
      batcher.add('c', `e${i}`).then(
        (seq) => `seq ${seq}`,
        (err: Error) => `failed: ${err.message}`,
      ),
    );
    calls[0]!.answer();
    await tick();
    const late = batcher.add('c', 'late').then((seq) => `seq ${seq}`);
    calls[1]!.fail(new Error('connection lost'));
    await tick();
    assert.deepEqual(
      calls.map((c) => c.items),
      [['e0'], ['e1', 'e2', 'e3'], ['late']],
    );
    calls[2]!.answer();
    assert.deepEqual(await Promise.all(outcomes), [
      'seq 1',
      'failed: connection lost',
      'failed: connection lost',
      'failed: connection lost',
    ]);
    assert.equal(await late, 'seq 2');
  });

  it('a sender that throws, or answers the wrong count, fails that batch', async () => {
    const thrower = new KeyedBatcher<string, number>(() => {
      throw new Error('sync');
    }, 10);
    await assert.rejects(thrower.add('k', 'x'), /sync/);
    const short = new KeyedBatcher<string, number>(async () => [1], 10);
    assert.equal(await short.add('k', 'only'), 1);
    const two = [short.add('j', 'a'), short.add('j', 'b'), short.add('j', 'c')];
    assert.equal(await two[0], 1);
    await assert.rejects(two[1]!, /batch of 2 answered 1/);
    await assert.rejects(two[2]!, /batch of 2 answered 1/);
  });
});

describe('busFrames', () => {
  it('splits a batch message into its frames; a lone frame is itself', () => {
    const frames = [
      JSON.stringify({ type: 'event', channel: 'agent:message', data: { delta: 'line\nbreak "q"', seq: 1 } }),
      JSON.stringify({ type: 'event', channel: 'agent:message', data: { delta: '\u2028', seq: 2 } }),
    ];
    assert.deepEqual(busFrames(frames[0]!), [frames[0]]);
    assert.deepEqual(busFrames(frames.join('\n')), frames);
  });
});
