import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calendarDayOf, isChinaWorkday } from './workday-calendar.js';

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

  it('2025 is in the table too', () => {
    assert.deepEqual(works('2025-01-26'), { workday: true, known: true });
    assert.deepEqual(works('2025-10-08'), { workday: false, known: true });
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
