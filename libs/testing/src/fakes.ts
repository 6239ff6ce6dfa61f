import { Clock } from '#core/ports/clock.port.js';
import { InProcessLockoutStore } from '#core/auth/lockout-ledger.js';
import { type Metrics, NoopMetrics } from '#core/ports/metrics.port.js';

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

/** The in-process lockout store, for core tests that must not depend on infra adapters. */
export class FakeLockoutStore extends InProcessLockoutStore {
  get failures(): Map<string, number[]> {
    return this.ledger.failures;
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

/** Metrics that remember every call by method name, for assertions in unit tests. */
export class RecordingMetrics extends NoopMetrics {
  readonly calls: Array<{ method: string; args: unknown[] }> = [];

  constructor() {
    super();
    for (const method of Object.getOwnPropertyNames(NoopMetrics.prototype)) {
      if (method === 'constructor') continue;
      (this as unknown as Record<string, (...args: unknown[]) => void>)[method] = (...args: unknown[]) => {
        this.calls.push({ method, args });
      };
    }
  }

  /** Arguments of each call of `method`. */
  of(method: keyof Metrics): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }
}
