import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { JobMap } from '#contracts/jobs.js';
import type { TeamTriggerDto, TeamTriggerType } from '#contracts/teams.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { isUuid } from '../conversations/conversation-rules.js';
import { DomainError } from '../errors/domain-error.js';
import { isTimeZone, nextCronRun, parseDuration, type ScheduleConfig } from '../kernel/app-spec/schedule-rules.js';
import { teamScheduleJobId } from '../kernel/job-ids.js';
import { Clock } from '../ports/clock.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { TeamRepository, type TeamTriggerRecord } from '../ports/team.repository.port.js';
import { nextOccurrence } from '../triggers/schedule-timing.js';
import { TriggerScheduler } from '../triggers/trigger-scheduler.js';
import { normalizeHookPath } from '../triggers/webhook-rules.js';
import { type OwnedWebhook, type OwnedWebhookDelivery, WebhookOwners } from '../triggers/webhook-owners.js';
import { TeamTexts } from './team-rules.js';
import { TeamsService } from './teams.service.js';

const TYPES: readonly TeamTriggerType[] = ['schedule', 'webhook'];
const WEBHOOK_PATH = /^[a-z0-9._~-]+(?:\/[a-z0-9._~-]+)*$/;
const MASK = '********';
/** How much of a webhook's body the lead is given. */
const BODY_NOTE_CHARS = 4000;

/**
 * A team's triggers (docs/api/teams.md, "Triggers"): sources as a digital human's subscriptions
 * (a schedule, a webhook), each firing opening a run epoch with its `triggerType`. The trigger
 * machinery does the exactly-once part as for digital humans: a schedule's occurrence is a
 * delayed job with a deterministic id, claimed by moving the trigger's `next_ms` on (one replica
 * wins), and re-armed by every reconcile pass; a webhook goes through `POST /hooks/<path>` (the
 * signature, the de-duplication across replicas, the queued delivery) via the triggers
 * context's `WebhookOwners` port, which this context registers with.
 */
@Injectable()
export class TeamTriggers implements OnModuleInit {
  private readonly logger = new Logger('Teams');
  private readonly minIntervalMs: number;

  constructor(
    private readonly teams: TeamRepository,
    private readonly service: TeamsService,
    private readonly queue: JobQueue,
    private readonly clock: Clock,
    private readonly owners: WebhookOwners,
    private readonly scheduler: TriggerScheduler,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.minIntervalMs = config.scheduleMinIntervalMs;
  }

  onModuleInit(): void {
    this.owners.register('team', {
      find: (path) => this.findWebhook(path),
      fire: (delivery) => this.fireWebhook(delivery),
    });
    // Each reconcile pass (at a worker's start, then periodically) re-arms the schedules' jobs.
    this.scheduler.alsoOnReconcile(() => this.armSchedules());
  }

  async list(teamId: string): Promise<TeamTriggerDto[]> {
    await this.service.get(teamId);
    return (await this.teams.triggers(teamId)).map(toDto);
  }

  async create(teamId: string, source: unknown): Promise<TeamTriggerDto> {
    const team = await this.service.get(teamId);
    const { type, config } = this.parseSource(source);
    const now = this.clock.now();
    if (type === 'webhook' && (await this.findWebhook(config.path as string)))
      throw DomainError.conflict(`A team's webhook already listens at /hooks/${config.path as string}`);
    const trigger: TeamTriggerRecord = {
      id: randomUUID(),
      teamId: team.id,
      type,
      config,
      nextMs: type === 'schedule' ? this.nextAfter(config, now, now) : null,
      createdAt: new Date(now).toISOString(),
    };
    await this.teams.addTrigger(trigger);
    if (trigger.type === 'schedule') await this.arm(trigger);
    return toDto(trigger);
  }

  async remove(teamId: string, triggerId: string): Promise<void> {
    await this.service.get(teamId);
    if (!isUuid(triggerId) || !(await this.teams.deleteTrigger(teamId, triggerId.toLowerCase())))
      throw DomainError.notFound(TeamTexts.triggerNotFound);
  }

  private parseSource(source: unknown): { type: TeamTriggerType; config: Record<string, unknown> } {
    const raw = (source ?? {}) as { type?: unknown; config?: unknown };
    if (typeof raw.type !== 'string' || !(TYPES as readonly string[]).includes(raw.type))
      throw DomainError.invalid(`source.type must be one of ${TYPES.join(', ')}`);
    if (typeof raw.config !== 'object' || raw.config === null || Array.isArray(raw.config))
      throw DomainError.invalid('source.config must be an object');
    const config = { ...(raw.config as Record<string, unknown>) };
    if (raw.type === 'schedule') {
      const hasEvery = config.every !== undefined && config.every !== null;
      if (!hasEvery && (config.cron === undefined || config.cron === null))
        throw DomainError.invalid('source.config needs every or cron for a schedule');
      if (config.timezone !== undefined && config.timezone !== null && !isTimeZone(config.timezone))
        throw DomainError.invalid('source.config.timezone must be an IANA time zone such as Europe/Berlin');
      if (hasEvery) {
        if (parseDuration(config.every) === null)
          throw DomainError.invalid('source.config.every must be a whole number with a unit s, m, h or d, like 30m');
        delete config.cron;
      } else {
        const next =
          typeof config.cron === 'string'
            ? nextCronRun(config.cron, this.clock.now(), isTimeZone(config.timezone) ? config.timezone : undefined)
            : { error: 'must be a string' };
        if ('error' in next) throw DomainError.invalid(`source.config.cron ${next.error}`);
      }
      return { type: 'schedule', config };
    }
    const path = typeof config.path === 'string' ? normalizeHookPath(config.path.trim()) : '';
    if (!WEBHOOK_PATH.test(path) || path.split('/').some((s) => s === '.' || s === '..'))
      throw DomainError.invalid(
        'source.config.path must be segments of lower case letters, digits and - _ . ~ separated by /, like team/build',
      );
    if (config.secret !== undefined && config.secret !== null && (typeof config.secret !== 'string' || !config.secret))
      throw DomainError.invalid('source.config.secret must be a non-empty string');
    return { type: 'webhook', config: { ...config, path } };
  }

  // ── schedules ─────────────────────────────────────────────────────────────────────────

  /** The next occurrence after `afterMs` (`every` counts from the trigger's creation). */
  private nextAfter(config: Record<string, unknown>, createdMs: number, afterMs: number): number | null {
    return nextOccurrence(config as ScheduleConfig, createdMs, afterMs)?.ms ?? null;
  }

  /** The delayed job of the trigger's next occurrence (deterministic id: armed twice, queued once). */
  private async arm(trigger: TeamTriggerRecord): Promise<void> {
    if (trigger.nextMs === null) return;
    await this.queue.add(
      'team.trigger-schedule',
      { teamId: trigger.teamId, triggerId: trigger.id, scheduledMs: trigger.nextMs },
      {
        jobId: teamScheduleJobId(trigger.id, trigger.nextMs),
        delayMs: Math.max(0, trigger.nextMs - this.clock.now()),
      },
    );
  }

  /** Every schedule's job again (a job store restarted empty lost them); each reconcile pass. */
  async armSchedules(): Promise<void> {
    for (const trigger of await this.teams.triggersOfType('schedule')) {
      await this.arm(trigger).catch((err: Error) => this.logger.warn(`arming a team schedule: ${err.message}`));
    }
  }

  /**
   * The job of one occurrence: the replica that moves the trigger on from this occurrence fires
   * it (a run epoch, unless one is running: then this occurrence is skipped) and arms the next.
   */
  async fireSchedule(job: JobMap['team.trigger-schedule']): Promise<void> {
    const trigger = await this.teams.findTrigger(job.triggerId);
    if (!trigger || trigger.nextMs !== job.scheduledMs) return; // fired already, or gone
    const now = this.clock.now();
    const notBefore = Math.max(now, job.scheduledMs, job.scheduledMs + this.minIntervalMs - 1);
    const next = this.nextAfter(trigger.config, Date.parse(trigger.createdAt), notBefore);
    if (!(await this.teams.advanceTrigger(trigger.id, job.scheduledMs, next))) return;
    await this.arm({ ...trigger, nextMs: next });
    const at = new Date(job.scheduledMs).toISOString();
    await this.open(trigger.teamId, {
      triggerType: 'schedule',
      title: `Scheduled run ${at}`,
      note: `This run was started by the team's schedule (${describe(trigger.config)}), due at ${at}.`,
    });
  }

  // ── webhooks ──────────────────────────────────────────────────────────────────────────

  private async findWebhook(path: string): Promise<OwnedWebhook | null> {
    for (const trigger of await this.teams.triggersOfType('webhook')) {
      if (trigger.config.path === path) return { ownerId: trigger.teamId, subscriptionId: trigger.id, config: trigger.config };
    }
    return null;
  }

  /** An accepted delivery (de-duplicated by the triggers context): a run epoch. */
  private async fireWebhook(delivery: OwnedWebhookDelivery): Promise<void> {
    const trigger = await this.teams.findTrigger(delivery.subscriptionId);
    if (!trigger || trigger.teamId !== delivery.ownerId) return;
    const body = JSON.stringify(delivery.body) ?? 'null';
    await this.open(trigger.teamId, {
      triggerType: 'webhook',
      title: `Webhook /hooks/${delivery.path}${delivery.deliveryId ? ` (${delivery.deliveryId})` : ''}`,
      note:
        `This run was started by a webhook delivery to /hooks/${delivery.path}. Its body:\n` +
        (body.length > BODY_NOTE_CHARS ? `${body.slice(0, BODY_NOTE_CHARS)}…` : body),
    });
  }

  /** A run epoch for a fired trigger; a run already running takes this firing as skipped. */
  private async open(teamId: string, fired: Parameters<TeamsService['run']>[1]): Promise<void> {
    try {
      await this.service.run(teamId, fired);
    } catch (err) {
      this.logger.warn(`a team trigger fired but no run was opened: ${(err as Error).message}`, { teamId });
    }
  }
}

function describe(config: Record<string, unknown>): string {
  return typeof config.every === 'string' ? `every ${config.every}` : `cron ${String(config.cron)}`;
}

function toDto(t: TeamTriggerRecord): TeamTriggerDto {
  const config = { ...t.config };
  if (typeof config.secret === 'string') config.secret = MASK;
  return {
    id: t.id,
    teamId: t.teamId,
    source: { type: t.type, config },
    nextRunAt: t.nextMs === null ? null : new Date(t.nextMs).toISOString(),
    createdAt: t.createdAt,
  };
}
