import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import {
  type LockoutScope,
  Metrics,
  type ModelCallReport,
  type ScheduleTickOutcome,
  type TokenCounts,
  type TurnOutcome,
  type WebhookDeliveryResult,
} from '#core/ports/metrics.port.js';
import { TallyHistogram } from './tally-histogram.js';

/** Per-state job counts of one queue, read at scrape time. */
export interface QueueCountsSource {
  name: string;
  counts(): Promise<Record<string, number>>;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5];
const SLOW_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const TOKEN_KINDS = ['input', 'output', 'cache_read', 'cache_creation'] as const;
const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;
const WEBHOOK_RESULTS = ['received', 'duplicate', 'queued', 'refused'] as const;
const MCP_STATES = ['connecting', 'connected', 'failed', 'stopped'] as const;
/**
 * prom-client's default gauges whose names end in `_total`, which Prometheus keeps for counters
 * (promtool: "non-counter metrics should not have _total suffix"). Left out: the same counts are
 * the sums of the per-type gauges beside them (`svc_nodejs_active_handles{type}` and the like).
 */
const DEFAULT_GAUGES_NAMED_LIKE_COUNTERS = [
  'svc_nodejs_active_handles_total',
  'svc_nodejs_active_requests_total',
  'svc_nodejs_active_resources_total',
];

/**
 * Metrics on prom-client, in a registry of their own (so two servers in one test process
 * do not collide). Label values that repeat on hot paths (WebSocket frames, event publish)
 * use pre-bound children, so recording allocates nothing.
 */
export class PromMetrics extends Metrics {
  readonly registry = new Registry();
  private readonly http: TallyHistogram<'method' | 'route' | 'status'>;
  private readonly wsClientsGauge: Gauge;
  private readonly wsFrames: Counter;
  private readonly publish: Histogram;
  private readonly modelCalls: Histogram<'provider' | 'outcome'>;
  private readonly modelErrors: Counter<'provider' | 'kind' | 'status'>;
  private readonly modelRetries: Counter<'provider' | 'kind'>;
  private readonly tokens: Counter<'provider' | 'kind'>;
  private readonly turns: Histogram<'outcome'>;
  private readonly cost: Counter;
  private readonly signIns: Counter<'reason'>;
  private readonly lockouts: Counter;
  private readonly watchLag: Histogram;
  private readonly gaps: Counter;
  private readonly jobsFailed: Counter<'job'>;
  private readonly jobsStalled: Counter;
  private readonly approvals: Counter<'outcome'>;
  private readonly turnsByKind: Counter<'kind' | 'outcome'>;
  private readonly runsStarted: Counter<'trigger'>;
  private readonly runsFinished: Counter<'trigger' | 'outcome'>;
  private readonly webhooks: Counter<'result'>;
  private readonly scheduleTicks: Counter<'outcome'>;
  private readonly mcpServerGauge: Gauge<'status'>;
  private readonly queues: QueueCountsSource[] = [];

  constructor(labels: { role: string; mode: string }) {
    super();
    const registers = [this.registry];
    this.registry.setDefaultLabels({ role: labels.role });
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
    for (const name of DEFAULT_GAUGES_NAMED_LIKE_COUNTERS) this.registry.removeSingleMetric(name);
    new Gauge({
      name: 'svc_info',
      help: 'Constant 1, labelled with how this process runs',
      labelNames: ['mode'],
      registers,
    }).set({ mode: labels.mode }, 1);
    this.http = new TallyHistogram({
      name: 'svc_http_request_duration_seconds',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.wsClientsGauge = new Gauge({ name: 'svc_ws_clients', help: 'Open WebSocket connections', registers });
    this.wsFrames = new Counter({
      name: 'svc_ws_frames_sent_total',
      help: 'Frames sent to WebSocket clients (rate() gives frames per second)',
      registers,
    });
    this.publish = new TallyHistogram({
      name: 'svc_event_publish_duration_seconds',
      help: 'Event bus publish latency',
      buckets: FAST_BUCKETS,
      registers,
    });
    this.modelCalls = new Histogram({
      name: 'svc_model_call_duration_seconds',
      help: 'Model calls by provider and outcome (ok or error)',
      labelNames: ['provider', 'outcome'],
      buckets: SLOW_BUCKETS,
      registers,
    });
    this.modelErrors = new Counter({
      name: 'svc_model_call_errors_total',
      help: 'Failed model calls by provider, error kind and HTTP status',
      labelNames: ['provider', 'kind', 'status'],
      registers,
    });
    this.modelRetries = new Counter({
      name: 'svc_model_call_retries_total',
      help: 'Model calls retried by the turn loop, by provider and the error kind of the failed attempt',
      labelNames: ['provider', 'kind'],
      registers,
    });
    this.tokens = new Counter({
      name: 'svc_model_tokens_total',
      help: 'Tokens reported by model calls',
      labelNames: ['provider', 'kind'],
      registers,
    });
    this.turns = new Histogram({
      name: 'svc_agent_turn_duration_seconds',
      help: 'Assistant turns by outcome',
      labelNames: ['outcome'],
      buckets: SLOW_BUCKETS,
      registers,
    });
    this.cost = new Counter({
      name: 'svc_agent_cost_usd_total',
      help: 'Estimated model cost of finished turns, in USD (known prices only)',
      registers,
    });
    this.signIns = new Counter({
      name: 'svc_auth_sign_in_failures_total',
      help: 'Refused sign-in attempts (login and WebSocket auth)',
      labelNames: ['reason'],
      registers,
    });
    this.lockouts = new Counter({
      name: 'svc_auth_lockouts_total',
      help: 'Sign-in lockouts met, counted once per address and lock; scope: ip (that address) or global (everyone)',
      labelNames: ['scope'],
      registers,
    });
    this.watchLag = new Histogram({
      name: 'svc_file_watch_lag_seconds',
      help: 'From the first file change of a batch to its event being published',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    });
    this.gaps = new Counter({
      name: 'svc_event_replay_gaps_total',
      help: 'Resuming clients told stream:gap (the event log no longer reached back)',
      registers,
    });
    this.jobsFailed = new Counter({
      name: 'svc_jobs_failed_total',
      help: 'Failed job attempts by job name',
      labelNames: ['job'],
      registers,
    });
    this.jobsStalled = new Counter({
      name: 'svc_jobs_stalled_total',
      help: 'Jobs found stalled (their worker stopped renewing the lock)',
      registers,
    });
    this.approvals = new Counter({
      name: 'svc_tool_approvals_total',
      help: 'Tool calls held for approval, by how they were decided (approved, rejected, timeout, stopped)',
      labelNames: ['outcome'],
      registers,
    });
    this.turnsByKind = new Counter({
      name: 'svc_agent_turns_total',
      help: 'Finished assistant turns by kind (chat, app-chat, app-run, team-member) and outcome',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.runsStarted = new Counter({
      name: 'svc_app_runs_started_total',
      help: "Digital humans' runs started, by trigger type (schedule, webhook, file, manual, …)",
      labelNames: ['trigger'],
      registers,
    });
    this.runsFinished = new Counter({
      name: 'svc_app_runs_finished_total',
      help: "Digital humans' runs ended, by trigger type and outcome (completed, failed, interrupted)",
      labelNames: ['trigger', 'outcome'],
      registers,
    });
    this.webhooks = new Counter({
      name: 'svc_webhook_deliveries_total',
      help: 'Webhook deliveries by result: received (accepted), duplicate (a repeat, no run), queued (waiting for the run in progress), refused (queue full, 429)',
      labelNames: ['result'],
      registers,
    });
    this.scheduleTicks = new Counter({
      name: 'svc_schedule_ticks_total',
      help: 'Schedule occurrences by outcome: fired (a run asked for) or skipped (running, paused, too soon)',
      labelNames: ['outcome'],
      registers,
    });
    this.mcpServerGauge = new Gauge({
      name: 'svc_mcp_servers',
      help: "This process's MCP server connections by status (connecting, connected, failed, stopped)",
      labelNames: ['status'],
      registers,
    });
    const queues = this.queues;
    new Gauge({
      name: 'svc_queue_jobs',
      help: 'Jobs per queue and state (waiting, active, delayed, failed, completed), read at scrape',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        this.reset();
        for (const queue of queues) {
          const counts = await queue.counts().catch(() => null);
          if (!counts) continue;
          for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
        }
      },
    });
    // Pre-create the series people alert on, so they read 0 rather than being absent.
    for (const reason of ['invalid', 'locked'] as const) this.signIns.inc({ reason }, 0);
    for (const scope of ['ip', 'global'] as const) this.lockouts.inc({ scope }, 0);
    this.gaps.inc(0);
    this.jobsStalled.inc(0);
    for (const outcome of ['approved', 'rejected', 'timeout', 'stopped']) this.approvals.inc({ outcome }, 0);
    for (const result of WEBHOOK_RESULTS) this.webhooks.inc({ result }, 0);
    for (const outcome of ['fired', 'skipped'] as const) this.scheduleTicks.inc({ outcome }, 0);
    for (const status of MCP_STATES) this.mcpServerGauge.set({ status }, 0);
  }

  /** Adds a queue whose counts are read at each scrape. */
  watchQueue(source: QueueCountsSource): void {
    this.queues.push(source);
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    // Keyed by text a method and a status cannot hold a space of, the route last.
    this.http.observeKeyed(`${method} ${status} ${route}`, () => ({ method, route, status: String(status) }), seconds);
  }
  wsClients(count: number): void {
    this.wsClientsGauge.set(count);
  }
  wsFramesSent(count: number): void {
    this.wsFrames.inc(count);
  }
  eventPublished(seconds: number): void {
    this.publish.observe(seconds);
  }
  modelCall(report: ModelCallReport): void {
    this.modelCalls.observe({ provider: report.provider, outcome: report.errorKind ? 'error' : 'ok' }, report.seconds);
    if (report.errorKind) {
      this.modelErrors.inc({
        provider: report.provider,
        kind: report.errorKind,
        status: report.status == null ? 'none' : String(report.status),
      });
    }
  }
  modelTokens(provider: string, usage: TokenCounts): void {
    const values = [usage.inputTokens, usage.outputTokens, usage.cacheReadTokens, usage.cacheCreationTokens];
    TOKEN_KINDS.forEach((kind, i) => {
      if (values[i]! > 0) this.tokens.inc({ provider, kind }, values[i]!);
    });
  }
  modelRetry(provider: string, errorKind: string): void {
    this.modelRetries.inc({ provider, kind: errorKind });
  }
  turnEnded(outcome: TurnOutcome, seconds: number, costUsd: number): void {
    this.turns.observe({ outcome }, seconds);
    if (costUsd > 0) this.cost.inc(costUsd);
  }
  signInFailed(reason: 'invalid' | 'locked'): void {
    this.signIns.inc({ reason });
  }
  lockout(scope: LockoutScope): void {
    this.lockouts.inc({ scope });
  }
  fileWatchLag(seconds: number): void {
    this.watchLag.observe(seconds);
  }
  replayGap(): void {
    this.gaps.inc();
  }
  jobFailed(name: string): void {
    this.jobsFailed.inc({ job: name });
  }
  jobStalled(): void {
    this.jobsStalled.inc();
  }
  toolApproval(outcome: string): void {
    this.approvals.inc({ outcome });
  }
  turnFinished(kind: string, outcome: TurnOutcome): void {
    this.turnsByKind.inc({ kind, outcome });
  }
  runStarted(trigger: string): void {
    this.runsStarted.inc({ trigger });
  }
  runFinished(trigger: string, outcome: TurnOutcome): void {
    this.runsFinished.inc({ trigger, outcome });
  }
  webhookDelivery(result: WebhookDeliveryResult): void {
    this.webhooks.inc({ result });
  }
  scheduleTick(outcome: ScheduleTickOutcome): void {
    this.scheduleTicks.inc({ outcome });
  }
  mcpServers(countsByStatus: Readonly<Record<string, number>>): void {
    for (const status of new Set([...MCP_STATES, ...Object.keys(countsByStatus)])) {
      this.mcpServerGauge.set({ status }, countsByStatus[status] ?? 0);
    }
  }
}
