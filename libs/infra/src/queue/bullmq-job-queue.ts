import type { Job, Queue, Worker } from 'bullmq';
// BullMQ is a CommonJS package: its values are read from its module object when used rather than
// bound once by Node's ESM wrapper. Three server starts on the 2-core CI machine (in ~400 under
// the full e2e suite; never alone) failed with "withBackend is not a function": the wrapper's
// snapshot of the exports lacked a name that the module object has.
import bullmq from 'bullmq';
import { Redis } from 'ioredis';
import type { JobOptions, JobProcessor, JobRepeat } from '#core/ports/job-queue.port.js';
import { JobQueue } from '#core/ports/job-queue.port.js';
import type { Metrics } from '#core/ports/metrics.port.js';
import { currentLogContext, runWithLogContext } from '../logging/log-context.js';
import type { AppLogger } from '../logging/logger.js';
import { LogThrottle } from '../logging/log-throttle.js';
import { TRACE_FIELD, traceCarrier, traceJob } from '../tracing/tracing.js';

/** Where the queue keeps its jobs. */
export type QueueBackendConfig =
  | { kind: 'redis'; url: string; prefix: string }
  /**
   * `pollMs`: when NOTIFY cannot reach the worker (embedded PGlite behind its socket server),
   * the longest a worker waits before looking for new jobs again.
   */
  | { kind: 'postgres'; url: string; pollMs?: number };

/**
 * BullMQ's Postgres backend, optionally with a bounded wait: its worker otherwise sleeps
 * until the next delayed job is due and relies on NOTIFY to wake earlier for new ones.
 */
function postgresBackend(pollMs: number | undefined): ReturnType<typeof bullmq.withBackend<never, never>> {
  const { createPostgresBackend, withBackend } = bullmq;
  if (pollMs === undefined) return withBackend(createPostgresBackend) as never;
  const bounded = ((...args: Parameters<typeof createPostgresBackend>) => {
    const backend = createPostgresBackend(...args);
    Object.defineProperty(backend, 'maximumBlockTimeout', { get: () => pollMs / 1000 });
    return backend;
  }) as typeof createPostgresBackend;
  return withBackend(bounded) as never;
}

export interface BullJobQueueOptions {
  backend: QueueBackendConfig;
  /** Job names a consumer must handle; `startConsuming` refuses to start otherwise. */
  declaredNames: readonly string[];
  concurrency: number;
  queueName?: string;
  logger?: AppLogger;
  metrics?: Metrics;
}

/** Field of a job's data carrying the id of the request that queued it (for logs). */
const REQUEST_ID_FIELD = '_reqId';

type AnyQueue = Queue;
type AnyWorker = Worker;

/** Completed jobs are kept a day so a repeated deterministic id stays a no-op. */
const KEEP_COMPLETED = { age: 24 * 3600, count: 10_000 };
const KEEP_FAILED = { age: 7 * 24 * 3600, count: 10_000 };

/**
 * JobQueue on BullMQ: Redis when REDIS_URL is set, otherwise BullMQ's PostgreSQL backend
 * on the server's own database (embedded or DATABASE_URL). One queue carries every job
 * name; one worker per process dispatches by name to the registered processor.
 */
export class BullJobQueue<M extends object> extends JobQueue<M> {
  private readonly queue: AnyQueue;
  private worker: AnyWorker | null = null;
  private readonly processors = new Map<string, JobProcessor<unknown>>();
  private readonly redisClients: Redis[] = [];
  private readonly queueName: string;

  constructor(private readonly options: BullJobQueueOptions) {
    super();
    this.queueName = options.queueName ?? 'svc-jobs';
    this.queue = this.createQueue();
  }

  private connection(): Record<string, unknown> {
    const { backend } = this.options;
    if (backend.kind === 'redis') {
      const client = new Redis(backend.url, { maxRetriesPerRequest: null, lazyConnect: false });
      const errors = new LogThrottle((f) => this.options.logger?.warn('queue redis error', f));
      client.on('error', (err) => errors.note({ error: err.message }));
      this.redisClients.push(client);
      return { connection: client, prefix: `${backend.prefix}:bull` };
    }
    return { connection: { connectionString: backend.url, max: 4, migrate: true } };
  }

  private createQueue(): AnyQueue {
    if (this.options.backend.kind === 'redis') {
      return new bullmq.Queue(this.queueName, this.connection() as never);
    }
    const pg = postgresBackend(this.options.backend.pollMs);
    return new pg.Queue(this.queueName, this.connection() as never) as unknown as AnyQueue;
  }

  async add<N extends keyof M & string>(name: N, data: M[N], options: JobOptions = {}): Promise<string> {
    const reqId = currentLogContext()?.reqId;
    const trace = traceCarrier();
    const payload =
      (reqId || trace) && data && typeof data === 'object'
        ? { ...data, ...(reqId ? { [REQUEST_ID_FIELD]: reqId } : {}), ...(trace ? { [TRACE_FIELD]: trace } : {}) }
        : data;
    if (options.jobId !== undefined) await this.clearFailed(options.jobId);
    const job = await this.queue.add(name, payload, {
      jobId: options.jobId,
      delay: options.delayMs,
      attempts: options.attempts ?? 1,
      backoff: { type: 'exponential', delay: options.backoffMs ?? 1000 },
      removeOnComplete: KEEP_COMPLETED,
      removeOnFail: KEEP_FAILED,
    });
    return String(job.id);
  }

  /**
   * A kept failed job would make every later add of its deterministic id a no-op for as long as
   * failed jobs are kept (a schedule occurrence whose job failed during a database outage would
   * never be queued again, and the schedule would stop): it is removed so the add queues afresh.
   * Waiting, delayed, active and completed jobs are left alone (their id stays a no-op).
   */
  private async clearFailed(jobId: string): Promise<void> {
    try {
      // One small look-up on every add with an id (no job body loaded); a removal only when failed.
      if ((await this.queue.getJobState(jobId)) === 'failed') await this.queue.remove(jobId);
    } catch {
      /* gone meanwhile (another replica cleared it), or locked: the add below decides */
    }
  }

  async repeat<N extends keyof M & string>(key: string, name: N, data: M[N], repeat: JobRepeat): Promise<void> {
    const opts = 'everyMs' in repeat ? { every: repeat.everyMs } : { pattern: repeat.cron, tz: repeat.tz };
    await this.queue.upsertJobScheduler(key, opts, {
      name,
      data,
      opts: { removeOnComplete: KEEP_COMPLETED, removeOnFail: KEEP_FAILED },
    });
  }

  async removeRepeat(key: string): Promise<void> {
    await this.queue.removeJobScheduler(key);
  }

  process<N extends keyof M & string>(name: N, processor: JobProcessor<M[N]>): void {
    if (this.worker) throw new Error(`Cannot register a processor for "${name}" after the queue started consuming`);
    this.processors.set(name, processor as JobProcessor<unknown>);
  }

  async startConsuming(): Promise<void> {
    const missing = this.options.declaredNames.filter((n) => !this.processors.has(n));
    if (missing.length > 0) {
      throw new Error(`No processor registered for job name(s): ${missing.join(', ')}`);
    }
    if (this.worker) return;
    const handler = async (job: Job): Promise<void> => {
      const processor = this.processors.get(job.name);
      if (!processor) throw new Error(`No processor for job "${job.name}"`);
      const data = (job.data ?? {}) as Record<string, unknown>;
      const context = {
        jobId: String(job.id),
        job: job.name,
        ...(typeof data.turnId === 'string' ? { turnId: data.turnId } : {}),
        ...(typeof data[REQUEST_ID_FIELD] === 'string' ? { reqId: data[REQUEST_ID_FIELD] } : {}),
      };
      const attempt = job.attemptsMade + 1;
      await runWithLogContext(context, () =>
        traceJob(
          { name: job.name, id: context.jobId, attempt, turnId: context.turnId, reqId: context.reqId },
          data[TRACE_FIELD],
          () => processor(job.data, { id: String(job.id), attempt }),
        ),
      );
    };
    const workerOptions = {
      ...this.connection(),
      concurrency: this.options.concurrency,
      // Without LISTEN/NOTIFY (embedded), poll briskly so new jobs start promptly.
      drainDelay: this.options.backend.kind === 'postgres' ? 0.25 : 5,
    };
    if (this.options.backend.kind === 'redis') {
      this.worker = new bullmq.Worker(this.queueName, handler, workerOptions as never);
    } else {
      const pg = postgresBackend(this.options.backend.kind === 'postgres' ? this.options.backend.pollMs : undefined);
      this.worker = new pg.Worker(this.queueName, handler as never, workerOptions as never) as unknown as AnyWorker;
    }
    this.worker.on('failed', (job, err) => {
      this.options.metrics?.jobFailed(job?.name ?? 'unknown');
      this.options.logger?.warn('job failed', {
        jobId: job?.id,
        job: job?.name,
        attempt: job?.attemptsMade,
        error: err.message,
      });
    });
    this.worker.on('stalled', (jobId: string) => {
      this.options.metrics?.jobStalled();
      this.options.logger?.warn('job stalled; it will be retried or failed', { jobId });
    });
    // A worker polling a store that is away fails many times a second: one line per 10 s.
    const workerErrors = new LogThrottle((f) => this.options.logger?.warn('queue worker error', f));
    this.worker.on('error', (err) => workerErrors.note({ error: err.message }));
    await this.worker.waitUntilReady();
  }

  isConsuming(): boolean {
    return this.worker?.isRunning() ?? false;
  }

  /** Jobs per state, for metrics. */
  async counts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
  }

  get name(): string {
    return this.queueName;
  }

  async ping(): Promise<void> {
    await this.queue.getJobCounts('waiting');
  }

  /** Lets running jobs finish (bounded by the caller's shutdown deadline), then disconnects. */
  async close(): Promise<void> {
    await this.worker?.close();
    this.worker = null;
    await this.queue.close();
    await Promise.all(this.redisClients.map((c) => c.quit().catch(() => c.disconnect())));
  }
}
