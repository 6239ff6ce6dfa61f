/**
 * Shared counters behind the sign-in lockout. With several replicas the store is
 * shared (Redis), so a lock set by one replica is enforced by all.
 */
export abstract class LockoutStore {
  /** Records a failure at `now` and returns the failures of `key` within `windowMs`. */
  abstract recordFailure(key: string, now: number, windowMs: number): Promise<number>;
  abstract lock(key: string, until: number): Promise<void>;
  /** The latest lock end among `keys`, or null when none is locked at `now`. */
  abstract lockedUntil(keys: readonly string[], now: number): Promise<number | null>;
  abstract clearFailures(key: string): Promise<void>;
}
