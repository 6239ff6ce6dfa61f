import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocalConsolidationLock } from './consolidation-locks.js';

describe('LocalConsolidationLock', () => {
  it('lets one holder per space acquire, renew, release; claim also takes over its own lease', async () => {
    let now = 1_000;
    const lock = new LocalConsolidationLock(() => now);
    assert.equal(await lock.isConsolidating('s1'), false);
    assert.equal(await lock.acquire('s1', 'a', 100), true);
    assert.equal(await lock.isConsolidating('s1'), true);
    assert.equal(await lock.isConsolidating('s2'), false);
    assert.equal(await lock.acquire('s1', 'b', 100), false);
    assert.equal(await lock.acquire('s1', 'a', 100), false);
    assert.equal(await lock.claim('s1', 'b', 100), false);
    assert.equal(await lock.claim('s1', 'a', 100), true);
    assert.equal(await lock.renew('s1', 'b', 100), false);
    now += 90;
    assert.equal(await lock.renew('s1', 'a', 100), true);
    now += 90;
    assert.equal(await lock.isConsolidating('s1'), true);
    await lock.release('s1', 'b');
    assert.equal(await lock.isConsolidating('s1'), true);
    await lock.release('s1', 'a');
    assert.equal(await lock.isConsolidating('s1'), false);
  });

  it('lets a lease nobody renews expire', async () => {
    let now = 0;
    const lock = new LocalConsolidationLock(() => now);
    assert.equal(await lock.acquire('s', 'a', 100), true);
    now = 100;
    assert.equal(await lock.isConsolidating('s'), false);
    assert.equal(await lock.renew('s', 'a', 100), false);
    assert.equal(await lock.claim('s', 'b', 100), true);
    assert.equal(await lock.acquire('s', 'a', 100), false);
  });
});
