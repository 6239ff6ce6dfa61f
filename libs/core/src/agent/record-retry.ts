import { Injectable, Logger } from '@nestjs/common';
import { StorageFaults } from '../ports/storage-faults.port.js';

/** Backoff between attempts: doubles from the first delay up to the cap. */
export interface RetryPlan {
  firstDelayMs: number;
  maxDelayMs: number;
  /** Gives up (rethrows) once an outage lasted this long. */
  giveUpAfterMs: number;
  /** At most one "still waiting" line per this interval. */
  logEveryMs: number;
}

export const RECORD_RETRY_PLAN: RetryPlan = {
  firstDelayMs: 200,
  maxDelayMs: 1_000,
  giveUpAfterMs: 30 * 60_000,
  logEveryMs: 30_000,
};

/** The delay before attempt `attempt + 1` (attempt counts from 0). */
export function retryDelay(plan: RetryPlan, attempt: number): number {
  return Math.min(plan.maxDelayMs, plan.firstDelayMs * 2 ** Math.min(attempt, 20));
}

/**
 * Keeps what a finished turn produced until the record store takes it: a write failing
 * because the database is away (stopped, restarting, full) is tried again with backoff
 * until it answers, logging once when it starts, at most every `logEveryMs` while it
 * lasts, and once when it is recorded. Any other failure is thrown at once. Steps must be
 * safe to repeat after a failure (each one is a single transaction).
 */
@Injectable()
export class RecordRetry {
  private readonly logger = new Logger('AgentTurns');
  plan: RetryPlan = RECORD_RETRY_PLAN;

  constructor(private readonly faults: StorageFaults) {}

  /** Retries nothing (unit tests that build a runner by hand). */
  static never(): RecordRetry {
    return new RecordRetry(
      new (class extends StorageFaults {
        isUnavailable(): boolean {
          return false;
        }
      })(),
    );
  }

  /** Whether `err` is the database being away (stopped, restarting, full), not a fault of the work. */
  isOutage(err: unknown): boolean {
    return this.faults.isUnavailable(err);
  }

  /** `target` seen through the named methods, each call kept until the database takes it. */
  keeping<T extends object, K extends keyof T>(target: T, what: string, ...methods: K[]): Pick<T, K> {
    const view = {} as Pick<T, K>;
    for (const method of methods) {
      const fn = target[method] as (...args: unknown[]) => Promise<unknown>;
      (view as Record<K, unknown>)[method] = (...args: unknown[]) =>
        this.store(`${what} (${String(method)})`, () => fn.apply(target, args));
    }
    return view;
  }

  async store<T>(what: string, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    let lastLog = 0;
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await work();
        if (attempt > 0) {
          this.logger.log(`${what}: recorded after ${attempt + 1} attempts (${Date.now() - started} ms)`);
        }
        return result;
      } catch (err) {
        const waited = Date.now() - started;
        if (!this.faults.isUnavailable(err) || waited >= this.plan.giveUpAfterMs) throw err;
        if (attempt === 0 || Date.now() - lastLog >= this.plan.logEveryMs) {
          lastLog = Date.now();
          this.logger.warn(
            `${what}: the database is unavailable (${(err as Error).message}); keeping it and retrying` +
              (attempt > 0 ? ` (attempt ${attempt + 1}, ${Math.round(waited / 1000)} s)` : ''),
          );
        }
        await new Promise((r) => setTimeout(r, retryDelay(this.plan, attempt)));
      }
    }
  }
}
