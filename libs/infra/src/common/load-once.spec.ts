import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadOnce } from './load-once.js';

describe('loadOnce', () => {
  it('loads at the first call and shares the result', async () => {
    let calls = 0;
    const load = loadOnce(async () => ++calls);
    assert.equal(calls, 0);
    assert.deepEqual(await Promise.all([load(), load()]), [1, 1]);
    assert.equal(await load(), 1);
    assert.equal(calls, 1);
  });

  it('tries again after a failed load', async () => {
    let calls = 0;
    const load = loadOnce(async () => {
      if (++calls === 1) throw new Error('not yet');
      return 'loaded';
    });
    await assert.rejects(load(), /not yet/);
    assert.equal(await load(), 'loaded');
    assert.equal(calls, 2);
  });
});
