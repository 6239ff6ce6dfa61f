import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { LockoutRule } from '#core/auth/lockout-policy.js';
import type { CountedKey, LockoutStore } from '#core/ports/lockout-store.port.js';
import { MemoryLockoutStore } from '#infra/auth/memory-lockout.store.js';
import { RedisLockoutStore } from '#infra/auth/redis-lockout.store.js';
import { testMode, testRedisUrl, uniqueSuffix } from '#testing/test-env.js';

/**
 * One contract, every LockoutStore. Times are real-clock based because the Redis store
 * sets key lifetimes from the wall clock.
 */
function lockoutStoreContract(getStore: () => LockoutStore): void {
  let n = 0;
  const rule = (failures: number, windowMs = 10_000, lockMs = 60_000): LockoutRule => ({ failures, windowMs, lockMs });
  /** A fresh key per test, so tests do not see each other's counters. */
  const key = (label: string, r: LockoutRule = rule(3)): CountedKey => ({
    key: `${label}:${++n}:${uniqueSuffix()}`,
    rule: r,
  });
  const fail = { succeeded: false, clearOnSuccess: '' };
  /** One whole attempt: admitted then settled; the lock end when refused. */
  async function attempt(store: LockoutStore, keys: CountedKey[], now: number, succeeded = false) {
    const id = randomUUID();
    const refused = await store.admit(keys, id, now);
    if (refused !== null) return refused.until;
    await store.settle(keys, id, now, { succeeded, clearOnSuccess: keys[0]!.key });
    return null;
  }

  it('the failure that reaches the threshold locks the key; later attempts are refused until the lock ends', async () => {
    const store = getStore();
    const k = key('ip');
    const now = Date.now();
    assert.equal(await attempt(store, [k], now), null);
    assert.equal(await attempt(store, [k], now + 1), null);
    assert.equal(await attempt(store, [k], now + 2), null, 'the third is still compared');
    assert.equal(await attempt(store, [k], now + 3), now + 2 + 60_000, 'locked from the third failure');
    assert.equal(await attempt(store, [k], now + 2 + 60_000), null, 'free at the lock end');
  });

  it('failures older than the window age out (exactly windowMs old counts as out)', async () => {
    const store = getStore();
    const k = key('ip', rule(2, 10_000));
    const base = Date.now();
    assert.equal(await attempt(store, [k], base), null);
    assert.equal(await attempt(store, [k], base + 10_000), null, 'the first one aged out, no lock');
    assert.equal(await attempt(store, [k], base + 10_001), null, 'two failures in the window: this one locks');
    assert.equal(await attempt(store, [k], base + 10_002), base + 10_001 + 60_000);
  });

  it('a success clears the failures of its key, counts nowhere and leaves others alone', async () => {
    const store = getStore();
    const ip = key('ip', rule(3));
    const everyone = key('global', rule(4));
    const now = Date.now();
    await attempt(store, [ip, everyone], now);
    await attempt(store, [ip, everyone], now);
    assert.equal(await attempt(store, [ip, everyone], now, true), null);
    assert.equal(await attempt(store, [ip, everyone], now), null, 'ip count restarted');
    assert.equal(
      await attempt(store, [ip, everyone], now),
      null,
      'global: the fourth failure, the success not counted',
    );
    assert.equal(await attempt(store, [ip, everyone], now), now + 60_000, 'global locked');
  });

  it('attempts in flight count: a concurrent burst admits at most the threshold', async () => {
    const store = getStore();
    const k = key('ip', rule(5));
    const now = Date.now();
    const ids = Array.from({ length: 30 }, () => randomUUID());
    const answers = await Promise.all(ids.map((id) => store.admit([k], id, now)));
    assert.equal(answers.filter((a) => a === null).length, 5, JSON.stringify(answers));
    for (const [i, id] of ids.entries()) if (answers[i] === null) await store.settle([k], id, now, fail);
    assert.equal((await store.admit([k], randomUUID(), now + 1))?.until, now + 60_000, 'locked by the fifth failure');
  });

  it('an admitted attempt that succeeds lets the next one in (one at a time stays exact)', async () => {
    const store = getStore();
    const k = key('ip', rule(3));
    const now = Date.now();
    await attempt(store, [k], now);
    await attempt(store, [k], now);
    const a = randomUUID();
    assert.equal(await store.admit([k], a, now), null);
    assert.notEqual(await store.admit([k], randomUUID(), now), null, 'refused while the third is in flight');
    await store.settle([k], a, now, { succeeded: true, clearOnSuccess: k.key });
    assert.equal(await attempt(store, [k], now), null, 'the success cleared the count');
  });

  it('refuses with the latest lock end over the keys and names its key; a lock is never shortened', async () => {
    const store = getStore();
    const short = key('a', rule(1, 10_000, 5_000));
    const long = key('b', rule(1, 10_000, 120_000));
    const now = Date.now();
    await attempt(store, [short, long], now);
    assert.deepEqual(await store.admit([short, long], randomUUID(), now + 1), { until: now + 120_000, key: long.key });
    assert.deepEqual(await store.admit([long, short], randomUUID(), now + 1), { until: now + 120_000, key: long.key });
    assert.deepEqual(await store.admit([short], randomUUID(), now + 1), { until: now + 5_000, key: short.key });
  });

  it('a lock ends by itself (real time)', async () => {
    const store = getStore();
    const k = key('short', rule(1, 10_000, 150));
    await attempt(store, [k], Date.now());
    assert.notEqual(await store.admit([k], randomUUID(), Date.now()), null);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await store.admit([k], randomUUID(), Date.now()), null);
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
      const k: CountedKey = { key: 'ip:prefixed', rule: { failures: 1, windowMs: 60_000, lockMs: 60_000 } };
      await store.admit([k], 'a1', now);
      await store.settle([k], 'a1', now, { succeeded: false, clearOnSuccess: '' });
      await store.admit([k], 'a2', now);
      const keys = (await redis.keys(`${prefix}:*`)).sort();
      assert.ok(keys.includes(`${prefix}:lockout:failures:ip:prefixed`), JSON.stringify(keys));
      assert.ok(keys.includes(`${prefix}:lockout:lock:ip:prefixed`), JSON.stringify(keys));
      for (const key of keys) assert.ok((await redis.pttl(key)) > 0, `${key} has no expiry`);
    });

    it('two stores on one Redis share counters and locks (replicas)', async () => {
      const other = new Redis(testRedisUrl(), { maxRetriesPerRequest: 3 });
      try {
        const peer = new RedisLockoutStore(other, prefix);
        const now = Date.now();
        const k: CountedKey = { key: 'ip:shared', rule: { failures: 2, windowMs: 60_000, lockMs: 30_000 } };
        await store.admit([k], 'b1', now);
        await store.settle([k], 'b1', now, { succeeded: false, clearOnSuccess: '' });
        await peer.admit([k], 'b2', now + 1);
        await peer.settle([k], 'b2', now + 1, { succeeded: false, clearOnSuccess: '' });
        assert.deepEqual(await store.admit([k], 'b3', now + 2), { until: now + 1 + 30_000, key: 'ip:shared' });
      } finally {
        await other.quit().catch(() => other.disconnect());
      }
    });
  },
);
