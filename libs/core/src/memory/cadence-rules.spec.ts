import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_MEMORY_PREFERENCES, type MemoryPreferences } from '#contracts/spaces.js';
import { type AutoConsolidationInput, autoConsolidationDecision, CADENCE_THRESHOLDS } from './cadence-rules.js';

const KB = 1024;
const HOUR = 3_600_000;
const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);
const ago = (ms: number): string => new Date(NOW - ms).toISOString();

function input(
  overrides: Partial<AutoConsolidationInput> & { cadence?: MemoryPreferences['cadence'] } = {},
): AutoConsolidationInput {
  const { cadence, ...rest } = overrides;
  return {
    preferences: { ...DEFAULT_MEMORY_PREFERENCES, ...(cadence ? { cadence } : {}) },
    memoryBytes: 0,
    totalBytes: 0,
    lastConsolidatedAt: null,
    lastAttempt: null,
    now: NOW,
    ...rest,
  };
}

describe('cadence thresholds', () => {
  it('has the three cadences with growing limits and pauses', () => {
    assert.deepEqual(CADENCE_THRESHOLDS.diligent, { totalBytes: 100 * KB, memoryBytes: 8 * KB, minIntervalMs: HOUR });
    assert.deepEqual(CADENCE_THRESHOLDS.balanced, {
      totalBytes: 200 * KB,
      memoryBytes: 16 * KB,
      minIntervalMs: 4 * HOUR,
    });
    assert.deepEqual(CADENCE_THRESHOLDS.economical, {
      totalBytes: 400 * KB,
      memoryBytes: 32 * KB,
      minIntervalMs: 12 * HOUR,
    });
  });

  it('does nothing with memory or automatic consolidation turned off', () => {
    const big = { memoryBytes: 1_000 * KB, totalBytes: 1_000 * KB };
    assert.deepEqual(
      autoConsolidationDecision(input({ ...big, preferences: { ...DEFAULT_MEMORY_PREFERENCES, enabled: false } })),
      {
        consolidate: false,
        why: 'memory-off',
      },
    );
    assert.deepEqual(
      autoConsolidationDecision(
        input({ ...big, preferences: { ...DEFAULT_MEMORY_PREFERENCES, autoConsolidate: false } }),
      ),
      { consolidate: false, why: 'auto-off' },
    );
  });

  it('waits until memory.md or the whole memory reaches the cadence limit', () => {
    for (const cadence of ['diligent', 'balanced', 'economical'] as const) {
      const limits = CADENCE_THRESHOLDS[cadence];
      assert.deepEqual(
        autoConsolidationDecision(
          input({ cadence, memoryBytes: limits.memoryBytes - 1, totalBytes: limits.totalBytes - 1 }),
        ),
        {
          consolidate: false,
          why: 'below-threshold',
        },
      );
      assert.deepEqual(
        autoConsolidationDecision(input({ cadence, memoryBytes: limits.memoryBytes, totalBytes: limits.memoryBytes })),
        {
          consolidate: true,
        },
      );
      assert.deepEqual(autoConsolidationDecision(input({ cadence, memoryBytes: 10, totalBytes: limits.totalBytes })), {
        consolidate: true,
      });
    }
    // 20 KB of memory.md: due for diligent (8 KB) and balanced (16 KB), not for economical (32 KB).
    const sizes = { memoryBytes: 20 * KB, totalBytes: 20 * KB };
    assert.equal(autoConsolidationDecision(input({ cadence: 'diligent', ...sizes })).consolidate, true);
    assert.equal(autoConsolidationDecision(input({ cadence: 'balanced', ...sizes })).consolidate, true);
    assert.equal(autoConsolidationDecision(input({ cadence: 'economical', ...sizes })).consolidate, false);
  });

  it('keeps the least interval since the last consolidation', () => {
    const big = { memoryBytes: 50 * KB, totalBytes: 500 * KB };
    assert.deepEqual(autoConsolidationDecision(input({ ...big, lastConsolidatedAt: ago(HOUR - 1) })), {
      consolidate: false,
      why: 'too-soon',
    });
    assert.deepEqual(autoConsolidationDecision(input({ ...big, lastConsolidatedAt: ago(HOUR) })), {
      consolidate: true,
    });
    assert.equal(
      autoConsolidationDecision(input({ ...big, cadence: 'balanced', lastConsolidatedAt: ago(3 * HOUR) })).consolidate,
      false,
    );
    assert.equal(
      autoConsolidationDecision(input({ ...big, cadence: 'balanced', lastConsolidatedAt: ago(4 * HOUR) })).consolidate,
      true,
    );
    assert.equal(
      autoConsolidationDecision(input({ ...big, cadence: 'economical', lastConsolidatedAt: ago(11 * HOUR) }))
        .consolidate,
      false,
    );
    assert.equal(
      autoConsolidationDecision(input({ ...big, cadence: 'economical', lastConsolidatedAt: ago(12 * HOUR) }))
        .consolidate,
      true,
    );
    // An unreadable timestamp counts as never.
    assert.equal(autoConsolidationDecision(input({ ...big, lastConsolidatedAt: 'yesterday-ish' })).consolidate, true);
  });

  it('cools down after a failed attempt, not after a committed one', () => {
    const big = { memoryBytes: 50 * KB, totalBytes: 50 * KB };
    assert.deepEqual(
      autoConsolidationDecision(input({ ...big, lastAttempt: { at: ago(10 * 60_000), outcome: 'failed' } })),
      {
        consolidate: false,
        why: 'cooling-down',
      },
    );
    assert.equal(
      autoConsolidationDecision(input({ ...big, lastAttempt: { at: ago(HOUR), outcome: 'failed' } })).consolidate,
      true,
    );
    assert.equal(
      autoConsolidationDecision(
        input({ ...big, lastConsolidatedAt: ago(2 * HOUR), lastAttempt: { at: ago(2 * HOUR), outcome: 'committed' } }),
      ).consolidate,
      true,
    );
  });
});
