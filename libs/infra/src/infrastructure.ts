import { Redis } from 'ioredis';
import type { DataSource } from 'typeorm';
import { JOB_NAMES, type JobMap, LONG_JOB_NAMES } from '#contracts/jobs.js';
import type { AppConfig } from '#core/config/app-config.js';
import type { ConnectionRegistry } from '#core/ports/connection-registry.port.js';
import type { EventBus } from '#core/ports/event-bus.port.js';
import type { EventLog } from '#core/ports/event-log.port.js';
import type { LockoutStore } from '#core/ports/lockout-store.port.js';
import type { Replica } from '#core/ports/replica.port.js';
import { type ReadinessReport, ReadinessProbe } from '#core/ports/readiness.port.js';
import type { SettingsRepository } from '#core/ports/settings.repository.port.js';
import { MemoryLockoutStore } from './auth/memory-lockout.store.js';
import { EmbeddedBackups } from './backup/embedded-backup.js';
import { schemaProblem, schemaStatus } from './database/schema-status.js';
import { RedisLockoutStore } from './auth/redis-lockout.store.js';
import { DataFolderLock } from './database/data-folder-lock.js';
import { createDataSource, KEPT_CONNECTIONS, migrateUnderLock, warmConnections } from './database/database.js';
import { type EmbeddedStart, startEmbeddedDatabase } from './database/embedded-start.js';
import { TypeormSettingsRepository } from './database/setting.repository.js';
import { InProcessEventBus } from './events/in-process-event-bus.js';
import { MemoryEventLog } from './events/memory-event-log.js';
import { RedisEventLog } from './events/redis-event-log.js';
import { RedisEventBus } from './events/redis-event-bus.js';
import type { AppLogger } from './logging/logger.js';
import { LogThrottle } from './logging/log-throttle.js';
import { MeteredEventBus } from './metrics/metered-event-bus.js';
import { PromMetrics } from './metrics/prom-metrics.js';
import { LocalConnectionRegistry, RedisConnectionRegistry } from './presence/connection-registries.js';
import { BullJobQueue, EMBEDDED_QUEUE_POLL_MS } from './queue/bullmq-job-queue.js';
import { startTracing } from './tracing/tracing.js';
import { type Deployment, deploymentOf, replicaOf } from './deployment.js';

/**
 * Builds every adapter from the validated configuration, in dependency order, and tears
 * them down in reverse, by the deployment mode (deployment.ts) and for this process's one
 * Replica; InfraModule binds what it built to the ports.
 */
export class Infrastructure {
  /** This process: its one replica id and mode. */
  readonly replica: Replica;
  readonly deployment: Deployment;
  private readonly closers: Array<() => Promise<void> | void> = [];
  dataSource: DataSource;
  eventBus: EventBus;
  eventLog: EventLog;
  jobQueue: BullJobQueue<JobMap>;
  lockoutStore: LockoutStore;
  connectionRegistry: ConnectionRegistry;
  settings: SettingsRepository;
  readiness: ReadinessProbe;
  /** Backups taken by this process (embedded database only). */
  backups: EmbeddedBackups;
  /** Prometheus metrics of this process (one registry per server). */
  readonly metrics: PromMetrics;
  private redis: Redis | null = null;

  private constructor(
    readonly config: AppConfig,
    private readonly logger: AppLogger,
    private readonly embeddedStart: EmbeddedStart | null,
  ) {
    this.deployment = deploymentOf(config);
    this.replica = replicaOf(config);
    this.metrics = new PromMetrics({ role: config.role, mode: this.deployment.mode });
  }

  /**
   * `embedded`: the embedded database (and data folder lock) the entry already began with
   * startEmbeddedDatabase, so it opens while the server loads; started here when absent.
   */
  static async start(config: AppConfig, logger: AppLogger, embedded?: EmbeddedStart): Promise<Infrastructure> {
    const infra = new Infrastructure(config, logger, embedded ?? null);
    try {
      await infra.startAll();
    } catch (err) {
      await infra.stop();
      throw err;
    }
    return infra;
  }

  get mode(): Deployment['mode'] {
    return this.deployment.mode;
  }

  private async startAll(): Promise<void> {
    const { config, logger } = this;
    // First in, so the last closed: spans of the shutdown are flushed too.
    const stopTracing = await startTracing({
      endpoint: config.tracingEndpoint,
      version: config.version,
      role: config.role,
      logger,
    });
    if (stopTracing) this.closers.push(stopTracing);
    let databaseUrl = config.databaseUrl;
    const { mode, redis: usesRedis } = this.deployment;
    this.backups = new EmbeddedBackups(null, config.dataDir, config.version);
    if (mode === 'embedded' || databaseUrl === null) {
      // Takes the data folder lock first (throws when another process holds it).
      const start = this.embeddedStart ?? startEmbeddedDatabase(config, logger);
      this.closers.push(() => start.lock.release());
      this.closers.push(() => start.database.then((db) => db.stop()).catch(() => undefined));
      const embedded = await start.database;
      this.backups = new EmbeddedBackups(embedded, config.dataDir, config.version);
      databaseUrl = embedded.url;
      logger.info('embedded database started', { ms: Date.now() - start.startedAt });
    } else if (!usesRedis) {
      const lock = DataFolderLock.acquire(config.dataDir);
      this.closers.push(() => lock.release());
    }

    this.dataSource = createDataSource(databaseUrl);
    await (config.databaseUrl !== null && mode !== 'embedded'
      ? reachOrExplain('DATABASE_URL', config.databaseUrl, this.dataSource.initialize())
      : this.dataSource.initialize());
    this.closers.push(() => this.dataSource.destroy().then(() => undefined));
    if (config.migrations === 'skip') {
      logger.info('migrations skipped (SVC_MIGRATIONS=skip); the schema must already be current');
    } else {
      const started = Date.now();
      const applied = await migrateUnderLock(this.dataSource);
      if (applied.length > 0) logger.info('migrations applied', { migrations: applied, ms: Date.now() - started });
      else logger.info('database schema is current; no migrations to apply');
    }
    // Never ready on a schema this code cannot serve (SVC_MIGRATIONS=skip before the migrations
    // Job ran, or a newer release's incompatible migrations): said at start, and /readyz keeps checking.
    this.noteSchema(schemaProblem(await schemaStatus(this.dataSource)));
    this.settings = new TypeormSettingsRepository(this.dataSource);

    if (usesRedis && config.redisUrl !== null) {
      const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3 });
      const redisErrors = new LogThrottle((f) => logger.warn('redis error', f));
      let lastRedisError: Error | null = null;
      redis.on('error', (err) => {
        lastRedisError = err;
        redisErrors.note({ error: err.message });
      });
      this.redis = redis;
      this.closers.push(() =>
        redis.quit().then(
          () => undefined,
          () => redis.disconnect(),
        ),
      );
      await reachOrExplain(
        'REDIS_URL',
        config.redisUrl,
        redis.ping().catch((err: unknown) => Promise.reject(lastRedisError ?? err)),
      );
      const bus = new RedisEventBus(config.redisUrl, config.redisPrefix, logger);
      this.closers.push(() => bus.close());
      await bus.whenReady();
      this.eventBus = new MeteredEventBus(bus, this.metrics);
      this.eventLog = new RedisEventLog(redis, config.redisPrefix);
      this.lockoutStore = new RedisLockoutStore(redis, config.redisPrefix);
      const registry = new RedisConnectionRegistry(redis, config.redisPrefix, this.replica.id);
      this.closers.push(() => registry.close());
      this.connectionRegistry = registry;
    } else {
      this.eventBus = new MeteredEventBus(new InProcessEventBus(logger), this.metrics);
      this.eventLog = new MemoryEventLog();
      this.lockoutStore = new MemoryLockoutStore();
      this.connectionRegistry = new LocalConnectionRegistry();
    }

    this.jobQueue = new BullJobQueue<JobMap>({
      backend:
        usesRedis && config.redisUrl !== null
          ? { kind: 'redis', url: config.redisUrl, prefix: config.redisPrefix }
          : // Embedded: NOTIFY does not cross the socket server; the queue wakes its own workers
            // when it queues a job, and an idle worker looks again every EMBEDDED_QUEUE_POLL_MS.
            { kind: 'postgres', url: databaseUrl, pollMs: mode === 'embedded' ? EMBEDDED_QUEUE_POLL_MS : undefined },
      declaredNames: JOB_NAMES,
      concurrency: config.queueConcurrency,
      quickLane: {
        names: JOB_NAMES.filter((name) => !LONG_JOB_NAMES.includes(name)),
        concurrency: config.queueQuickConcurrency,
      },
      logger,
      metrics: this.metrics,
    });
    this.metrics.watchQueue({ name: this.jobQueue.name, counts: () => this.jobQueue.counts() });
    this.closers.push(() => this.jobQueue.close());
    await this.jobQueue.ping();
    // A consuming process's workers open their connections while the server's modules are created.
    if (config.role !== 'api') this.jobQueue.prepareConsuming();

    this.readiness = new InfraReadiness(this);
  }

  /**
   * The database pool's kept connections opened and warmed (warmConnections), for the start to
   * call once it listens: on a Postgres server only (the embedded database is one backend).
   */
  async warmDatabase(): Promise<void> {
    if (this.mode === 'embedded') return;
    const started = Date.now();
    const failed = await warmConnections(this.dataSource);
    this.logger.debug('database connections warmed', {
      connections: KEPT_CONNECTIONS,
      ms: Date.now() - started,
      ...(failed.length > 0 ? { failed } : {}),
    });
  }

  /** The shared Redis connection, when REDIS_URL is set (leases, counters). */
  get redisClient(): Redis | null {
    return this.redis;
  }

  /** What was last found wrong with the schema (null: nothing); a change is logged once. */
  private schemaIssue: string | null | undefined = undefined;

  private noteSchema(problem: string | null): void {
    if (problem === this.schemaIssue) return;
    const before = this.schemaIssue;
    this.schemaIssue = problem;
    if (problem !== null) this.logger.error(`not ready: ${problem}`);
    else if (before !== undefined) this.logger.info('the database schema now matches this version; ready');
  }

  /** Pings each dependency this process uses. */
  async checkReadiness(): Promise<ReadinessReport> {
    const checks: ReadinessReport['checks'] = {};
    const run = async (name: string, fn: () => Promise<unknown>): Promise<void> => {
      try {
        await withTimeout(fn(), 2_000);
        checks[name] = { ok: true };
      } catch (err) {
        checks[name] = { ok: false, error: (err as Error).message };
      }
    };
    await Promise.all([
      // A write, not just SELECT 1: a full or read-only volume answers reads but refuses writes.
      run('database', () =>
        this.dataSource.query(
          `INSERT INTO "app_setting" ("key", "value", "updated_at") VALUES ($1, to_jsonb(now()), now())
           ON CONFLICT ("key") DO UPDATE SET "value" = EXCLUDED."value", "updated_at" = now()`,
          [READINESS_PROBE_KEY],
        ),
      ),
      this.redis ? run('redis', () => this.redis!.ping()) : Promise.resolve(),
      run('schema', async () => {
        const problem = schemaProblem(await schemaStatus(this.dataSource));
        this.noteSchema(problem);
        if (problem !== null) throw new Error(problem);
      }),
      run('queue', async () => {
        if (this.config.role !== 'api' && !this.jobQueue.isConsuming()) throw new Error('queue is not consuming');
        await this.jobQueue.ping();
      }),
    ]);
    return { ready: Object.values(checks).every((c) => c.ok), checks };
  }

  /** Stops everything that was started, newest first; never throws. */
  async stop(): Promise<void> {
    while (this.closers.length > 0) {
      const close = this.closers.pop()!;
      try {
        await close();
      } catch (err) {
        this.logger.warn('shutdown step failed', { error: (err as Error).message });
      }
    }
  }
}

/** The settings row the readiness probe rewrites (never read by the service). */
const READINESS_PROBE_KEY = 'svc.readiness-probe';

class InfraReadiness extends ReadinessProbe {
  constructor(private readonly infra: Infrastructure) {
    super();
  }
  check(): Promise<ReadinessReport> {
    return this.infra.checkReadiness();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Start-up's first round trip to an external service: a failure says which variable names it and
 * the host it points at (never the credentials in the URL), e.g. "DATABASE_URL: cannot reach
 * db.internal:5432 (connect ECONNREFUSED ...)".
 */
export async function reachOrExplain<T>(variable: string, url: string, attempt: Promise<T>): Promise<T> {
  try {
    return await attempt;
  } catch (err) {
    // The cause's text is in the message; attached as `cause` it would be printed twice at start-up.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`${variable}: cannot reach ${hostOfUrl(url)} (${(err as Error)?.message ?? String(err)})`);
  }
}

/** host:port of a service URL, without user or password. */
export function hostOfUrl(url: string): string {
  try {
    const u = new URL(url);
    const port =
      u.port ||
      ({ 'postgres:': '5432', 'postgresql:': '5432', 'redis:': '6379', 'rediss:': '6379' } as Record<string, string>)[
        u.protocol
      ] ||
      '';
    return `${u.hostname}${port ? `:${port}` : ''}`;
  } catch {
    return 'an unreadable URL';
  }
}
