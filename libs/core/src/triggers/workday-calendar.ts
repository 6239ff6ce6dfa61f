/**
 * Mainland China's official working days (docs/api/triggers.md, "Working days"): Monday to Friday, except the public
 * holidays the State Council's yearly notice ("国务院办公厅关于<year>年部分节假日安排的通知")
 * gives off, plus the weekend days it makes working days (调休上班). A year the table does not
 * cover falls back to Monday–Friday and the caller logs a warning.
 *
 * Keep this table current: add next year's block when the notice comes out (usually in November).
 */

interface YearRules {
  /** Inclusive ranges of days off, `MM-DD`. */
  off: ReadonlyArray<readonly [string, string]>;
  /** Weekend days that are working days (make-up days), `MM-DD`. */
  makeUp: readonly string[];
}

/** From the State Council's notices (2025: published 2024-11-12; 2026: published 2025-11-04). */
export const CHINA_WORKDAY_TABLE: Readonly<Record<number, YearRules>> = {
  2025: {
    off: [
      ['01-01', '01-01'], // New Year's Day
      ['01-28', '02-04'], // Spring Festival
      ['04-04', '04-06'], // Qingming
      ['05-01', '05-05'], // Labour Day
      ['05-31', '06-02'], // Dragon Boat
      ['10-01', '10-08'], // National Day and Mid-Autumn
    ],
    makeUp: ['01-26', '02-08', '04-27', '09-28', '10-11'],
  },
  2026: {
    off: [
      ['01-01', '01-03'], // New Year's Day
      ['02-15', '02-23'], // Spring Festival
      ['04-04', '04-06'], // Qingming
      ['05-01', '05-05'], // Labour Day
      ['06-19', '06-21'], // Dragon Boat
      ['09-25', '09-27'], // Mid-Autumn
      ['10-01', '10-07'], // National Day
    ],
    makeUp: ['01-04', '02-14', '02-28', '05-09', '09-20', '10-10'],
  },
  // 2027: no official data yet. Checked 2026-11-25: the State Council's 2027 notice was not
  // found, and the npm data packages (chinese-days 1.5.7, holiday-calendar 1.3.3,
  // chinese-workday 1.16.1) stop at 2026 (their 2025–2026 data match this table). Days of 2027
  // fall back to Monday–Friday (one warning per year) until its block is added here; no dates
  // are guessed.
};

/** A calendar day, as in the schedule's time zone. */
export interface CalendarDay {
  year: number;
  /** 1–12. */
  month: number;
  /** 1–31. */
  day: number;
  /** 0 Sunday … 6 Saturday. */
  weekday: number;
}

export interface WorkdayAnswer {
  workday: boolean;
  /** False when the year is outside the table and Monday–Friday was assumed. */
  known: boolean;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** Whether `day` is a mainland working day (holidays off, make-up days on). */
export function isChinaWorkday(
  day: CalendarDay,
  table: Readonly<Record<number, YearRules>> = CHINA_WORKDAY_TABLE,
): WorkdayAnswer {
  const weekdayRule = day.weekday >= 1 && day.weekday <= 5;
  const rules = table[day.year];
  if (!rules) return { workday: weekdayRule, known: false };
  const md = `${pad(day.month)}-${pad(day.day)}`;
  if (rules.makeUp.includes(md)) return { workday: true, known: true };
  if (rules.off.some(([from, to]) => md >= from && md <= to)) return { workday: false, known: true };
  return { workday: weekdayRule, known: true };
}

/** The calendar day of an instant in a time zone (the server's own when `timeZone` is undefined). */
export function calendarDayOf(ms: number, timeZone?: string): CalendarDay {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    weekday: 'short',
  }).formatToParts(new Date(ms));
  const get = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(get('weekday'));
  return { year: Number(get('year')), month: Number(get('month')), day: Number(get('day')), weekday };
}
