import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  consecutiveFailures,
  failureDecision,
  nextOccurrence,
  occurrenceJobId,
  occurrencesBetween,
  scheduleSignature,
} from './schedule-timing.js';

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());
const next = (config: Record<string, unknown>, after: string, anchor = 0): string | undefined =>
  iso(nextOccurrence(config, anchor, at(after))?.ms);

describe('nextOccurrence: every', () => {
  it('stays on the grid counted from the anchor, strictly after the given time', () => {
    const anchor = at('2026-01-05T10:00:00.000Z');
    assert.equal(next({ every: '5s' }, '2026-01-05T10:00:00.000Z', anchor), '2026-01-05T10:00:05.000Z');
    assert.equal(next({ every: '5s' }, '2026-01-05T10:00:07.300Z', anchor), '2026-01-05T10:00:10.000Z');
    assert.equal(next({ every: '1d' }, '2026-01-09T09:00:00.000Z', anchor), '2026-01-09T10:00:00.000Z');
  });
});

describe('nextOccurrence: cron with a time zone', () => {
  it('reads 5 fields and 6 (seconds first) in the schedule time zone', () => {
    const cfg = { cron: '0 9 * * *', timezone: 'Asia/Shanghai' };
    assert.equal(next(cfg, '2026-01-05T00:00:00.000Z'), '2026-01-05T01:00:00.000Z');
    assert.equal(next(cfg, '2026-01-05T01:00:00.000Z'), '2026-01-06T01:00:00.000Z');
    assert.equal(
      next({ cron: '*/20 * * * * *', timezone: 'UTC' }, '2026-01-05T00:00:05.000Z'),
      '2026-01-05T00:00:20.000Z',
    );
  });

  it('spring forward: a time that does not exist that day fires once, an hour later on the wall clock', () => {
    const cfg = { cron: '30 2 * * *', timezone: 'America/New_York' };
    // 2026-03-08 02:30 does not exist in New York; the run is at 03:30 EDT (07:30Z), then back to 02:30 EDT.
    assert.equal(next(cfg, '2026-03-07T12:00:00.000Z'), '2026-03-08T07:30:00.000Z');
    assert.equal(next(cfg, '2026-03-08T07:30:00.000Z'), '2026-03-09T06:30:00.000Z');
  });

  it('fall back: a time that happens twice fires once', () => {
    const cfg = { cron: '30 1 * * *', timezone: 'America/New_York' };
    const first = next(cfg, '2026-11-01T00:00:00.000Z');
    assert.equal(first, '2026-11-01T05:30:00.000Z');
    assert.equal(next(cfg, first!), '2026-11-02T06:30:00.000Z');
  });

  it('keeps 09:00 local across the European change (UTC offset moves, wall time does not)', () => {
    const cfg = { cron: '0 9 * * *', timezone: 'Europe/Berlin' };
    assert.equal(next(cfg, '2026-03-28T09:00:00.000Z'), '2026-03-29T07:00:00.000Z');
    assert.equal(next(cfg, '2026-03-27T12:00:00.000Z'), '2026-03-28T08:00:00.000Z');
  });

  it('month ends: the 31st skips short months, L is the last day, Feb 29 waits for a leap year', () => {
    assert.equal(next({ cron: '0 0 31 * *', timezone: 'UTC' }, '2026-04-01T00:00:00.000Z'), '2026-05-31T00:00:00.000Z');
    assert.equal(next({ cron: '0 0 31 * *', timezone: 'UTC' }, '2026-05-31T00:00:00.000Z'), '2026-07-31T00:00:00.000Z');
    assert.equal(
      next({ cron: '0 9 L * *', timezone: 'Asia/Shanghai' }, '2026-02-01T00:00:00.000Z'),
      '2026-02-28T01:00:00.000Z',
    );
    assert.equal(next({ cron: '0 0 29 2 *', timezone: 'UTC' }, '2026-01-01T00:00:00.000Z'), '2028-02-29T00:00:00.000Z');
  });
});

describe('nextOccurrence: workday_calendar', () => {
  const daily = { cron: '0 9 * * *', timezone: 'Asia/Shanghai', workday_calendar: true };

  it('skips the Spring Festival holiday and runs on the make-up Saturdays', () => {
    // 2026-02-13 Fri works; 02-14 Sat is a make-up working day; 02-15..02-23 off; 02-24 back.
    assert.equal(next(daily, '2026-02-13T02:00:00.000Z'), '2026-02-14T01:00:00.000Z');
    assert.equal(next(daily, '2026-02-14T02:00:00.000Z'), '2026-02-24T01:00:00.000Z');
    assert.equal(next(daily, '2026-02-27T02:00:00.000Z'), '2026-02-28T01:00:00.000Z');
  });

  it('skips weekends and National Day; Sunday 2026-09-20 and Saturday 2026-10-10 work', () => {
    assert.equal(next(daily, '2026-09-18T02:00:00.000Z'), '2026-09-20T01:00:00.000Z');
    assert.equal(next(daily, '2026-09-30T02:00:00.000Z'), '2026-10-08T01:00:00.000Z');
    assert.equal(next(daily, '2026-10-09T02:00:00.000Z'), '2026-10-10T01:00:00.000Z');
    assert.equal(next(daily, '2026-01-02T02:00:00.000Z'), '2026-01-04T01:00:00.000Z');
  });

  it('a year outside the table falls back to Monday–Friday and says which year', () => {
    const result = nextOccurrence(daily, 0, at('2027-01-01T02:00:00.000Z'));
    assert.equal(iso(result?.ms), '2027-01-04T01:00:00.000Z');
    assert.deepEqual(result?.unknownYears, [2027]);
    assert.deepEqual(nextOccurrence(daily, 0, at('2026-06-01T02:00:00.000Z'))?.unknownYears, []);
  });

  it('an every schedule skips non-working days too', () => {
    const cfg = { every: '1d', timezone: 'Asia/Shanghai', workday_calendar: true };
    const anchor = at('2026-04-01T01:00:00.000Z');
    assert.equal(next(cfg, '2026-04-03T02:00:00.000Z', anchor), '2026-04-07T01:00:00.000Z');
  });
});

describe('occurrencesBetween (ticks skipped while paused)', () => {
  const span = (r: { count: number; firstMs: number; lastMs: number } | null) =>
    r && { count: r.count, first: iso(r.firstMs), last: iso(r.lastMs) };
  it('counts an every grid at once, however long the pause', () => {
    const anchor = at('2026-01-05T10:00:00.000Z');
    const pausedAt = at('2026-01-05T10:00:07.000Z');
    assert.deepEqual(span(occurrencesBetween({ every: '5s' }, anchor, pausedAt, at('2026-01-06T10:00:07.000Z'))), {
      count: 17_280,
      first: '2026-01-05T10:00:10.000Z',
      last: '2026-01-06T10:00:05.000Z',
    });
    assert.equal(occurrencesBetween({ every: '5s' }, anchor, pausedAt, at('2026-01-05T10:00:09.999Z')), null);
  });
  it('walks cron occurrences, the end included', () => {
    const cfg = { cron: '0 9 * * *', timezone: 'UTC' };
    assert.deepEqual(span(occurrencesBetween(cfg, 0, at('2026-01-05T10:00:00.000Z'), at('2026-01-08T09:00:00.000Z'))), {
      count: 3,
      first: '2026-01-06T09:00:00.000Z',
      last: '2026-01-08T09:00:00.000Z',
    });
  });
});

describe('occurrence identity and signature', () => {
  it('names an occurrence by app, subscription and time, with no colon', () => {
    const id = occurrenceJobId('a1', 'tick:1', 1000);
    assert.equal(id, occurrenceJobId('a1', 'tick:1', 1000));
    assert.notEqual(id, occurrenceJobId('a1', 'tick:1', 2000));
    assert.notEqual(id, occurrenceJobId('a1', 'tick:2', 1000));
    assert.doesNotMatch(id, /:/);
  });

  it('changes with the timing, not with unrelated fields', () => {
    const base = scheduleSignature({ every: '5m' }, 1);
    assert.equal(scheduleSignature({ every: '5m', cron: '0 * * * *' }, 1), base, 'every wins');
    assert.notEqual(scheduleSignature({ every: '10m' }, 1), base);
    assert.notEqual(scheduleSignature({ every: '5m', workday_calendar: true }, 1), base);
    assert.notEqual(
      scheduleSignature({ cron: '0 9 * * *' }, 1),
      scheduleSignature({ cron: '0 9 * * *', timezone: 'UTC' }, 1),
    );
  });
});

describe('back-off after failed runs', () => {
  it('counts failed runs in a row, newest first; a completed run ends the count', () => {
    const types = ['run_error', 'run_skipped', 'run_error', 'milestone', 'run_complete', 'run_error'] as const;
    assert.equal(consecutiveFailures(types.map((type) => ({ type }))), 2);
    assert.equal(consecutiveFailures([]), 0);
  });

  it("a run failed by the server's database outage neither counts nor ends the count", () => {
    const entries = [
      { type: 'run_error' as const, content: { error: 'connect ECONNREFUSED', outage: true } },
      { type: 'run_error' as const, content: { error: 'model said no' } },
      { type: 'run_error' as const, content: { error: 'connect ECONNREFUSED', outage: true } },
      { type: 'run_error' as const, content: { error: 'model said no' } },
      { type: 'run_complete' as const, content: {} },
    ];
    assert.equal(consecutiveFailures(entries), 2);
    assert.equal(consecutiveFailures(entries.slice(0, 1)), 0);
  });

  it('runs, waits out a growing pause, then pauses the app', () => {
    assert.deepEqual(failureDecision(0, 1000, 1000), { action: 'run' });
    assert.deepEqual(failureDecision(1, 1000, 2000), { action: 'wait', untilMs: 31_000 });
    assert.deepEqual(failureDecision(1, 1000, 31_000), { action: 'run' });
    assert.deepEqual(failureDecision(2, 0, 59_000), { action: 'wait', untilMs: 60_000 });
    assert.deepEqual(failureDecision(4, 0, 900_000), { action: 'run' });
    assert.deepEqual(failureDecision(5, 0, 10 ** 12), { action: 'pause' });
  });
});
