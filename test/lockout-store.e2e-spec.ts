import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { LockoutStore } from '#core/ports/lockout-store.port.js';
import { MemoryLockoutStore } from '#infra/auth/memory-lockout.store.js';
import { RedisLockoutStore } from '#infra/auth/redis-lockout.store.js';
import { testMode, testRedisUrl, uniqueSuffix } from '#testing/test-env.js';

/**
 * One contract, every LockoutStore. Times are real-clock based because the Redis store
 * sets key lifetimes from the wall clock.
 */
function lockoutStoreContract(getStore: () => LockoutStore): void {
  const WINDOW = 10_000;
  let n = 0;
  /** A fresh key per test, so tests do not see each other's counters. */
  const key = (label: string): string => `${label}:${++n}:${uniqueSuffix()}`;

  it('recordFailure counts the failures within the window', async () => {
    const store = getStore();
    const k = key('ip');
    const base = Date.now();
    assert.equal(await store.recordFailure(k, base, WINDOW), 1);
    assert.equal(await store.recordFailure(k, base + 1000, WINDOW), 2);
    assert.equal(await store.recordFailure(k, base + 2000, WINDOW), 3);
    // Two failures in the same millisecond are two failures.
    assert.equal(await store.recordFailure(k, base + 2000, WINDOW), 4);
  });

  it('failures older than the window age out (exactly windowMs old counts as out)', async () => {
    const store = getStore();
    const k = key('ip');
    const base = Date.now();
    assert.equal(await store.recordFailure(k, base, WINDOW), 1);
    assert.equal(await store.recordFailure(k, base + 5000, WINDOW), 2);
    assert.equal(await store.recordFailure(k, base + WINDOW + 1, WINDOW), 2, 'the first one has aged out');
    assert.equal(
      await store.recordFailure(k, base + 5000 + WINDOW, WINDOW),
      2,
      'the second one is exactly windowMs old',
    );
    assert.equal(await store.recordFailure(k, base + 100 * WINDOW, WINDOW), 1, 'all earlier ones aged out');
  });

  it('keys count independently', async () => {
    const store = getStore();
    const a = key('a');
    const b = key('b');
    const now = Date.now();
    await store.recordFailure(a, now, WINDOW);
    await store.recordFailure(a, now, WINDOW);
    assert.equal(await store.recordFailure(b, now, WINDOW), 1);
    assert.equal(await store.recordFailure(a, now, WINDOW), 3);
  });

  it('a lock is never shortened by a later, earlier-ending lock', async () => {
    const store = getStore();
    const k = key('ip');
    const now = Date.now();
    await store.lock(k, now + 60_000);
    await store.lock(k, now + 5_000);
    assert.equal(await store.lockedUntil([k], now), now + 60_000);
    assert.equal(await store.lockedUntil([], now), null);
  });

  it('lockedUntil is null when nothing is locked', async () => {
    const store = getStore();
    assert.equal(await store.lockedUntil([key('a'), key('b')], Date.now()), null);
  });

  it('lockedUntil returns the latest lock end over the given keys while it is ahead of now', async () => {
    const store = getStore();
    const a = key('a');
    const b = key('b');
    const c = key('c');
    const now = Date.now();
    await store.lock(a, now + 60_000);
    await store.lock(b, now + 120_000);
    assert.equal(await store.lockedUntil([a], now), now + 60_000);
    assert.equal(await store.lockedUntil([a, b], now), now + 120_000);
    assert.equal(await store.lockedUntil([b, a], now), now + 120_000);
    assert.equal(await store.lockedUntil([a, c], now), now + 60_000);
    assert.equal(await store.lockedUntil([c], now), null);
    // At the lock end the key is free again; a later lock still counts.
    assert.equal(await store.lockedUntil([a], now + 60_000), null);
    assert.equal(await store.lockedUntil([a, b], now + 60_000), now + 120_000);
    assert.equal(await store.lockedUntil([a, b], now + 120_000), null);
  });

  it('a lock ends by itself (real time)', async () => {
    const store = getStore();
    const k = key('short');
    await store.lock(k, Date.now() + 150);
    assert.notEqual(await store.lockedUntil([k], Date.now()), null);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await store.lockedUntil([k], Date.now()), null);
  });

  it('clearFailures resets one key only and leaves locks alone', async () => {
    const store = getStore();
    const a = key('a');
    const b = key('b');
    const now = Date.now();
    for (let i = 0; i < 3; i++) await store.recordFailure(a, now + i, WINDOW);
    for (let i = 0; i < 2; i++) await store.recordFailure(b, now + i, WINDOW);
    await store.lock(a, now + 60_000);
    await store.clearFailures(a);
    assert.equal(await store.recordFailure(a, now + 10, WINDOW), 1);
    assert.equal(await store.recordFailure(b, now + 10, WINDOW), 3);
    assert.equal(await store.lockedUntil([a], now + 10), now + 60_000);
    await store.clearFailures(key('never-used')); // clearing an unknown key is fine
  });
}

describe('LockoutStore contract: MemoryLockoutStore', () => {
  const store = new MemoryLockoutStore();
  lockoutStoreContract(() => store);
});

describe(
  'LockoutStore contract: RedisLockoutStore',
  { skip: testMode() !== 'services' ? 'needs Redis (services mode)' : false },
  () => {
    let redis: Redis;
    let store: RedisLockoutStore;
    const prefix = `svc-test-${uniqueSuffix()}`;

    before(async () => {
      redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 3 });
      await redis.ping();
      store = new RedisLockoutStore(redis, prefix);
    });

    after(async () => {
      if (!redis) return;
      try {
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length > 0) await redis.del(...keys);
      } finally {
        await redis.quit().catch(() => redis.disconnect());
      }
    });

    lockoutStoreContract(() => store);

    it('keeps its keys under the prefix, with lifetimes', async () => {
      const now = Date.now();
      await store.recordFailure('ip:prefixed', now, 60_000);
      await store.lock('ip:prefixed', now + 60_000);
      const keys = (await redis.keys(`${prefix}:*`)).sort();
      assert.ok(keys.includes(`${prefix}:lockout:failures:ip:prefixed`), JSON.stringify(keys));
      assert.ok(keys.includes(`${prefix}:lockout:lock:ip:prefixed`), JSON.stringify(keys));
      for (const k of keys) assert.ok((await redis.pttl(k)) > 0, `${k} has no expiry`);
    });

    it('two stores on one Redis share counters and locks (replicas)', async () => {
      const other = new Redis(testRedisUrl(), { maxRetriesPerRequest: 3 });
      try {
        const peer = new RedisLockoutStore(other, prefix);
        const now = Date.now();
        await store.recordFailure('ip:shared', now, 60_000);
        assert.equal(await peer.recordFailure('ip:shared', now + 1, 60_000), 2);
        await peer.lock('global', now + 30_000);
        assert.equal(await store.lockedUntil(['ip:x', 'global'], now), now + 30_000);
      } finally {
        await other.quit().catch(() => other.disconnect());
      }
    });
  },
);
