import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { REAP_EVERY_MS, TurnReaper } from '#core/agent/turn-reaper.js';
import { TurnRunner } from '#core/agent/turn-runner.js';
import { AppRunsService } from '#core/apps/agent/app-runs.service.js';
import { MemoryConsolidationService } from '#core/memory/memory-consolidation.service.js';
import { INGEST_ATTEMPTS, KnowledgeService } from '#core/knowledge/knowledge.service.js';
import { JobQueue } from '#core/ports/job-queue.port.js';
import { SystemService } from '#core/system/system.service.js';
import { TeamTriggers } from '#core/teams/team-triggers.js';
import { TeamWork } from '#core/teams/team-work.js';
import { TriggerScheduler } from '#core/triggers/trigger-scheduler.js';
import { TriggersService } from '#core/triggers/triggers.service.js';
import { ChannelsService } from '#core/channels/channels.service.js';

export const HEARTBEAT_EVERY_MS = 30_000;

/**
 * Thin processors: each job name maps to one core service call. Registered only in
 * processes that consume jobs (SVC_ROLE all or worker).
 */
@Injectable()
export class JobProcessors {
  constructor(
    private readonly queue: JobQueue,
    private readonly system: SystemService,
    private readonly turns: TurnRunner,
    private readonly reaper: TurnReaper,
    private readonly memory: MemoryConsolidationService,
    private readonly runs: AppRunsService,
    private readonly triggers: TriggersService,
    private readonly scheduler: TriggerScheduler,
    private readonly knowledge: KnowledgeService,
    private readonly teams: TeamWork,
    private readonly teamTriggers: TeamTriggers,
    private readonly channels: ChannelsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async startConsuming(): Promise<void> {
    this.triggers.configure({
      backoffMs: this.config.triggerBackoffMs,
      pauseAfter: this.config.triggerPauseAfter,
      claimLeaseMs: this.config.triggerClaimLeaseMs,
      minIntervalMs: this.config.scheduleMinIntervalMs,
      webhookQueueMax: this.config.webhookQueueMax,
    });
    this.queue.process('system.heartbeat', () => this.system.recordHeartbeat());
    this.queue.process('agent.turn', (data) => this.turns.run(data.turnId, data.kind));
    this.queue.process('agent.reap', async () => {
      await this.reaper.reap();
    });
    this.queue.process('memory.consolidate', async (data, ctx) => {
      await this.memory.run(data, ctx.id);
    });
    this.queue.process('app.escalation-expire', (data) =>
      this.runs.expireEscalation(data.appId, data.entryId, data.runId),
    );
    this.queue.process('trigger.schedule', (data) => this.triggers.fireSchedule(data));
    this.queue.process('trigger.webhook', (data) => this.triggers.fireWebhook(data));
    this.queue.process('knowledge.ingest', (data, ctx) =>
      this.knowledge.ingestSource(data, ctx.attempt >= INGEST_ATTEMPTS),
    );
    this.queue.process('team.run-deadline', (data) => this.teams.deadlineReached(data));
    this.queue.process('team.trigger-schedule', (data) => this.teamTriggers.fireSchedule(data));
    this.queue.process('channel.inbound', (data) => this.channels.dispatch(data));
    this.queue.process('channel.reply', (data) => this.channels.sendReply(data));
    // Independent of one another (each a few round trips to the job store or the database):
    // together, so the start waits for the slowest rather than for their sum.
    await Promise.all([
      this.queue.startConsuming(),
      this.queue.repeat('system.heartbeat', 'system.heartbeat', {}, { everyMs: HEARTBEAT_EVERY_MS }),
      this.queue.repeat('agent.reap', 'agent.reap', {}, { everyMs: REAP_EVERY_MS }),
      // Open team runs' time limits, should the job store have lost their delayed jobs.
      this.teams.armOpenDeadlines(),
      // Batches left running by a process that died mid-ingestion get their jobs again.
      this.knowledge.recoverBatches(),
    ]);
    // Delayed schedule jobs come back from the Postgres rows if the job store lost them, and
    // occurrences claimed by a replica that died before their run are taken over: now, in the
    // background (its statements after the start's, on an embedded database that runs one at a
    // time), and then every triggerReconcileMs.
    this.scheduler.startReconciling(this.config.triggerReconcileMs);
  }
}
