import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LockoutStore } from '#core/ports/lockout-store.port.js';

const EXTEND_LOCK = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`;

/** Lockout counters in Redis, shared by every replica. */
export class RedisLockoutStore extends LockoutStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    super();
  }

  async recordFailure(key: string, now: number, windowMs: number): Promise<number> {
    const k = `${this.prefix}:lockout:failures:${key}`;
    const result = await this.redis
      .multi()
      .zadd(k, now, `${now}:${randomUUID()}`)
      .zremrangebyscore(k, 0, now - windowMs)
      .zcard(k)
      .pexpire(k, windowMs)
      .exec();
    const card = result?.[2]?.[1];
    return typeof card === 'number' ? card : 0;
  }

  /** Never shortens a lock: the later end wins, atomically across replicas. */
  async lock(key: string, until: number): Promise<void> {
    const ttl = Math.max(1, until - Date.now());
    await this.redis.eval(EXTEND_LOCK, 1, `${this.prefix}:lockout:lock:${key}`, String(until), String(ttl));
  }

  async lockedUntil(keys: readonly string[], now: number): Promise<number | null> {
    if (keys.length === 0) return null;
    const values = await this.redis.mget(keys.map((k) => `${this.prefix}:lockout:lock:${k}`));
    let latest: number | null = null;
    for (const v of values) {
      const until = v === null ? NaN : Number(v);
      if (Number.isFinite(until) && until > now) latest = Math.max(latest ?? 0, until);
    }
    return latest;
  }

  async clearFailures(key: string): Promise<void> {
    await this.redis.del(`${this.prefix}:lockout:failures:${key}`);
  }
}
