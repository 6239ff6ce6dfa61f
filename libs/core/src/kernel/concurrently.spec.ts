import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eachConcurrently } from './concurrently.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('eachConcurrently', () => {
  it('does every item, never more than the limit at once', async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    await eachConcurrently([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await tick();
      done.push(n);
      inFlight--;
    });
    assert.deepEqual(
      [...done].sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.equal(most, 3);
  });

  it('does nothing for no items', async () => {
    await eachConcurrently([], 4, () => Promise.reject(new Error('not called')));
  });

  it('throws the first failure and starts no item after it', async () => {
    const started: number[] = [];
    await assert.rejects(
      eachConcurrently([1, 2, 3, 4, 5, 6], 2, async (n) => {
        started.push(n);
        await tick();
        if (n === 2) throw new Error('two failed');
      }),
      /two failed/,
    );
    assert.ok(!started.includes(5) && !started.includes(6), `started ${started.join(',')}`);
  });
});
