import type { Clock } from '../ports/clock.port.js';
import type { ArtifactChange } from './watch-events.js';

/** Timer functions, so tests can move time by hand. */
export interface BatchTimers {
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: BatchTimers = {
  setTimeout: (run, ms) => setTimeout(run, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface ChangeBatcherOptions {
  /** Flush after this long without a change. */
  quietMs: number;
  /** While changes keep coming, flush at least this often (from the first pending change). */
  maxWaitMs: number;
  /** Changes per event; a bigger flush becomes several events. */
  maxChangesPerEvent: number;
  /** More pending changes than this: drop them and send one resync instead. */
  maxPending: number;
  /**
   * After changes were lost, the resync waits for quiet (a burst that overflowed is usually
   * still going), but no longer than this from the loss.
   */
  lostMaxWaitMs: number;
}

export const DEFAULT_BATCH_OPTIONS: Readonly<ChangeBatcherOptions> = {
  quietMs: 500,
  maxWaitMs: 2_000,
  maxChangesPerEvent: 1_000,
  maxPending: 20_000,
  lostMaxWaitMs: 10_000,
};

/** What one flush produces: change events of at most `maxChangesPerEvent` each, or a resync. */
/** `firstAt`: when the first change of the batch was seen (clock ms), to measure lag. */
export type BatchFlush = { resync: false; events: ArtifactChange[][]; firstAt: number } | { resync: true };

/**
 * Collects the changes of one space and hands them out in batches: after `quietMs` of
 * quiet, at most `maxWaitMs` after the first pending change, split into events of at most
 * `maxChangesPerEvent`. A pile-up beyond `maxPending` (or a lost-events report) turns the
 * batch into one resync. Repeated `change`s of an entry already pending as added or changed
 * are redundant and kept once. Pure logic: time comes from the Clock and BatchTimers.
 */
export class ChangeBatcher {
  private readonly options: ChangeBatcherOptions;
  private pending: ArtifactChange[] = [];
  /** Last pending type per path, to drop redundant `change`s. */
  private lastType = new Map<string, ArtifactChange['type']>();
  private firstAt: number | null = null;
  private lastAt = 0;
  private lostAt: number | null = null;
  private timer: unknown = null;
  private disposed = false;

  constructor(
    private readonly clock: Clock,
    private readonly timers: BatchTimers,
    private readonly onFlush: (flush: BatchFlush) => void,
    options: Partial<ChangeBatcherOptions> = {},
  ) {
    this.options = { ...DEFAULT_BATCH_OPTIONS, ...options };
  }

  /** Changes waiting for the next flush (0 once changes were lost). */
  get pendingCount(): number {
    return this.pending.length;
  }

  get hasPending(): boolean {
    return this.firstAt !== null;
  }

  push(change: ArtifactChange): void {
    if (this.disposed) return;
    this.touch();
    if (this.lostAt !== null) return;
    const previous = this.lastType.get(change.path);
    if (change.type === 'change' && (previous === 'add' || previous === 'change')) return;
    this.pending.push(change);
    this.lastType.set(change.path, change.type);
    if (this.pending.length > this.options.maxPending) this.lose();
  }

  /** Events were or may have been lost (watcher error or overflow): the next flush is a resync. */
  markLost(): void {
    if (this.disposed) return;
    this.touch();
    this.lose();
  }

  /** Flushes what is pending now (shutdown, losing leadership). */
  flushNow(): void {
    if (this.disposed) return;
    this.flush();
  }

  /** Drops what is pending and stops the timer; nothing is flushed afterwards. */
  dispose(): void {
    this.disposed = true;
    this.clearTimer();
    this.reset();
  }

  private touch(): void {
    const now = this.clock.now();
    if (this.firstAt === null) this.firstAt = now;
    this.lastAt = now;
    if (this.timer === null) this.arm(this.dueAt() - now);
  }

  private lose(): void {
    if (this.lostAt === null) this.lostAt = this.clock.now();
    this.pending = [];
    this.lastType.clear();
  }

  private dueAt(): number {
    const { quietMs, maxWaitMs, lostMaxWaitMs } = this.options;
    const quiet = this.lastAt + quietMs;
    if (this.lostAt !== null) return Math.min(quiet, this.lostAt + lostMaxWaitMs);
    return Math.min(quiet, (this.firstAt ?? this.lastAt) + maxWaitMs);
  }

  /**
   * One timer per batch: when it fires early (more changes came meanwhile) it re-arms for
   * the remaining time instead of being reset on every change.
   */
  private arm(ms: number): void {
    this.timer = this.timers.setTimeout(
      () => {
        this.timer = null;
        if (this.disposed || this.firstAt === null) return;
        const remaining = this.dueAt() - this.clock.now();
        if (remaining > 0) this.arm(remaining);
        else this.flush();
      },
      Math.max(0, ms),
    );
  }

  private clearTimer(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  private flush(): void {
    this.clearTimer();
    if (this.firstAt === null) return;
    const lost = this.lostAt !== null;
    const pending = this.pending;
    const firstAt = this.firstAt;
    this.reset();
    if (lost) {
      this.onFlush({ resync: true });
      return;
    }
    if (pending.length === 0) return;
    const size = this.options.maxChangesPerEvent;
    const events: ArtifactChange[][] = [];
    for (let i = 0; i < pending.length; i += size) events.push(pending.slice(i, i + size));
    this.onFlush({ resync: false, events, firstAt });
  }

  private reset(): void {
    this.pending = [];
    this.lastType = new Map();
    this.firstAt = null;
    this.lostAt = null;
  }
}
