import { Clock } from '#core/ports/clock.port.js';
import { LockoutStore } from '#core/ports/lockout-store.port.js';

/** A clock the test moves by hand. */
export class FakeClock extends Clock {
  constructor(private current: number = Date.UTC(2025, 0, 1, 12, 0, 0)) {
    super();
  }

  now(): number {
    return this.current;
  }

  /** Sets the current time (ms since the epoch). */
  set(ms: number): void {
    this.current = ms;
  }

  advance(ms: number): number {
    this.current += ms;
    return this.current;
  }
}

/**
 * The simplest LockoutStore that honours the port's contract, for core tests that must
 * not depend on infra adapters (the real stores are checked by the store contract tests).
 */
export class FakeLockoutStore extends LockoutStore {
  readonly failures = new Map<string, number[]>();
  readonly locks = new Map<string, number>();

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
      if (until !== undefined && until > now) latest = Math.max(latest ?? 0, until);
    }
    return latest;
  }

  async clearFailures(key: string): Promise<void> {
    this.failures.delete(key);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` until it returns a truthy value (returned) or `timeoutMs` passes (throws
 * with `what` in the message).
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  {
    timeoutMs = 10_000,
    intervalMs = 25,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Rejects when `promise` does not settle within `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
