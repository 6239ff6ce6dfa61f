import { CronExpressionParser } from 'cron-parser';

/** Pure rules of schedules: interval strings (`every`) and cron expressions. */

const DURATION = /^(\d+)([smhd])$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `30m`, `2h`, `1d` → milliseconds; null for anything else (units s, m, h, d; a positive whole number). */
export function parseDuration(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const match = DURATION.exec(text.trim());
  if (!match) return null;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms > 0 && Number.isSafeInteger(ms) ? ms : null;
}

/**
 * The first run of a cron expression after `fromMs`, or the reason it is refused: 5 fields,
 * or 6 with seconds first; it must parse and have a future run (a 31 April never comes).
 */
export function nextCronRun(
  expression: string,
  fromMs: number,
  timeZone?: string,
): { nextMs: number } | { error: string } {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return { error: 'must have 5 fields, or 6 with seconds first' };
  }
  try {
    const parsed = CronExpressionParser.parse(fields.join(' '), { currentDate: new Date(fromMs), tz: timeZone });
    if (!parsed.hasNext()) return { error: 'has no future run' };
    return { nextMs: parsed.next().getTime() };
  } catch (err) {
    return { error: `is not a valid cron expression (${err instanceof Error ? err.message : String(err)})` };
  }
}

/** A schedule as the spec writes it; when both are set, `every` wins. */
export interface ScheduleConfig {
  every?: unknown;
  cron?: unknown;
  /** IANA time zone of a cron expression (and of the working-day calendar); else the server's. */
  timezone?: unknown;
  workday_calendar?: unknown;
}

/** Whether `name` is an IANA time zone this runtime knows. */
export function isTimeZone(name: unknown): name is string {
  if (typeof name !== 'string' || name.trim() === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The schedule's time zone, or undefined for the server's own. */
export function scheduleTimeZone(config: ScheduleConfig): string | undefined {
  return isTimeZone(config.timezone) ? config.timezone : undefined;
}

/**
 * When a schedule fires next after `fromMs` (working days not considered; see
 * `triggers/schedule-timing.ts`): `every` counts from `anchorMs`, cron from the clock.
 */
export function nextScheduledRun(config: ScheduleConfig, anchorMs: number, fromMs: number): number | null {
  const interval = parseDuration(config.every);
  if (interval !== null) {
    if (fromMs < anchorMs) return anchorMs + interval;
    return anchorMs + (Math.floor((fromMs - anchorMs) / interval) + 1) * interval;
  }
  if (typeof config.cron === 'string') {
    const next = nextCronRun(config.cron, fromMs, scheduleTimeZone(config));
    return 'nextMs' in next ? next.nextMs : null;
  }
  return null;
}

/** What a `frequency` value means: an interval (`every`) or a cron expression. */
export function classifyFrequency(
  text: string,
  nowMs: number,
): { every: string } | { cron: string } | { error: string } {
  const trimmed = text.trim();
  if (parseDuration(trimmed) !== null) return { every: trimmed };
  if (trimmed.split(/\s+/).length < 5) return { error: 'must be an interval like 30m, 2h, 1d or a cron expression' };
  const next = nextCronRun(trimmed, nowMs);
  return 'error' in next ? { error: `cron ${next.error}` } : { cron: trimmed };
}
