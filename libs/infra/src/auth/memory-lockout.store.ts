import { LockoutStore } from '#core/ports/lockout-store.port.js';

/** Lockout counters for a single process (no REDIS_URL). */
export class MemoryLockoutStore extends LockoutStore {
  private readonly failures = new Map<string, number[]>();
  private readonly locks = new Map<string, number>();

  async recordFailure(key: string, now: number, windowMs: number): Promise<number> {
    const recent = (this.failures.get(key) ?? []).filter((t) => t > now - windowMs);
    recent.push(now);
    this.failures.set(key, recent);
    return recent.length;
  }

  async lock(key: string, until: number): Promise<void> {
    this.locks.set(key, Math.max(until, this.locks.get(key) ?? 0));
  }

  async lockedUntil(keys: readonly string[], now: number): Promise<number | null> {
    let latest: number | null = null;
    for (const key of keys) {
      const until = this.locks.get(key);
      if (until === undefined) continue;
      if (until <= now) this.locks.delete(key);
      else latest = Math.max(latest ?? 0, until);
    }
    return latest;
  }

  async clearFailures(key: string): Promise<void> {
    this.failures.delete(key);
  }
}
