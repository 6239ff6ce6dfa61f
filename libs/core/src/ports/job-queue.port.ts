import type { JobMap } from '#contracts/jobs.js';

export interface JobOptions {
  /** Deterministic id: a second add with the same id is a no-op while the first is kept (a failed one is replaced). */
  jobId?: string;
  /** Wait this long before the job becomes runnable. */
  delayMs?: number;
  /** Total attempts, the first included (default 1). */
  attempts?: number;
  /** Exponential backoff base between attempts (default 1000 ms). */
  backoffMs?: number;
  /**
   * No failed job of `jobId` can be kept: the id is never used twice (it names something unique,
   * such as a delivery's sequence number), or what it names has only just come to be (the
   * occurrence a schedule's claim moved on to). The look-up for one is left out.
   */
  uniqueId?: boolean;
}

export type JobRepeat = { everyMs: number } | { cron: string; tz?: string };

export interface JobContext {
  id: string;
  /** 1 for the first attempt. */
  attempt: number;
}

export type JobProcessor<TData> = (data: TData, ctx: JobContext) => Promise<void>;

/**
 * Durable background jobs. Jobs survive restarts; processors are registered per job
 * name before `start()`, which refuses to start a consumer when a declared job name
 * has no processor.
 */
export abstract class JobQueue<M extends object = JobMap> {
  abstract add<N extends keyof M & string>(name: N, data: M[N], options?: JobOptions): Promise<string>;
  /** Creates or updates a repeatable job identified by `key`. */
  abstract repeat<N extends keyof M & string>(key: string, name: N, data: M[N], repeat: JobRepeat): Promise<void>;
  abstract removeRepeat(key: string): Promise<void>;
  abstract process<N extends keyof M & string>(name: N, processor: JobProcessor<M[N]>): void;
  /** Starts consuming (worker role). Throws when a declared name has no processor. */
  abstract startConsuming(): Promise<void>;
  abstract isConsuming(): boolean;
  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;
}
