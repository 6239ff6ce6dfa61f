import { ErrorCodes } from '#contracts/errors.js';
import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import {
  type ActivityType,
  type AppActivityEntryNewEvent,
  AppChannels,
  type AppEscalationNewEvent,
  appRunConversationId,
  type AppEscalationResolvedEvent,
  type AppStatusChangedEvent,
  type EscalationResponse,
  type RunTriggerResult,
} from '#contracts/apps.js';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import type { ApprovalRecord } from '#contracts/agent.js';
import { AgentService } from '../../agent/agent.service.js';
import { ApprovalsService } from '../../approvals/approvals.service.js';
import type { Message } from '../../kernel/conversation.js';
import { ConversationsService } from '../../conversations/conversations.service.js';
import { DomainError } from '../../errors/domain-error.js';
import { AppRepository } from '../../ports/app.repository.port.js';
import { AppScheduler } from '../../ports/app-scheduler.port.js';
import { Clock } from '../../ports/clock.port.js';
import { EventBus } from '../../ports/event-bus.port.js';
import { McpServers } from '../../mcp/mcp-servers.service.js';
import { JobQueue } from '../../ports/job-queue.port.js';
import { Metrics, NoopMetrics } from '../../ports/metrics.port.js';
import type { RunTrigger } from '../../ports/run-starter.port.js';
import { type PendingApproval, type TurnRecord, TurnRepository } from '../../ports/turn.repository.port.js';
import type { Space } from '../../kernel/space.js';
import { SpacesService } from '../../spaces/spaces.service.js';
import type { ActivityEntry, App, AutomationFields } from '../../kernel/app.js';
import { automationState } from '../app-rules.js';
import { AppErrors, AppsService } from '../apps.service.js';
import { AppChannelChat } from './app-channel-chat.js';
import { EscalationAnswers } from './escalation-answers.js';
import type { RunReport } from './report-to-user.tool.js';
import { escalationExpiryJobId } from '../../kernel/job-ids.js';

export type { RunTrigger };

/** What a run's turn keeps in its request. */
export interface RunRequest {
  appId: string;
  runId: string;
  /** Reminders to report already given in this run. */
  nudges: number;
  /** The type of the trigger that started the run (`continue` for a continued one): for metrics. */
  triggerType?: string;
}

export const RunTexts = {
  noReport: 'The run ended without reporting to the user (report_to_user was never called).',
  nudge:
    'You have not reported yet. Finish the task and call report_to_user (type complete, output or escalation) now.',
  escalationExpired: 'Nobody answered the question in time.',
  notRunning: 'The digital human is not active (paused, waiting for an answer, or in error).',
  alreadyRunning: 'The digital human is already running.',
  runNotFound: (runId: string) => `Run not found: ${runId}`,
  escalationNotFound: (entryId: string) => `No open question: ${entryId}`,
  otherRunActive: 'Another run of this digital human is in progress.',
} as const;

/**
 * Runs of a digital human (docs/api/digital-humans.md, "Runs"): `startRun` is the one entry point
 * every trigger uses. A run is a turn of kind `app-run` queued as a job in the app's run
 * conversation; that conversation holds one active turn at a time, which is what keeps
 * an app to one run at a time across replicas. Activity, state and escalations are recorded here.
 * Registers itself as the triggers' run starter at start.
 */
@Injectable()
export class AppRunsService implements OnModuleInit {
  private readonly logger = new Logger('AppRuns');

  constructor(
    private readonly apps: AppsService,
    private readonly records: AppRepository,
    private readonly agent: AgentService,
    private readonly conversations: ConversationsService,
    private readonly spaces: SpacesService,
    private readonly turns: TurnRepository,
    private readonly queue: JobQueue,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly mcp: McpServers,
    private readonly triggers: AppScheduler,
    private readonly answers: EscalationAnswers,
    private readonly approvals: ApprovalsService,
    private readonly channels: AppChannelChat,
    /** Runs started and finished, by trigger type (docs/operations.md, "Metrics"). */
    private readonly metrics: Metrics = new NoopMetrics(),
  ) {}

  onModuleInit(): void {
    this.channels.useEscalations({
      open: (appId) => this.openEscalation(appId),
      answer: async (appId, entryId, answer) => {
        try {
          await this.respond(appId, entryId, answer);
          return true;
        } catch (err) {
          if (err instanceof DomainError && err.kind === 'not_found') return false;
          throw err;
        }
      },
    });
    this.approvals.watch({
      held: (turn, pending) => this.approvalHeld(turn, pending),
      decided: (turn, pending, record) => this.approvalDecided(turn, pending, record),
    });
    this.triggers.useRunStarter({
      startRun: (appId, trigger, options) => this.startRun(appId, trigger, options),
      startQueuedRun: (appId, trigger, runId, app) => this.startQueuedRun(appId, trigger, runId, app),
      runInProgress: (appId) => this.runInProgress(appId),
      skipRun: (appId, reason, details) => this.skipRun(appId, reason, details),
      runMessages: (app, runId) => this.runMessages(app, runId),
      pause: (appId) => this.apps.pause(appId),
    });
  }

  /**
   * Starts a run now, or records why it was skipped (paused, waiting, already running).
   * `runId`: the run's id when the caller names it (a schedule occurrence's own, so a replica
   * taking the occurrence over can tell whether its run started); a new one otherwise.
   */
  async startRun(
    appId: string,
    trigger: RunTrigger,
    options: { runId?: string; app?: App } = {},
  ): Promise<RunTriggerResult> {
    const result = await this.begin(appId, trigger, options.runId ?? randomUUID(), false, options.app);
    return result === 'waiting' ? this.skipRun(appId, RunTexts.alreadyRunning) : result;
  }

  /** Whether a run of the app is in progress: its run conversation has an active turn (one look-up). */
  async runInProgress(appId: string): Promise<boolean> {
    return this.turns.hasActive(appRunConversationId(appId));
  }

  /** A queued delivery's run: waits (nothing recorded) while the app is busy or not active. */
  async startQueuedRun(
    appId: string,
    trigger: RunTrigger,
    runId: string,
    known?: App,
  ): Promise<'started' | 'waiting' | 'skipped'> {
    const result = await this.begin(appId, trigger, runId, true, known);
    return result === 'waiting' ? 'waiting' : result.outcome;
  }

  /**
   * `queued`: a run in progress or an app not active answers `waiting` instead of a `run_skipped`
   * entry. `known`: the app as the caller has just read it.
   */
  private async begin(
    appId: string,
    trigger: RunTrigger,
    runId: string,
    queued: boolean,
    known?: App,
  ): Promise<RunTriggerResult | 'waiting'> {
    const app = known?.id === appId ? known : await this.apps.get(appId);
    if (app.status === 'uninstalled')
      throw new DomainError('conflict', AppErrors.uninstalled, ErrorCodes.APP_UNINSTALLED);
    if (app.status !== 'active') return queued ? 'waiting' : this.skip(app, RunTexts.notRunning);
    const conversationId = appRunConversationId(app.id);
    if (queued && (await this.turns.findActive(conversationId))) return 'waiting';
    // A run does not start while a server it requires is not installed, turned off or failing.
    const mcpBlocked = await this.mcp.runBlocker(app);
    if (mcpBlocked !== null) return this.skip(app, mcpBlocked);
    const space = await this.runSpace(app);
    await this.conversations.openWithId(space, conversationId, { title: `${app.spec.name} runs`, appId: app.id });
    if (await this.turns.findActive(conversationId)) {
      if (queued || (await this.turnStillActive(app.id, conversationId))) return 'waiting';
    }
    const stored = await this.conversations.appendMessage(conversationId, {
      role: 'user',
      content: triggerMessage(trigger, new Date(this.clock.now())),
      meta: { runId, trigger: trigger.type },
    });
    const request: RunRequest = { appId: app.id, runId, nudges: 0, triggerType: trigger.type };
    const turn = await this.agent.queueTurn({
      kind: 'app-run',
      spaceId: space.id,
      conversationId,
      request: { ...request, trigger, messageId: stored.id },
    });
    if (!turn) return 'waiting';
    this.metrics.runStarted(trigger.type);
    await this.setAutomation(app.id, { runningCount: 1, lastRunAtMs: this.clock.now() });
    return { outcome: 'started', runId, conversationId };
  }

  /**
   * Whether the run conversation's turn is still active once a run that has recorded its end is
   * given time to finish its turn. A run's end is written (`run_complete` or `run_error`, the state
   * with none running) just before its turn is recorded as ended; a client told of the end that
   * triggers at once would otherwise be answered "already running". While the state says none
   * running, the turn is waited for (every RUN_END_POLL_MS, RUN_END_POLLS times at most); a run
   * in progress answers at once.
   */
  private async turnStillActive(appId: string, conversationId: string): Promise<boolean> {
    for (let poll = 0; poll < RUN_END_POLLS; poll++) {
      if ((await this.apps.get(appId)).automation.runningCount !== 0) return true;
      await new Promise((resolve) => setTimeout(resolve, RUN_END_POLL_MS));
      if (!(await this.turns.findActive(conversationId))) return false;
    }
    return true;
  }

  /** A trigger decided not to start a run (say backing off after failures): `run_skipped` with the reason. */
  async skipRun(appId: string, reason: string, details: Record<string, unknown> = {}): Promise<RunTriggerResult> {
    return this.skip(await this.apps.get(appId), reason, details);
  }

  /** Text for a running run (given at its next step), or, once it ended, continues it with the text. */
  async inject(appId: string, runId: string, text: string): Promise<{ runId: string }> {
    await this.resume(appId, runId, text);
    return { runId };
  }

  /** Continues an ended run where it stopped. */
  async continueRun(appId: string, runId: string): Promise<{ runId: string }> {
    await this.resume(appId, runId, 'Continue.');
    return { runId };
  }

  /** The run's transcript: its messages in the app's run conversation. */
  async session(appId: string, runId: string): Promise<{ runId: string; active: boolean; messages: Message[] }> {
    const app = await this.apps.get(appId);
    const messages = await this.runMessages(app, runId);
    if (messages.length === 0) throw DomainError.notFound(RunTexts.runNotFound(runId), ErrorCodes.RUN_NOT_FOUND);
    const active = await this.turns.findActive(appRunConversationId(app.id));
    return { runId, active: active?.request.runId === runId, messages };
  }

  /**
   * Answers an open question: the escalation entry records the answer (`userResponse`,
   * `resolution` answered; `app:activity_entry:new` with the updated entry), the app is active
   * again, `app:escalation:resolved` goes out, and a follow-up run gets the answer.
   */
  async respond(
    appId: string,
    entryId: string,
    body: { choice?: string | null; text?: string | null },
  ): Promise<RunTriggerResult & { response: EscalationResponse }> {
    const choice = body.choice ?? '';
    const text = body.text ?? '';
    if (choice.trim() === '' && text.trim() === '') throw DomainError.invalid('choice or text is required');
    const app = await this.apps.get(appId);
    if (app.automation.pendingEscalationId !== entryId)
      throw DomainError.notFound(RunTexts.escalationNotFound(entryId), ErrorCodes.ESCALATION_NOT_FOUND);
    const response: EscalationResponse = { ...(choice ? { choice } : {}), ...(text ? { text } : {}) };
    const cleared = await this.records.update(app.id, {
      status: 'active',
      automation: { pendingEscalationId: null },
    });
    if (!cleared || cleared === 'already-installed')
      throw DomainError.notFound(AppErrors.notFound(app.id), ErrorCodes.APP_NOT_FOUND);
    const now = this.clock.now();
    const entry = await this.closeEscalation(app.id, entryId, {
      userResponse: { ts: now, ...response },
      resolution: { reason: 'answered', ts: now },
    });
    await this.bus.publish(AppChannels.escalationResolved, {
      appId: app.id,
      entryId,
      response,
    } satisfies AppEscalationResolvedEvent);
    await this.publishStatus(cleared);
    const question = typeof entry?.content.question === 'string' ? entry.content.question : null;
    // A question asked by other work (a team member) resumes that work instead of a new run.
    const resumed = entry
      ? await this.answers.route({ appId: app.id, entryId, question, content: entry.content, response })
      : null;
    if (resumed) return { outcome: 'started', ...resumed, response };
    const run = await this.startRun(app.id, {
      type: 'escalation_response',
      data: { entryId, question, ...response },
    });
    return { ...run, response };
  }

  /** The app's open question with its choices (a message channel's owner may answer it), or null. */
  async openEscalation(appId: string): Promise<{ entryId: string; question: string; choices: string[] } | null> {
    const app = await this.records.findById(appId);
    const entryId = app?.automation.pendingEscalationId;
    if (!entryId) return null;
    const entry = await this.records.findActivity(appId, entryId);
    if (!entry) return null;
    const choices = Array.isArray(entry.content.choices) ? entry.content.choices.map(String) : [];
    const question = typeof entry.content.question === 'string' ? entry.content.question : '';
    return { entryId, question, choices };
  }

  /**
   * The delayed job of an unanswered question: closes it once, whichever replica runs it
   * (the entry's `resolution` expired, a `run_error` for its run, the app active again).
   */
  async expireEscalation(appId: string, entryId: string, runId: string): Promise<void> {
    const app = await this.records.findById(appId);
    if (!app || app.automation.pendingEscalationId !== entryId) return;
    const updated = await this.records.update(app.id, {
      status: 'active',
      automation: { pendingEscalationId: null, lastStatus: 'error', lastError: RunTexts.escalationExpired },
    });
    await this.closeEscalation(app.id, entryId, { resolution: { reason: 'expired', ts: this.clock.now() } });
    await this.addActivity(app.id, runId, 'run_error', { error: RunTexts.escalationExpired, entryId });
    if (updated && updated !== 'already-installed') await this.publishStatus(updated);
  }

  // ── what a run's turn reports (called by the app-run plan) ─────────────────────────────

  /**
   * Stores a report; an escalation also opens the question. Answers the tool's output. A team
   * member's escalation names its team and epoch (`from`), carried by `app:escalation:new`.
   */
  async recordReport(
    appId: string,
    runId: string,
    report: RunReport,
    from?: { teamId: string; epochId: string },
  ): Promise<string> {
    const content: Record<string, unknown> = { summary: report.summary };
    if (report.data !== undefined) content.data = report.data;
    if (report.type === 'complete') return 'Reported. The run is complete; end your turn.';
    if (report.type !== 'escalation') {
      await this.addActivity(appId, runId, report.type, content);
      if (report.type === 'output') await this.pushResult(appId, runId, 'output', report.summary);
      return report.type === 'milestone' ? 'Progress reported.' : 'Output reported. The run is complete.';
    }
    const choices = report.choices ?? [];
    const app = await this.records.findById(appId);
    const hours = app?.spec.escalation?.timeout_hours;
    const expires = typeof hours === 'number' && hours > 0;
    const entry = await this.addActivity(appId, runId, 'escalation', {
      ...content,
      ...(from ? { teamId: from.teamId, epochId: from.epochId } : {}),
      question: report.summary,
      choices,
      ...(expires ? { deadlineAt: this.clock.now() + Math.round(hours * 3_600_000) } : {}),
    });
    await this.records.update(appId, { status: 'waiting_user', automation: { pendingEscalationId: entry.id } });
    await this.bus.publish(AppChannels.escalationNew, {
      appId,
      entryId: entry.id,
      question: report.summary,
      choices,
      ...(from ? { teamId: from.teamId, epochId: from.epochId } : {}),
    } satisfies AppEscalationNewEvent);
    if (expires) {
      await this.queue.add(
        'app.escalation-expire',
        { appId, entryId: entry.id, runId },
        { jobId: escalationExpiryJobId(entry.id), delayMs: Math.round(hours * 3_600_000) },
      );
    }
    // To the owner's direct chat on the app's message channels; never fails the report.
    await this.channels
      .escalated({ appId, entryId: entry.id, question: report.summary, choices })
      .catch((err: Error) => this.logger.warn(`sending escalation ${entry.id} to channels failed: ${err.message}`));
    return 'Your question was sent to the user. End your turn now; their answer starts a new run.';
  }

  /** The run ended as it should: `complete` is written here (an output or escalation was already). */
  async finishRun(appId: string, runId: string, final: RunReport, triggerType = 'unknown'): Promise<void> {
    this.metrics.runFinished(triggerType, 'completed');
    // An app deleted meanwhile gets nothing recorded: no entry (written only while the app
    // exists) and no state (its update finds no row).
    let entry: ActivityEntry | null = null;
    if (final.type === 'complete') {
      const content: Record<string, unknown> = { summary: final.summary };
      if (final.data !== undefined) content.data = final.data;
      entry = await this.recordActivityIfAppExists(appId, runId, 'run_complete', content);
      if (!entry) return;
      await this.pushResult(appId, runId, 'complete', final.summary);
    }
    // The state before the entry's event: a client told of the run's end reads it ended.
    await this.setAutomation(appId, { runningCount: 0, lastStatus: 'ok', lastError: null });
    if (entry) await this.publishActivity(entry);
  }

  /** A run's result goes to the app's proactive channel threads (docs/api/channels.md); never fails the run. */
  private async pushResult(appId: string, runId: string, type: 'output' | 'complete', summary: string): Promise<void> {
    await this.channels.runResult({ appId, runId, type, summary }).catch((err: Error) => {
      this.logger.warn(`pushing the result of run ${runId} to channels failed: ${err.message}`);
    });
  }

  /** The run's turn ended for good (recorded as ended): the app's next queued delivery may start. */
  async runEnded(appId: string): Promise<void> {
    await this.triggers.runEnded(appId);
  }

  /**
   * The run failed (model error, no report, stopped, replica lost): `run_error` with the reason.
   * `outage`: it failed because the server's database was away; marked so (`outage: true`), it
   * does not count towards the app's failure back-off or pause.
   */
  async failRun(
    appId: string,
    runId: string,
    error: string,
    interrupted = false,
    triggerType = 'unknown',
    outage = false,
  ): Promise<void> {
    this.metrics.runFinished(triggerType, interrupted ? 'interrupted' : 'failed');
    const entry = await this.recordActivityIfAppExists(appId, runId, 'run_error', {
      error,
      ...(interrupted ? { interrupted: true } : {}),
      ...(outage ? { outage: true } : {}),
    });
    if (!entry) return; // deleted meanwhile: nothing to record
    // The state before the entry's event: a client told of the run's end reads it ended.
    await this.setAutomation(appId, { runningCount: 0, lastStatus: 'error', lastError: error });
    await this.publishActivity(entry);
  }

  /** Queues the next turn of a run that ended without reporting; false when that is not possible. */
  async nudge(appId: string, runId: string, spaceId: string, nudges: number, triggerType?: string): Promise<boolean> {
    const conversationId = appRunConversationId(appId);
    const stored = await this.conversations.appendMessage(conversationId, {
      role: 'user',
      content: RunTexts.nudge,
      meta: { runId, nudge: nudges },
    });
    const request: RunRequest = { appId, runId, nudges, ...(triggerType ? { triggerType } : {}) };
    const turn = await this.agent.queueTurn({
      kind: 'app-run',
      spaceId,
      conversationId,
      request: { ...request, messageId: stored.id },
    });
    return turn !== null;
  }

  /** The run's own messages: its conversation keeps every run's, which are not read. */
  async runMessages(app: App, runId: string): Promise<Message[]> {
    return this.conversations.runMessages(appRunConversationId(app.id), runId);
  }

  // ── tool approvals (docs/api/agent.md, "Tool approvals") ─────────────────────────────────

  /** A run's tool call waits for approval: an `approval` activity entry, and the app waits on its user. */
  private async approvalHeld(turn: TurnRecord, pending: PendingApproval): Promise<void> {
    const run = runOf(turn);
    if (!run) return;
    await this.addActivity(
      run.appId,
      run.runId,
      'approval',
      { toolId: pending.toolId, name: pending.name, input: pending.input, deadline: pending.deadline },
      approvalEntryId(turn.id, pending.toolId),
    );
    const updated = await this.records.update(run.appId, { status: 'waiting_user' });
    if (updated && updated !== 'already-installed') await this.publishStatus(updated);
  }

  /** The decision goes into the entry (who, when, what, outcome); the run goes on, the app active again. */
  private async approvalDecided(turn: TurnRecord, pending: PendingApproval, record: ApprovalRecord): Promise<void> {
    const run = runOf(turn);
    if (!run) return;
    const entry = await this.records.mergeActivityContent(run.appId, approvalEntryId(turn.id, pending.toolId), {
      outcome: record.outcome,
      decidedBy: record.decidedBy,
      ...(record.channelUser ? { channelUser: record.channelUser } : {}),
      decidedAt: record.decidedAt,
      ...(record.reason ? { reason: record.reason } : {}),
    });
    if (entry) await this.publishActivity(entry);
    const app = await this.records.findById(run.appId);
    // An escalation opened meanwhile keeps the app waiting for its answer.
    if (app?.status !== 'waiting_user' || app.automation.pendingEscalationId) return;
    const updated = await this.records.update(run.appId, { status: 'active' });
    if (updated && updated !== 'already-installed') await this.publishStatus(updated);
  }

  // ── helpers ────────────────────────────────────────────────────────────────────────────

  private async resume(appId: string, runId: string, text: string): Promise<void> {
    const app = await this.apps.get(appId);
    if ((await this.runMessages(app, runId)).length === 0)
      throw DomainError.notFound(RunTexts.runNotFound(runId), ErrorCodes.RUN_NOT_FOUND);
    const conversationId = appRunConversationId(app.id);
    const active = await this.turns.findActive(conversationId);
    if (active && active.request.runId !== runId)
      throw new DomainError('conflict', RunTexts.otherRunActive, ErrorCodes.RUN_STATE_CONFLICT);
    if (!active && app.status !== 'active')
      throw new DomainError('conflict', RunTexts.notRunning, ErrorCodes.RUN_STATE_CONFLICT);
    const conversation = await this.conversations.findById(conversationId);
    const space = await this.spaces.get(conversation!.spaceId);
    const request: RunRequest = { appId: app.id, runId, nudges: 0, triggerType: 'continue' };
    await this.agent.submitMessage({
      kind: 'app-run',
      space,
      conversationId,
      message: text,
      images: [],
      meta: { runId },
      request: { ...request },
    });
    if (!active) {
      this.metrics.runStarted('continue');
      await this.setAutomation(app.id, { runningCount: 1, lastRunAtMs: this.clock.now() });
    }
  }

  private async skip(app: App, reason: string, details: Record<string, unknown> = {}): Promise<RunTriggerResult> {
    await this.addActivity(app.id, null, 'run_skipped', { ...details, reason });
    await this.setAutomation(app.id, { lastStatus: 'skipped' });
    return { outcome: 'skipped', runId: null, reason };
  }

  private async runSpace(app: App): Promise<Space> {
    return this.spaces.get(app.spaceId ?? TEMP_SPACE_ID);
  }

  /** Writes how a question ended into its entry and tells clients (`app:activity_entry:new` carries updates too). */
  private async closeEscalation(
    appId: string,
    entryId: string,
    patch: Record<string, unknown>,
  ): Promise<ActivityEntry | null> {
    const entry = await this.records.mergeActivityContent(appId, entryId, patch);
    if (entry) await this.publishActivity(entry);
    return entry;
  }

  private async addActivity(
    appId: string,
    runId: string | null,
    type: ActivityType,
    content: Record<string, unknown>,
    id: string = randomUUID(),
  ): Promise<ActivityEntry> {
    const entry = await this.recordActivity(appId, runId, type, content, id);
    await this.publishActivity(entry);
    return entry;
  }

  /** The entry recorded, its event not yet published (the caller publishes it). */
  private async recordActivity(
    appId: string,
    runId: string | null,
    type: ActivityType,
    content: Record<string, unknown>,
    id: string = randomUUID(),
  ): Promise<ActivityEntry> {
    const entry = this.activityEntry(appId, runId, type, content, id);
    await this.records.addActivity(entry);
    return entry;
  }

  /** `recordActivity` for an app that may have been deleted meanwhile: null (nothing written) when it was. */
  private async recordActivityIfAppExists(
    appId: string,
    runId: string,
    type: ActivityType,
    content: Record<string, unknown>,
  ): Promise<ActivityEntry | null> {
    const entry = this.activityEntry(appId, runId, type, content);
    return (await this.records.addActivityIfAppExists(entry)) ? entry : null;
  }

  /** A new activity entry, stamped now. */
  private activityEntry(
    appId: string,
    runId: string | null,
    type: ActivityType,
    content: Record<string, unknown>,
    id: string = randomUUID(),
  ): ActivityEntry {
    return { id, appId, runId, type, ts: this.clock.now(), content };
  }

  private publishActivity(entry: ActivityEntry): Promise<void> {
    const { appId, id, runId, type, ts, content } = entry;
    return this.bus.publish(AppChannels.activityEntryNew, {
      appId,
      entry: { id, runId, type, ts, content },
    } satisfies AppActivityEntryNewEvent);
  }

  private async setAutomation(appId: string, automation: Partial<AutomationFields>): Promise<void> {
    const updated = await this.records.update(appId, { automation });
    if (updated && updated !== 'already-installed') await this.publishStatus(updated);
  }

  private publishStatus(app: App): Promise<void> {
    return this.bus.publish(AppChannels.statusChanged, {
      appId: app.id,
      state: automationState(app),
    } satisfies AppStatusChangedEvent);
  }
}

/** The app and run of a run's turn; null for other turns. */
function runOf(turn: TurnRecord): { appId: string; runId: string } | null {
  const { appId, runId } = turn.request as Partial<RunRequest>;
  return turn.kind === 'app-run' && typeof appId === 'string' && typeof runId === 'string' ? { appId, runId } : null;
}

/** One entry per held call, found again by the replica that records its decision. */
const approvalEntryId = (turnId: string, toolId: string): string => `approval-${turnId}-${toolId}`;

/** How long a manual trigger waits for the turn of a run that has recorded its end (turnStillActive): 2 s at most. */
const RUN_END_POLL_MS = 25;
const RUN_END_POLLS = 80;

function triggerMessage(trigger: RunTrigger, now: Date): string {
  if (trigger.type === 'escalation_response') {
    const data = trigger.data as { question?: string | null; choice?: string; text?: string };
    const answer = [data.choice, data.text].filter(Boolean).join(': ');
    return [
      `Your user answered your question${data.question ? ` "${data.question}"` : ''}: ${answer}`,
      'Carry on with the task using this answer, then call report_to_user.',
    ].join('\n');
  }
  const lines = [`Run started by a ${trigger.type} trigger at ${now.toISOString()}.`];
  if (trigger.data !== undefined) lines.push(`Trigger data: ${JSON.stringify(trigger.data)}`);
  lines.push('Do your task now, then call report_to_user.');
  return lines.join('\n');
}
