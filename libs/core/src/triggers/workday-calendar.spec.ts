import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHINA_WORKDAY_TABLE, calendarDayOf, isChinaWorkday } from './workday-calendar.js';

const day = (isoDate: string) => calendarDayOf(Date.parse(`${isoDate}T04:00:00Z`), 'Asia/Shanghai');
const works = (isoDate: string) => isChinaWorkday(day(isoDate));

describe('mainland China working days', () => {
  it('2026: holidays off, make-up weekend days on, ordinary weeks Monday–Friday', () => {
    for (const d of [
      '2026-01-01',
      '2026-01-02',
      '2026-02-16',
      '2026-02-23',
      '2026-04-06',
      '2026-05-05',
      '2026-06-19',
      '2026-09-25',
      '2026-10-07',
    ]) {
      assert.deepEqual(works(d), { workday: false, known: true }, d);
    }
    for (const d of ['2026-01-04', '2026-02-14', '2026-02-28', '2026-05-09', '2026-09-20', '2026-10-10']) {
      assert.deepEqual(works(d), { workday: true, known: true }, `make-up ${d}`);
    }
    assert.deepEqual(works('2026-03-10'), { workday: true, known: true });
    assert.deepEqual(works('2026-03-14'), { workday: false, known: true }, 'a plain Saturday');
  });

  it('2025: every make-up day works, every holiday block is off (State Council notice of 2024-11-12)', () => {
    // Make-up working days: Sun 01-26, Sat 02-08, Sun 04-27, Sun 09-28, Sat 10-11.
    for (const d of ['2025-01-26', '2025-02-08', '2025-04-27', '2025-09-28', '2025-10-11']) {
      assert.equal(day(d).weekday === 0 || day(d).weekday === 6, true, `${d} is a weekend day`);
      assert.deepEqual(works(d), { workday: true, known: true }, `make-up ${d}`);
    }
    // Weekdays inside each block are off.
    for (const d of [
      '2025-01-01',
      '2025-01-28',
      '2025-02-04',
      '2025-04-04',
      '2025-05-05',
      '2025-06-02',
      '2025-10-08',
    ]) {
      assert.deepEqual(works(d), { workday: false, known: true }, d);
    }
    // The weekends next to them that are not make-up days stay off; the weekdays after work.
    assert.deepEqual(works('2025-01-25'), { workday: false, known: true });
    assert.deepEqual(works('2025-02-05'), { workday: true, known: true });
    assert.deepEqual(works('2025-10-09'), { workday: true, known: true });
  });

  it('the make-up days of 2026 are all weekend days, and every holiday block lies inside its year', () => {
    for (const d of ['2026-01-04', '2026-02-14', '2026-02-28', '2026-05-09', '2026-09-20', '2026-10-10']) {
      assert.ok([0, 6].includes(day(d).weekday), `${d} is a weekend day`);
    }
    for (const [year, rules] of Object.entries(CHINA_WORKDAY_TABLE)) {
      for (const [from, to] of rules.off) assert.ok(from <= to, `${year} ${from}..${to}`);
      for (const d of rules.makeUp) {
        assert.ok(!rules.off.some(([from, to]) => d >= from && d <= to), `${year}-${d} is not also off`);
      }
    }
  });

  it('covers the current year (2026) only up to its end: 2027 has no official notice in any data package yet', () => {
    // Checked on 2026-11-25: chinese-days 1.5.7, holiday-calendar 1.3.3 and chinese-workday 1.16.1
    // on npm stop at 2026. Add the 2027 block when the State Council publishes it.
    assert.deepEqual(Object.keys(CHINA_WORKDAY_TABLE), ['2025', '2026']);
  });

  it('a year without a table: Monday–Friday, marked unknown', () => {
    assert.deepEqual(works('2027-02-08'), { workday: true, known: false });
    assert.deepEqual(works('2027-02-06'), { workday: false, known: false });
  });

  it('reads the day in the given time zone', () => {
    const ms = Date.parse('2026-02-13T20:00:00Z'); // Saturday 04:00 in Shanghai, Friday in New York
    assert.equal(calendarDayOf(ms, 'Asia/Shanghai').day, 14);
    assert.equal(calendarDayOf(ms, 'America/New_York').day, 13);
  });
});
