import { createHash, randomUUID } from 'node:crypto';
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
import { FileOwners, type OwnedFileBurst, type OwnedFileSubscription } from '../triggers/file-owners.js';
import { TeamTexts } from './team-rules.js';
import { TeamsService } from './teams.service.js';

const TYPES: readonly TeamTriggerType[] = ['schedule', 'webhook', 'file'];
/** How many changed paths the lead is told by name (the rest are counted). */
const PATHS_NOTE_MAX = 50;
const WEBHOOK_PATH = /^[a-z0-9._~-]+(?:\/[a-z0-9._~-]+)*$/;
const MASK = '********';
/** How much of a webhook's body the lead is given. */
const BODY_NOTE_CHARS = 4000;

/**
 * A team's triggers (docs/api/teams.md, "Triggers"): sources as a digital human's subscriptions
 * (a schedule, a webhook, file changes in the team's space), each firing opening a run epoch with its `triggerType`. The trigger
 * machinery does the exactly-once part as for digital humans: a schedule's occurrence is a
 * delayed job with a deterministic id, claimed by moving the trigger's `next_ms` on (one replica
 * wins), and re-armed by every reconcile pass; a webhook goes through `POST /hooks/<path>` (the
 * signature, the de-duplication across replicas, the queued delivery) via the triggers
 * context's `WebhookOwners` port, which this context registers with; file changes are matched
 * by the file-watch lease holder and each burst claimed once, via its `FileOwners` port.
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
    private readonly files: FileOwners,
  ) {
    this.minIntervalMs = config.scheduleMinIntervalMs;
  }

  onModuleInit(): void {
    this.owners.register('team', {
      find: (path) => this.findWebhook(path),
      fire: (delivery) => this.fireWebhook(delivery),
    });
    this.files.register('team', {
      subscriptions: (spaceId) => this.fileSubscriptions(spaceId),
      fire: (burst) => this.fireFiles(burst),
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
    if (raw.type === 'file') {
      for (const key of ['pattern', 'path'] as const) {
        if (config[key] !== undefined && config[key] !== null && typeof config[key] !== 'string')
          throw DomainError.invalid(`source.config.${key} must be a string`);
      }
      return { type: 'file', config };
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
    if (!trigger) return; // gone
    // The occurrence's run has an id of its own: opening it twice (a retried job) opens it once.
    const epochId = occurrenceEpochId(trigger.id, job.scheduledMs);
    if (trigger.nextMs === job.scheduledMs) {
      const now = this.clock.now();
      const notBefore = Math.max(now, job.scheduledMs, job.scheduledMs + this.minIntervalMs - 1);
      const next = this.nextAfter(trigger.config, Date.parse(trigger.createdAt), notBefore);
      if (!(await this.teams.advanceTrigger(trigger.id, job.scheduledMs, next))) return;
      await this.arm({ ...trigger, nextMs: next });
    } else {
      // Moved on from this occurrence already. The job runs again only when the replica that
      // claimed it stopped before finishing it (its lock ran out): the run it should have opened
      // is opened now unless it exists, and the next occurrence armed again (armed twice, queued once).
      if (trigger.nextMs !== null && trigger.nextMs < job.scheduledMs) return;
      if (await this.teams.findEpoch(epochId)) return;
      await this.arm(trigger);
    }
    const at = new Date(job.scheduledMs).toISOString();
    await this.open(trigger.teamId, {
      triggerType: 'schedule',
      title: `Scheduled run ${at}`,
      note: `This run was started by the team's schedule (${describe(trigger.config)}), due at ${at}.`,
      epochId,
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

  // ── files ─────────────────────────────────────────────────────────────────────────────

  /** The file triggers of the teams whose space this is (the file-watch lease holder asks). */
  private async fileSubscriptions(spaceId: string): Promise<OwnedFileSubscription[]> {
    const found: OwnedFileSubscription[] = [];
    for (const trigger of await this.teams.triggersOfType('file')) {
      const team = await this.teams.findById(trigger.teamId);
      if (team?.owningSpaceId === spaceId)
        found.push({ ownerId: team.id, subscriptionId: trigger.id, config: trigger.config });
    }
    return found;
  }

  /** A burst of changes (claimed once across replicas by the triggers context): a run epoch. */
  private async fireFiles(burst: OwnedFileBurst): Promise<void> {
    const trigger = await this.teams.findTrigger(burst.subscriptionId);
    if (!trigger || trigger.teamId !== burst.ownerId) return;
    const paths = burst.changes
      .map((c) => (c as { type?: unknown; path?: unknown }))
      .filter((c) => typeof c.path === 'string')
      .map((c) => `${String(c.type)} ${String(c.path)}`);
    const more = burst.changes.reduce<number>((n, c) => n + (Number((c as { more?: unknown }).more) || 0), 0);
    const extra = Math.max(0, paths.length - PATHS_NOTE_MAX) + more;
    const names = paths.map((p) => p.slice(p.indexOf(' ') + 1));
    await this.open(trigger.teamId, {
      triggerType: 'file',
      title: `Files changed: ${names.slice(0, 3).join(', ')}${names.length > 3 || more > 0 ? ', …' : ''}`,
      note:
        `This run was started by changes to files in the team's space (${describeFiles(trigger.config)}):\n` +
        paths.slice(0, PATHS_NOTE_MAX).map((p) => `- ${p}`).join('\n') +
        (extra > 0 ? `\n… and ${extra} more` : ''),
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

/** The run epoch id of a schedule's occurrence: a UUID derived from the trigger and the due time. */
export function occurrenceEpochId(triggerId: string, scheduledMs: number): string {
  const h = createHash('sha256').update(`team-schedule:${triggerId}:${scheduledMs}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function describe(config: Record<string, unknown>): string {
  return typeof config.every === 'string' ? `every ${config.every}` : `cron ${String(config.cron)}`;
}

function describeFiles(config: Record<string, unknown>): string {
  const parts = [
    typeof config.pattern === 'string' && config.pattern ? `pattern ${config.pattern}` : '',
    typeof config.path === 'string' && config.path ? `path ${config.path}` : '',
  ].filter(Boolean);
  return parts.join(', ') || 'any file';
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
