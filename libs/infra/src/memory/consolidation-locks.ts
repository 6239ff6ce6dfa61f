import type { Redis } from 'ioredis';
import { ConsolidationLock } from '#core/ports/memory-files.port.js';

/** Takes the lease when free, extends it when already ours. */
const CLAIM = `
local current = redis.call('GET', KEYS[1])
if current == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;
/** Extends the lease only while it is still ours (compare-and-set). */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
/** Deletes the lease only while it is still ours. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** Consolidation leases in Redis (`<prefix>:memory:consolidating:<spaceId>`), shared by every replica. */
export class RedisConsolidationLock extends ConsolidationLock {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    super();
  }

  private key(spaceId: string): string {
    return `${this.prefix}:memory:consolidating:${spaceId}`;
  }

  async acquire(spaceId: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.key(spaceId), token, 'PX', ttl(ttlMs), 'NX')) === 'OK';
  }

  async claim(spaceId: string, token: string, ttlMs: number): Promise<boolean> {
    return Number(await this.redis.eval(CLAIM, 1, this.key(spaceId), token, String(ttl(ttlMs)))) === 1;
  }

  async renew(spaceId: string, token: string, ttlMs: number): Promise<boolean> {
    return Number(await this.redis.eval(RENEW, 1, this.key(spaceId), token, String(ttl(ttlMs)))) === 1;
  }

  async release(spaceId: string, token: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.key(spaceId), token).catch(() => undefined);
  }

  async isConsolidating(spaceId: string): Promise<boolean> {
    return (await this.redis.exists(this.key(spaceId))) === 1;
  }
}

/** Consolidation leases in this process: the only one on its data folder when there is no Redis. */
export class LocalConsolidationLock extends ConsolidationLock {
  private readonly leases = new Map<string, { token: string; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  private holder(spaceId: string): string | null {
    const lease = this.leases.get(spaceId);
    if (!lease) return null;
    if (lease.expiresAt <= this.now()) {
      this.leases.delete(spaceId);
      return null;
    }
    return lease.token;
  }

  async acquire(spaceId: string, token: string, ttlMs: number): Promise<boolean> {
    if (this.holder(spaceId) !== null) return false;
    this.leases.set(spaceId, { token, expiresAt: this.now() + ttl(ttlMs) });
    return true;
  }

  async claim(spaceId: string, token: string, ttlMs: number): Promise<boolean> {
    const holder = this.holder(spaceId);
    if (holder !== null && holder !== token) return false;
    this.leases.set(spaceId, { token, expiresAt: this.now() + ttl(ttlMs) });
    return true;
  }

  async renew(spaceId: string, token: string, ttlMs: number): Promise<boolean> {
    if (this.holder(spaceId) !== token) return false;
    this.leases.set(spaceId, { token, expiresAt: this.now() + ttl(ttlMs) });
    return true;
  }

  async release(spaceId: string, token: string): Promise<void> {
    if (this.holder(spaceId) === token) this.leases.delete(spaceId);
  }

  async isConsolidating(spaceId: string): Promise<boolean> {
    return this.holder(spaceId) !== null;
  }
}

function ttl(ms: number): number {
  return Math.max(1, Math.floor(ms));
}
