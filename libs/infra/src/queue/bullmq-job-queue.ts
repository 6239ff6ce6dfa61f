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

/**
 * Embedded, an idle worker's wait before it looks for jobs again (every job this process queues
 * wakes it at once: `wakeWorkers`). Each look is three queries to the database thread; it was
 * 250 ms when every new job waited for it.
 */
export const EMBEDDED_QUEUE_POLL_MS = 2_000;

/** Where the queue keeps its jobs. */
export type QueueBackendConfig =
  | { kind: 'redis'; url: string; prefix: string }
  /**
   * `pollMs`: when NOTIFY cannot reach the worker (embedded PGlite behind its socket server),
   * the longest a worker waits before looking for new jobs again.
   */
  | { kind: 'postgres'; url: string; pollMs?: number };

/** What the queue reads of a backend of BullMQ's Postgres backend to wake its waiting worker. */
interface WakeableBackend {
  readonly queueName: string;
  /** Set while the backend's worker waits for a job; ends the wait (BullMQ's own use: closing). */
  cancelWait?: () => void;
}

/**
 * BullMQ's Postgres backend, each of its backends kept in `backends` (see `wakeWorkers`), and
 * optionally with a bounded wait: its worker otherwise sleeps until the next delayed job is due
 * and relies on NOTIFY to wake earlier for new ones.
 */
function postgresBackend(
  pollMs: number | undefined,
  backends: Set<WakeableBackend>,
): ReturnType<typeof bullmq.withBackend<never, never>> {
  const { createPostgresBackend, withBackend } = bullmq;
  const kept = ((...args: Parameters<typeof createPostgresBackend>) => {
    const backend = createPostgresBackend(...args);
    if (pollMs !== undefined) Object.defineProperty(backend, 'maximumBlockTimeout', { get: () => pollMs / 1000 });
    backends.add(backend as unknown as WakeableBackend);
    return backend;
  }) as typeof createPostgresBackend;
  return withBackend(kept) as never;
}

export interface BullJobQueueOptions {
  backend: QueueBackendConfig;
  /** Job names a consumer must handle; `startConsuming` refuses to start otherwise. */
  declaredNames: readonly string[];
  concurrency: number;
  queueName?: string;
  /**
   * Short jobs in a lane of their own (queue `<queueName>-quick`, its own worker and
   * concurrency), so they never wait for a free slot behind long ones (an `agent.turn` holds
   * its slot for the whole turn). Names not listed stay in the main queue.
   */
  quickLane?: { names: readonly string[]; concurrency: number };
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
 * The quick lane's locks: a job held by a replica that died is handed to another once its lock
 * lapses and a stalled-job check sees it. With BullMQ's defaults (a 30 s lock, a check every
 * 30 s) a channel message whose dispatch was running on a killed replica started its turn 55 s
 * later (bench/channels); a quick job takes milliseconds, and its lock is renewed every 5 s while
 * it runs, so 10 s and a check every 5 s hand it on within about 15 s. Turns keep the defaults.
 */
const QUICK_LOCK_MS = 10_000;
const QUICK_STALLED_CHECK_MS = 5_000;

/** One BullMQ queue of the job queue, with its worker once consuming. */
interface Lane {
  readonly queue: AnyQueue;
  readonly concurrency: number;
  /** The worker's lock and stalled-job check (BullMQ's defaults when absent). */
  readonly locks?: { lockDuration: number; stalledInterval: number };
  worker: AnyWorker | null;
}

/**
 * JobQueue on BullMQ: Redis when REDIS_URL is set, otherwise BullMQ's PostgreSQL backend
 * on the server's own database (embedded or DATABASE_URL). The main queue carries every job
 * name but those of the quick lane (`quickLane`), which has a queue of its own; each queue has
 * one worker per process, and each worker dispatches any name by its registered processor (a
 * job an earlier version queued in the other lane still runs).
 */
export class BullJobQueue<M extends object> extends JobQueue<M> {
  private readonly main: Lane;
  private readonly quick: Lane | null;
  private readonly quickNames: ReadonlySet<string>;
  private consuming = false;
  /** The workers prepareConsuming created, once their connections are ready. */
  private workersReady: Promise<unknown> | null = null;
  private readonly processors = new Map<string, JobProcessor<unknown>>();
  private readonly redisClients: Redis[] = [];
  /** Each Redis-backed queue's own connection (for the failed-set look-up). */
  private readonly queueClients = new Map<AnyQueue, Redis>();
  private readonly queueName: string;
  /** The Postgres backends of this queue's lanes (producers and workers), to wake its workers. */
  private readonly postgresBackends = new Set<WakeableBackend>();

  constructor(private readonly options: BullJobQueueOptions) {
    super();
    this.queueName = options.queueName ?? 'svc-jobs';
    this.main = { queue: this.createQueue(this.queueName), concurrency: options.concurrency, worker: null };
    const quick = options.quickLane;
    this.quickNames = new Set(quick?.names ?? []);
    this.quick = quick
      ? {
          queue: this.createQueue(`${this.queueName}-quick`),
          concurrency: quick.concurrency,
          locks: { lockDuration: QUICK_LOCK_MS, stalledInterval: QUICK_STALLED_CHECK_MS },
          worker: null,
        }
      : null;
  }

  private lanes(): Lane[] {
    return this.quick ? [this.main, this.quick] : [this.main];
  }

  /** The lane a job name is queued in. */
  private laneOf(name: string): Lane {
    return this.quick && this.quickNames.has(name) ? this.quick : this.main;
  }

  /**
   * A new connection's options. On Postgres, `migrate`: BullMQ brings its schema up to date when
   * the connection opens (a transaction of ten statements under a lock); the queues' connections
   * do, and the workers', opened after them, only check it.
   */
  private connection(migrate = true): Record<string, unknown> {
    const { backend } = this.options;
    if (backend.kind === 'redis') {
      const client = new Redis(backend.url, { maxRetriesPerRequest: null, lazyConnect: false });
      const errors = new LogThrottle((f) => this.options.logger?.warn('queue redis error', f));
      client.on('error', (err) => errors.note({ error: err.message }));
      this.redisClients.push(client);
      return { connection: client, prefix: `${backend.prefix}:bull` };
    }
    return { connection: { connectionString: backend.url, max: 4, migrate } };
  }

  private createQueue(queueName: string): AnyQueue {
    if (this.options.backend.kind === 'redis') {
      const connection = this.connection();
      const queue = new bullmq.Queue(queueName, connection as never);
      this.queueClients.set(queue, connection.connection as Redis);
      return queue;
    }
    const pg = postgresBackend(this.options.backend.pollMs, this.postgresBackends);
    return new pg.Queue(queueName, this.connection() as never) as unknown as AnyQueue;
  }

  async add<N extends keyof M & string>(name: N, data: M[N], options: JobOptions = {}): Promise<string> {
    const reqId = currentLogContext()?.reqId;
    const trace = traceCarrier();
    const payload =
      (reqId || trace) && data && typeof data === 'object'
        ? { ...data, ...(reqId ? { [REQUEST_ID_FIELD]: reqId } : {}), ...(trace ? { [TRACE_FIELD]: trace } : {}) }
        : data;
    const { queue } = this.laneOf(name);
    if (options.jobId !== undefined && !options.uniqueId) await this.clearFailed(queue, options.jobId);
    const job = await queue.add(name, payload, {
      jobId: options.jobId,
      delay: options.delayMs,
      attempts: options.attempts ?? 1,
      backoff: { type: 'exponential', delay: options.backoffMs ?? 1000 },
      removeOnComplete: KEEP_COMPLETED,
      removeOnFail: KEEP_FAILED,
    });
    this.wakeWorkers(queue);
    return String(job.id);
  }

  /**
   * A job this process just queued is for its own worker too: on Postgres its wait is ended at
   * once rather than at the next NOTIFY or poll. Embedded, NOTIFY does not reach the worker (the
   * socket server answers the notification to the client that committed), so this is what starts
   * a job promptly there; jobs queued any other way are found by the wait's poll (`pollMs`). A
   * worker between two waits misses nothing: its next wait first looks for a waiting job.
   */
  private wakeWorkers(queue: AnyQueue): void {
    for (const backend of this.postgresBackends) if (backend.queueName === queue.name) backend.cancelWait?.();
  }

  /**
   * A kept failed job would make every later add of its deterministic id a no-op for as long as
   * failed jobs are kept (a schedule occurrence whose job failed during a database outage would
   * never be queued again, and the schedule would stop): it is removed so the add queues afresh.
   * Waiting, delayed, active and completed jobs are left alone (their id stays a no-op).
   */
  private async clearFailed(queue: AnyQueue, jobId: string): Promise<void> {
    try {
      // One small look-up on every add with an id (no job body loaded); a removal only when failed.
      if (await this.isFailed(queue, jobId)) await queue.remove(jobId);
    } catch {
      /* gone meanwhile (another replica cleared it), or locked: the add below decides */
    }
  }

  /**
   * On Redis one ZSCORE of the failed set. BullMQ's getJobState looks through the active and
   * waiting lists (LPOS) for a job none of its sets holds, so each add of a new or waiting id
   * cost time in proportion to the jobs waiting: with 10,000 schedules re-added by a reconcile
   * pass while thousands of ticks waited, Redis spent most of a core on it (bench/cluster).
   */
  private async isFailed(queue: AnyQueue, jobId: string): Promise<boolean> {
    const client = this.queueClients.get(queue);
    if (!client) return (await queue.getJobState(jobId)) === 'failed';
    return (await client.zscore(queue.keys.failed!, jobId)) !== null;
  }

  async repeat<N extends keyof M & string>(key: string, name: N, data: M[N], repeat: JobRepeat): Promise<void> {
    const opts = 'everyMs' in repeat ? { every: repeat.everyMs } : { pattern: repeat.cron, tz: repeat.tz };
    const lane = this.laneOf(name);
    await lane.queue.upsertJobScheduler(key, opts, {
      name,
      data,
      opts: { removeOnComplete: KEEP_COMPLETED, removeOnFail: KEEP_FAILED },
    });
    // Its first job may be due before the end of the worker's current wait.
    this.wakeWorkers(lane.queue);
    // A scheduler of this key that an earlier version kept in the other lane would fire twice.
    for (const other of this.lanes()) if (other !== lane) await other.queue.removeJobScheduler(key);
  }

  async removeRepeat(key: string): Promise<void> {
    for (const lane of this.lanes()) await lane.queue.removeJobScheduler(key);
  }

  process<N extends keyof M & string>(name: N, processor: JobProcessor<M[N]>): void {
    if (this.consuming) throw new Error(`Cannot register a processor for "${name}" after the queue started consuming`);
    this.processors.set(name, processor as JobProcessor<unknown>);
  }

  /**
   * Creates the lanes' workers, not yet taking jobs: each opens and checks its connections now
   * (on Postgres, a pool, its schema check and the LISTEN client: round trips the start need not
   * wait for while the server's modules are created). startConsuming sets them to work. Once.
   */
  prepareConsuming(): void {
    if (this.workersReady) return;
    // After the queues' connections, which bring the job store's schema up to date.
    this.workersReady = this.ping().then(() => Promise.all(this.lanes().map((lane) => this.createWorker(lane))));
    this.workersReady.catch(() => undefined); // startConsuming awaits it and fails the start
  }

  async startConsuming(): Promise<void> {
    const missing = this.options.declaredNames.filter((n) => !this.processors.has(n));
    if (missing.length > 0) {
      throw new Error(`No processor registered for job name(s): ${missing.join(', ')}`);
    }
    if (this.consuming) return;
    this.consuming = true;
    this.prepareConsuming();
    await this.workersReady;
    for (const lane of this.lanes()) {
      const worker = lane.worker!;
      worker.run().catch((err: unknown) => worker.emit('error', err as Error));
    }
  }

  /** Runs a job with the processor of its name (registered by the time a worker runs). */
  private readonly handleJob = async (job: Job): Promise<void> => {
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

  private async createWorker(lane: Lane): Promise<void> {
    const { backend } = this.options;
    const workerOptions = {
      ...this.connection(false),
      concurrency: lane.concurrency,
      ...lane.locks,
      // An idle worker's wait, seconds. Embedded, the poll of `pollMs`; on Postgres, where NOTIFY
      // wakes it, still brisk in case a connection pooler between keeps NOTIFY from it.
      drainDelay: backend.kind === 'redis' ? 5 : (backend.pollMs ?? 250) / 1000,
      // Set to work by startConsuming.
      autorun: false,
    };
    let worker: AnyWorker;
    if (backend.kind === 'redis') {
      worker = new bullmq.Worker(lane.queue.name, this.handleJob, workerOptions as never);
    } else {
      const pg = postgresBackend(backend.pollMs, this.postgresBackends);
      worker = new pg.Worker(lane.queue.name, this.handleJob as never, workerOptions as never) as unknown as AnyWorker;
    }
    lane.worker = worker;
    worker.on('failed', (job, err) => {
      this.options.metrics?.jobFailed(job?.name ?? 'unknown');
      this.options.logger?.warn('job failed', {
        jobId: job?.id,
        job: job?.name,
        attempt: job?.attemptsMade,
        error: err.message,
      });
    });
    worker.on('stalled', (jobId: string) => {
      this.options.metrics?.jobStalled();
      this.options.logger?.warn('job stalled; it will be retried or failed', { jobId });
      // Moved back to waiting by this worker's own check: no add announced it.
      this.wakeWorkers(lane.queue);
    });
    // A worker polling a store that is away fails many times a second: one line per 10 s.
    const workerErrors = new LogThrottle((f) => this.options.logger?.warn('queue worker error', f));
    worker.on('error', (err) => workerErrors.note({ error: err.message }));
    await worker.waitUntilReady();
  }

  isConsuming(): boolean {
    return this.consuming && this.lanes().every((lane) => lane.worker?.isRunning() ?? false);
  }

  /** Jobs per state over all lanes, for metrics. */
  async counts(): Promise<Record<string, number>> {
    const total: Record<string, number> = {};
    for (const lane of this.lanes()) {
      const counts = await lane.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
      for (const [state, n] of Object.entries(counts)) total[state] = (total[state] ?? 0) + n;
    }
    return total;
  }

  get name(): string {
    return this.queueName;
  }

  async ping(): Promise<void> {
    await Promise.all(this.lanes().map((lane) => lane.queue.getJobCounts('waiting')));
  }

  /** Lets running jobs finish (bounded by the caller's shutdown deadline), then disconnects. */
  async close(): Promise<void> {
    await Promise.all(this.lanes().map((lane) => lane.worker?.close()));
    for (const lane of this.lanes()) lane.worker = null;
    this.consuming = false;
    this.workersReady = null;
    await Promise.all(this.lanes().map((lane) => lane.queue.close()));
    await Promise.all(this.redisClients.map((c) => c.quit().catch(() => c.disconnect())));
  }
}
