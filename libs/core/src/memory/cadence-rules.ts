import type { MemoryCadence, MemoryPreferences } from '#contracts/spaces.js';

/**
 * When automatic consolidation is due. A cadence fixes how big memory may grow (all of it,
 * or `memory.md` alone) before it is reorganized, and how long at least lies between two
 * automatic runs. The same pause follows a failed attempt, so a failing model or a reply
 * that is refused is not retried after every turn.
 */
export interface CadenceThresholds {
  /** memory.md plus every topic page. */
  totalBytes: number;
  /** memory.md alone. */
  memoryBytes: number;
  /** Least time since the last consolidation (and since a failed attempt). */
  minIntervalMs: number;
}

const KB = 1024;
const HOUR = 3_600_000;

export const CADENCE_THRESHOLDS: Readonly<Record<MemoryCadence, Readonly<CadenceThresholds>>> = {
  diligent: { totalBytes: 100 * KB, memoryBytes: 8 * KB, minIntervalMs: 1 * HOUR },
  balanced: { totalBytes: 200 * KB, memoryBytes: 16 * KB, minIntervalMs: 4 * HOUR },
  economical: { totalBytes: 400 * KB, memoryBytes: 32 * KB, minIntervalMs: 12 * HOUR },
};

export interface AutoConsolidationInput {
  preferences: MemoryPreferences;
  memoryBytes: number;
  totalBytes: number;
  /** ISO 8601, or null when never consolidated. */
  lastConsolidatedAt: string | null;
  lastAttempt: { at: string; outcome: string } | null;
  /** Epoch milliseconds. */
  now: number;
}

export type AutoConsolidationDecision =
  | { consolidate: true }
  | { consolidate: false; why: 'memory-off' | 'auto-off' | 'below-threshold' | 'too-soon' | 'cooling-down' };

export function autoConsolidationDecision(input: AutoConsolidationInput): AutoConsolidationDecision {
  const { preferences, now } = input;
  if (!preferences.enabled) return { consolidate: false, why: 'memory-off' };
  if (!preferences.autoConsolidate) return { consolidate: false, why: 'auto-off' };
  const limits = CADENCE_THRESHOLDS[preferences.cadence] ?? CADENCE_THRESHOLDS.diligent;
  if (input.totalBytes < limits.totalBytes && input.memoryBytes < limits.memoryBytes) {
    return { consolidate: false, why: 'below-threshold' };
  }
  if (elapsed(input.lastConsolidatedAt, now) < limits.minIntervalMs) return { consolidate: false, why: 'too-soon' };
  const attempt = input.lastAttempt;
  if (attempt && attempt.outcome !== 'committed' && elapsed(attempt.at, now) < limits.minIntervalMs) {
    return { consolidate: false, why: 'cooling-down' };
  }
  return { consolidate: true };
}

/** Milliseconds since an ISO timestamp; Infinity when there is none (or it is unreadable). */
function elapsed(iso: string | null | undefined, now: number): number {
  if (!iso) return Infinity;
  const at = Date.parse(iso);
  return Number.isFinite(at) ? now - at : Infinity;
}
