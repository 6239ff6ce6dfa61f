import type { Redis } from 'ioredis';
import { PENDING_ATTEMPT_MS } from '#core/auth/lockout-ledger.js';
import { type CountedKey, LockoutStore, type Refusal } from '#core/ports/lockout-store.port.js';

/*
 * The algorithm of core's LockoutLedger, as two Lua scripts so each step is atomic across
 * replicas. KEYS come in triples per counted key: failures (sorted set of times), attempts
 * in flight (sorted set of admission times), lock (string: the lock end, ms). ARGV: now,
 * attempt id, then per key: window ms, threshold, lock ms. ADMIT answers nil (admitted) or
 * {lock end, 1-based index of the key whose lock it is}.
 */
const ADMIT = `
local now = tonumber(ARGV[1])
local n = #KEYS / 3
local refused, refusedBy = 0, 0
for i = 1, n do
  local failures, pending, lock = KEYS[3*i-2], KEYS[3*i-1], KEYS[3*i]
  local window, threshold, lockMs = tonumber(ARGV[3*i]), tonumber(ARGV[3*i+1]), tonumber(ARGV[3*i+2])
  local lockedUntil = tonumber(redis.call('GET', lock) or '0')
  if lockedUntil > now then
    if lockedUntil > refused then refused, refusedBy = lockedUntil, i end
  else
    redis.call('ZREMRANGEBYSCORE', failures, '-inf', now - window)
    redis.call('ZREMRANGEBYSCORE', pending, '-inf', now - ${PENDING_ATTEMPT_MS})
    local inFlight = redis.call('ZCARD', pending)
    if inFlight > 0 and redis.call('ZCARD', failures) + inFlight >= threshold then
      if now + lockMs > refused then refused, refusedBy = now + lockMs, i end
    end
  end
end
if refused > 0 then return {tostring(refused), refusedBy} end
for i = 1, n do
  redis.call('ZADD', KEYS[3*i-1], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[3*i-1], ${PENDING_ATTEMPT_MS})
end
return false`;

/* Extra ARGV after the triples: succeeded (1/0), then the index (1-based) of the key whose failures a success clears, 0 for none. */
const SETTLE = `
local now = tonumber(ARGV[1])
local n = #KEYS / 3
local succeeded = ARGV[3*n+3] == '1'
local clear = tonumber(ARGV[3*n+4])
for i = 1, n do
  local failures, pending, lock = KEYS[3*i-2], KEYS[3*i-1], KEYS[3*i]
  local window, threshold, lockMs = tonumber(ARGV[3*i]), tonumber(ARGV[3*i+1]), tonumber(ARGV[3*i+2])
  redis.call('ZREM', pending, ARGV[2])
  if not succeeded then
    redis.call('ZADD', failures, now, ARGV[2])
    redis.call('ZREMRANGEBYSCORE', failures, '-inf', now - window)
    redis.call('PEXPIRE', failures, window)
    if redis.call('ZCARD', failures) >= threshold then
      local current = tonumber(redis.call('GET', lock) or '0')
      if now + lockMs > current then redis.call('SET', lock, tostring(now + lockMs), 'PX', lockMs) end
    end
  end
end
if succeeded and clear > 0 then redis.call('DEL', KEYS[3*clear-2]) end
return 1`;

/** Lockout counters in Redis, shared by every replica; each step one Lua script. */
export class RedisLockoutStore extends LockoutStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    super();
  }

  async admit(keys: readonly CountedKey[], attempt: string, now: number): Promise<Refusal | null> {
    const result = (await this.redis.eval(
      ADMIT,
      keys.length * 3,
      ...this.redisKeys(keys),
      ...this.args(keys, attempt, now),
    )) as [string, number] | null;
    return result === null ? null : { until: Number(result[0]), key: keys[result[1] - 1]!.key };
  }

  async settle(
    keys: readonly CountedKey[],
    attempt: string,
    now: number,
    outcome: { succeeded: boolean; clearOnSuccess: string },
  ): Promise<void> {
    const clear = keys.findIndex((k) => k.key === outcome.clearOnSuccess) + 1;
    await this.redis.eval(
      SETTLE,
      keys.length * 3,
      ...this.redisKeys(keys),
      ...this.args(keys, attempt, now),
      outcome.succeeded ? '1' : '0',
      String(clear),
    );
  }

  private redisKeys(keys: readonly CountedKey[]): string[] {
    return keys.flatMap(({ key }) => [
      `${this.prefix}:lockout:failures:${key}`,
      `${this.prefix}:lockout:pending:${key}`,
      `${this.prefix}:lockout:lock:${key}`,
    ]);
  }

  private args(keys: readonly CountedKey[], attempt: string, now: number): string[] {
    return [
      String(now),
      attempt,
      ...keys.flatMap(({ rule }) => [String(rule.windowMs), String(rule.failures), String(rule.lockMs)]),
    ];
  }
}
