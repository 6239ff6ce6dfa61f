import { createHash } from 'node:crypto';
import type { ActivityEntry } from '../kernel/app.js';
import {
  type ScheduleConfig,
  nextScheduledRun,
  parseDuration,
  scheduleTimeZone,
} from '../kernel/app-spec/schedule-rules.js';
import { calendarDayOf, isChinaWorkday } from './workday-calendar.js';

/**
 * Pure rules of schedule triggers: the real next occurrence (cron in the schedule's time zone,
 * `every` on its grid from the anchor, working days only with `workday_calendar`), the
 * identity of an occurrence, and the back-off after failed runs.
 */

/** Candidates looked at before giving up (a 30 s `every` over a 9-day holiday is ~26 000). */
const MAX_CANDIDATES = 50_000;

export interface NextOccurrence {
  ms: number;
  /** Years the working-day table does not cover that were crossed (Monday–Friday assumed). */
  unknownYears: number[];
}

/** The first occurrence strictly after `afterMs`, or null when the schedule has none. */
export function nextOccurrence(config: ScheduleConfig, anchorMs: number, afterMs: number): NextOccurrence | null {
  const timeZone = scheduleTimeZone(config);
  const unknownYears = new Set<number>();
  let from = afterMs;
  for (let i = 0; i < MAX_CANDIDATES; i++) {
    const candidate = nextScheduledRun(config, anchorMs, from);
    if (candidate === null) return null;
    if (config.workday_calendar !== true) return { ms: candidate, unknownYears: [] };
    const day = calendarDayOf(candidate, timeZone);
    const answer = isChinaWorkday(day);
    if (!answer.known) unknownYears.add(day.year);
    if (answer.workday) return { ms: candidate, unknownYears: [...unknownYears] };
    from = candidate;
  }
  return null;
}

/** Occurrences a paused app let pass: how many, the first and the last scheduled time. */
export interface SkippedOccurrences {
  count: number;
  firstMs: number;
  lastMs: number;
}

/**
 * The occurrences after `afterMs` up to and including `untilMs` (the ticks that fell while an
 * app was paused), or null when there were none. A plain `every` is counted on its grid at once;
 * cron and working-day schedules are walked (at most MAX_CANDIDATES, then the count is a floor).
 */
export function occurrencesBetween(
  config: ScheduleConfig,
  anchorMs: number,
  afterMs: number,
  untilMs: number,
): SkippedOccurrences | null {
  const first = nextOccurrence(config, anchorMs, afterMs)?.ms ?? null;
  if (first === null || first > untilMs) return null;
  const interval = parseDuration(config.every);
  if (interval !== null && config.workday_calendar !== true) {
    const count = Math.floor((untilMs - first) / interval) + 1;
    return { count, firstMs: first, lastMs: first + (count - 1) * interval };
  }
  let count = 1;
  let last = first;
  for (let i = 0; i < MAX_CANDIDATES; i++) {
    const next = nextOccurrence(config, anchorMs, last)?.ms ?? null;
    if (next === null || next > untilMs) break;
    count++;
    last = next;
  }
  return { count, firstMs: first, lastMs: last };
}

/**
 * What a schedule's timing depends on: when it changes (a new frequency, another time zone),
 * the stored next occurrence is computed afresh from now; otherwise it is kept (a missed one
 * then fires once as the catch-up).
 */
export function scheduleSignature(config: ScheduleConfig, anchorMs: number): string {
  const every = typeof config.every === 'string' ? config.every.trim() : null;
  return JSON.stringify({
    every,
    cron: every === null && typeof config.cron === 'string' ? config.cron.trim() : null,
    tz: scheduleTimeZone(config) ?? null,
    workdays: config.workday_calendar === true,
    anchor: every === null ? null : anchorMs,
  });
}

/** Short stable digest for ids built from user text (subscription ids, bodies). */
export function digest(text: string | Buffer, length = 16): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** Job id of one occurrence: whichever replica queues it, and however often, one job exists. */
export { occurrenceJobId } from '../kernel/job-ids.js';

/**
 * The run id of an occurrence's run (a UUID derived from its job id): whichever replica starts
 * it, the run has this id, so one taking a stale claim over can tell whether it already started.
 */
export function occurrenceRunId(jobId: string): string {
  const h = createHash('sha256').update(`run:${jobId}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Pause between runs after 1, 2, 3, 4 failed runs in a row (counted from the last run's start). */
export const FAILURE_BACKOFF_MS: readonly number[] = [30_000, 60_000, 300_000, 900_000];
/** This many failed runs in a row pause the app with `lastError`. */
export const PAUSE_AFTER_FAILURES = 5;

/** Failed runs in a row, newest first; a completed run or an output ends the count. */
export function consecutiveFailures(
  newestFirst: readonly (Pick<ActivityEntry, 'type'> & { content?: ActivityEntry['content'] })[],
): number {
  let count = 0;
  for (const entry of newestFirst) {
    // A run the server's own database outage failed says nothing about the app: it neither
    // counts towards the back-off nor ends the run of failures before it.
    if (entry.type === 'run_error' && entry.content?.outage === true) continue;
    if (entry.type === 'run_error') count++;
    else if (entry.type === 'run_complete' || entry.type === 'output') break;
  }
  return count;
}

export type FailureDecision = { action: 'run' } | { action: 'wait'; untilMs: number } | { action: 'pause' };

/** Whether a due tick runs, waits out the back-off, or pauses the app. */
export function failureDecision(
  failures: number,
  lastRunAtMs: number | null,
  nowMs: number,
  backoff: readonly number[] = FAILURE_BACKOFF_MS,
  pauseAfter = PAUSE_AFTER_FAILURES,
): FailureDecision {
  if (failures <= 0) return { action: 'run' };
  if (failures >= pauseAfter) return { action: 'pause' };
  const wait = backoff[Math.min(failures, backoff.length) - 1] ?? 0;
  const untilMs = (lastRunAtMs ?? 0) + wait;
  return nowMs >= untilMs ? { action: 'run' } : { action: 'wait', untilMs };
}
