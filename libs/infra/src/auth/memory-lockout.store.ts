import { InProcessLockoutStore } from '#core/auth/lockout-ledger.js';

/** Lockout counters for a single process (no REDIS_URL): each step is synchronous, hence atomic. */
export class MemoryLockoutStore extends InProcessLockoutStore {}
