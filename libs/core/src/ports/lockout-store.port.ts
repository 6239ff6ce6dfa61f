/** One lockout rule: this many failures within the window lock for `lockMs`. */
export interface LockoutRule {
  failures: number;
  windowMs: number;
  lockMs: number;
}

/** One counter a sign-in attempt is counted under (its IP, everyone), with its rule. */
export interface CountedKey {
  key: string;
  rule: LockoutRule;
}

/** Why an attempt was refused: when the lock ends, and the counted key whose lock that is. */
export interface Refusal {
  until: number;
  /** The key with the latest lock end (e.g. `ip:…` or `global`): which lock the caller met. */
  key: string;
}

/**
 * Shared counters behind the sign-in lockout. With several replicas the store is shared
 * (Redis), so a lock set by one replica is enforced by all. Deciding and counting is one
 * atomic step (`admit`) taken before the password is compared, so a burst of concurrent
 * attempts cannot slip more guesses past the lock than the rules allow.
 */
export abstract class LockoutStore {
  /**
   * Atomically: refuses when any key is locked at `now`, or when attempts still in flight
   * would reach a key's threshold if they failed (answering when the lock ends, or would
   * end, and whose lock it is); otherwise records `attempt` as in flight under every key
   * and answers null.
   */
  abstract admit(keys: readonly CountedKey[], attempt: string, now: number): Promise<Refusal | null>;

  /**
   * Atomically ends an admitted attempt. A failure is counted under every key and locks a
   * key whose window reaches its threshold (a lock is never shortened); a success counts
   * nowhere and clears the failures of `clearOnSuccess`.
   */
  abstract settle(
    keys: readonly CountedKey[],
    attempt: string,
    now: number,
    outcome: { succeeded: boolean; clearOnSuccess: string },
  ): Promise<void>;
}
