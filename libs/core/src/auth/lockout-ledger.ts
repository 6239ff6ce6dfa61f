import { type CountedKey, LockoutStore, type Refusal } from '../ports/lockout-store.port.js';
import { reachesThreshold } from './lockout-policy.js';

/** How long an admitted attempt counts as in flight if it is never settled (a crash). */
export const PENDING_ATTEMPT_MS = 30_000;

/**
 * The lockout counters of one process, kept synchronously so each step is atomic: the
 * single-process LockoutStore and the test fake share it, and the Redis store runs the
 * same algorithm as Lua scripts.
 *
 * Admission assumes every attempt still in flight fails: an attempt is refused when a key is
 * locked, or when there are attempts in flight and failures plus attempts in flight reach
 * the threshold. Taken one at a time this is exactly "a lock is set by the failure that
 * reaches the threshold"; taken concurrently, at most `threshold` guesses are ever compared.
 */
export class LockoutLedger {
  /** Failure times per key (read by tests). */
  readonly failures = new Map<string, number[]>();
  private readonly pending = new Map<string, Map<string, number>>();
  private readonly locks = new Map<string, number>();

  admit(keys: readonly CountedKey[], attempt: string, now: number): Refusal | null {
    let refusal: Refusal | null = null;
    const refuse = (until: number, key: string) => {
      if (refusal === null || until > refusal.until) refusal = { until, key };
    };
    for (const { key, rule } of keys) {
      const lock = this.locks.get(key);
      if (lock !== undefined && lock > now) {
        refuse(lock, key);
        continue;
      }
      if (lock !== undefined) this.locks.delete(key);
      const inFlight = this.inFlight(key, now);
      if (inFlight > 0 && this.recentFailures(key, now, rule.windowMs).length + inFlight >= rule.failures) {
        refuse(now + rule.lockMs, key);
      }
    }
    if (refusal !== null) return refusal;
    for (const { key } of keys) {
      const attempts = this.pending.get(key) ?? new Map<string, number>();
      attempts.set(attempt, now);
      this.pending.set(key, attempts);
    }
    return null;
  }

  settle(
    keys: readonly CountedKey[],
    attempt: string,
    now: number,
    outcome: { succeeded: boolean; clearOnSuccess: string },
  ): void {
    for (const { key, rule } of keys) {
      const attempts = this.pending.get(key);
      attempts?.delete(attempt);
      if (attempts?.size === 0) this.pending.delete(key);
      if (outcome.succeeded) continue;
      const recent = this.recentFailures(key, now, rule.windowMs);
      recent.push(now);
      this.failures.set(key, recent);
      if (reachesThreshold(rule, recent.length))
        this.locks.set(key, Math.max(now + rule.lockMs, this.locks.get(key) ?? 0));
    }
    if (outcome.succeeded) this.failures.delete(outcome.clearOnSuccess);
  }

  /** The lock end of `key` at `now`, or null (for tests and diagnostics). */
  lockedUntil(key: string, now: number): number | null {
    const lock = this.locks.get(key);
    return lock !== undefined && lock > now ? lock : null;
  }

  private recentFailures(key: string, now: number, windowMs: number): number[] {
    return (this.failures.get(key) ?? []).filter((t) => t > now - windowMs);
  }

  private inFlight(key: string, now: number): number {
    const attempts = this.pending.get(key);
    if (!attempts) return 0;
    for (const [id, at] of attempts) if (at <= now - PENDING_ATTEMPT_MS) attempts.delete(id);
    return attempts.size;
  }
}

/** A LockoutStore over one in-process ledger: the single-process store and the test fake. */
export class InProcessLockoutStore extends LockoutStore {
  readonly ledger = new LockoutLedger();

  async admit(keys: readonly CountedKey[], attempt: string, now: number): Promise<Refusal | null> {
    return this.ledger.admit(keys, attempt, now);
  }

  async settle(
    keys: readonly CountedKey[],
    attempt: string,
    now: number,
    outcome: { succeeded: boolean; clearOnSuccess: string },
  ): Promise<void> {
    this.ledger.settle(keys, attempt, now, outcome);
  }
}
