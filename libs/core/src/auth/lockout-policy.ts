import type { LockoutRule } from '../ports/lockout-store.port.js';

/** Sign-in lockout rules (docs/api.md, "Authentication"). */

export type { LockoutRule };

const MINUTE = 60_000;

/** Five failures from one IP within 5 minutes lock that IP for 15 minutes. */
export const PER_IP_RULE: LockoutRule = { failures: 5, windowMs: 5 * MINUTE, lockMs: 15 * MINUTE };
/** Ten failures within one hour from any address lock sign-in for everyone for 30 minutes. */
export const GLOBAL_RULE: LockoutRule = { failures: 10, windowMs: 60 * MINUTE, lockMs: 30 * MINUTE };

export const GLOBAL_KEY = 'global';
export const ipKey = (ip: string): string => `ip:${ip}`;

/** Whether `count` failures in the window reach the rule's threshold. */
export function reachesThreshold(rule: LockoutRule, count: number): boolean {
  return count >= rule.failures;
}

/** Seconds to announce in Retry-After: whole seconds, never 0 while locked. */
export function retryAfterSeconds(lockedUntil: number, now: number): number {
  return Math.max(1, Math.ceil((lockedUntil - now) / 1000));
}
