import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { FakeClock } from '#testing/fakes.js';
import { type BatchFlush, type BatchTimers, ChangeBatcher } from './change-batcher.js';
import type { ArtifactChange } from './watch-events.js';

/** Timers driven by a FakeClock: `advance` runs what falls due, in order. */
class FakeTimers implements BatchTimers {
  private nextId = 1;
  private readonly scheduled = new Map<number, { at: number; run: () => void }>();

  constructor(private readonly clock: FakeClock) {}

  setTimeout(run: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.scheduled.set(id, { at: this.clock.now() + ms, run });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.scheduled.delete(handle as number);
  }

  get count(): number {
    return this.scheduled.size;
  }

  advance(ms: number): void {
    const target = this.clock.now() + ms;
    for (;;) {
      let next: [number, { at: number; run: () => void }] | null = null;
      for (const entry of this.scheduled)
        if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.scheduled.delete(next[0]);
      this.clock.set(Math.max(this.clock.now(), next[1].at));
      next[1].run();
    }
    this.clock.set(target);
  }
}

const change = (n: number, type: ArtifactChange['type'] = 'add'): ArtifactChange => ({
  type,
  path: `/space/f${n}.txt`,
  relativePath: `f${n}.txt`,
});

describe('ChangeBatcher', () => {
  let clock: FakeClock;
  let timers: FakeTimers;
  let flushes: Array<{ at: number; flush: BatchFlush }>;
  let batcher: ChangeBatcher;
  let start: number;

  beforeEach(() => {
    clock = new FakeClock();
    timers = new FakeTimers(clock);
    flushes = [];
    start = clock.now();
    batcher = new ChangeBatcher(clock, timers, (flush) => flushes.push({ at: clock.now() - start, flush }));
  });

  const changesOf = (flush: BatchFlush): ArtifactChange[][] => {
    assert.equal(flush.resync, false);
    return flush.resync ? [] : flush.events;
  };

  it('flushes after 500 ms of quiet', () => {
    batcher.push(change(1));
    timers.advance(200);
    batcher.push(change(2));
    timers.advance(499);
    assert.equal(flushes.length, 0, 'not before 500 ms of quiet');
    timers.advance(1);
    assert.equal(flushes.length, 1);
    assert.equal(flushes[0]!.at, 700);
    assert.deepEqual(changesOf(flushes[0]!.flush), [[change(1), change(2)]]);
    timers.advance(5_000);
    assert.equal(flushes.length, 1, 'nothing more without changes');
    assert.equal(timers.count, 0, 'no timer left behind');
  });

  it('flushes at most 2 s after the first change while changes keep coming', () => {
    let n = 0;
    for (let t = 0; t < 5_000; t += 100) {
      batcher.push(change(n++));
      timers.advance(100);
    }
    timers.advance(1_000);
    assert.deepEqual(
      flushes.map((f) => f.at),
      [2_000, 4_000, 5_400],
    );
    const total = flushes.flatMap((f) => changesOf(f.flush).flat());
    assert.equal(total.length, n, 'every change delivered once');
    assert.deepEqual(
      total.map((c) => c.relativePath),
      Array.from({ length: n }, (_, i) => `f${i}.txt`),
      'in order',
    );
  });

  it('splits a big flush into events of at most 1,000 changes', () => {
    for (let i = 0; i < 2_500; i++) batcher.push(change(i));
    timers.advance(500);
    assert.equal(flushes.length, 1);
    const events = changesOf(flushes[0]!.flush);
    assert.deepEqual(
      events.map((e) => e.length),
      [1_000, 1_000, 500],
    );
    assert.deepEqual(events.flat()[1_234], change(1_234));
  });

  it('sends one resync instead of more than 20,000 pending changes, once the burst is quiet', () => {
    for (let i = 0; i < 20_000; i++) batcher.push(change(i));
    assert.equal(batcher.pendingCount, 20_000);
    batcher.push(change(20_000));
    assert.equal(batcher.pendingCount, 0, 'dropped');
    // The burst goes on for 3 s: no resync every 2 s, one after it calms down.
    for (let t = 0; t < 3_000; t += 50) {
      batcher.push(change(30_000 + t));
      timers.advance(50);
    }
    assert.equal(flushes.length, 0);
    timers.advance(500);
    assert.equal(flushes.length, 1);
    assert.deepEqual(flushes[0]!.flush, { resync: true });
    // Afterwards batching is normal again.
    batcher.push(change(1));
    timers.advance(500);
    assert.deepEqual(changesOf(flushes[1]!.flush), [[change(1)]]);
  });

  it('an endless overflowing burst still gets a resync every 10 s', () => {
    let n = 0;
    for (let t = 0; t < 25_000; t += 100) {
      for (let i = 0; i < 1_500; i++) batcher.push(change(n++));
      timers.advance(100);
    }
    // 20,000 pile up within 1.3 s of each cycle; the resync follows 10 s after the loss.
    assert.deepEqual(
      flushes.map((f) => f.at),
      [11_300, 22_600],
    );
    assert.ok(flushes.every((f) => f.flush.resync));
  });

  it('a watcher error turns the batch into a resync', () => {
    batcher.push(change(1));
    batcher.markLost();
    batcher.push(change(2));
    timers.advance(500);
    assert.deepEqual(
      flushes.map((f) => f.flush),
      [{ resync: true }],
    );
  });

  it('drops a change of an entry already pending as added or changed, keeps the rest in order', () => {
    batcher.push(change(1, 'add'));
    batcher.push(change(1, 'change'));
    batcher.push(change(2, 'change'));
    batcher.push(change(2, 'change'));
    batcher.push(change(1, 'unlink'));
    batcher.push(change(1, 'add'));
    batcher.push(change(1, 'change'));
    timers.advance(500);
    assert.deepEqual(changesOf(flushes[0]!.flush), [
      [change(1, 'add'), change(2, 'change'), change(1, 'unlink'), change(1, 'add')],
    ]);
  });

  it('flushNow hands out what is pending at once; dispose drops it', () => {
    batcher.push(change(1));
    batcher.flushNow();
    assert.deepEqual(changesOf(flushes[0]!.flush), [[change(1)]]);
    assert.equal(batcher.hasPending, false);
    batcher.push(change(2));
    batcher.dispose();
    timers.advance(5_000);
    batcher.push(change(3));
    timers.advance(5_000);
    assert.equal(flushes.length, 1);
    assert.equal(timers.count, 0);
  });

  it('honours custom limits', () => {
    const custom: BatchFlush[] = [];
    const small = new ChangeBatcher(clock, timers, (f) => custom.push(f), {
      quietMs: 50,
      maxWaitMs: 100,
      maxChangesPerEvent: 2,
      maxPending: 5,
    });
    for (let i = 0; i < 5; i++) small.push(change(i));
    timers.advance(50);
    assert.deepEqual(
      custom.map((f) => (f.resync ? 'resync' : f.events.map((e) => e.length).join(','))),
      ['2,2,1'],
    );
    for (let i = 0; i < 6; i++) small.push(change(i));
    timers.advance(50);
    assert.equal(custom[1]?.resync, true);
  });
});
