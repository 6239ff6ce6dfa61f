import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type ActivityKind,
  type DeliveryReceipt,
  TeamChannels,
  type TeamActivityDto,
  type TeamDto,
  type TeamEpochDto,
  type TeamMemberDto,
  teamMemberConversationId,
} from '#contracts/teams.js';
import { AgentService } from '../agent/agent.service.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { AppRunsService } from '../apps/agent/app-runs.service.js';
import type { AnsweredEscalation, ResumedWork } from '../apps/agent/escalation-answers.js';
import type { RunReport } from '../apps/agent/report-to-user.tool.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { teamRunDeadlineJobId } from '../kernel/job-ids.js';
import { type MailboxMessage, TeamRepository } from '../ports/team.repository.port.js';
import { TurnRepository } from '../ports/turn.repository.port.js';
import { SpacesService } from '../spaces/spaces.service.js';
import {
  DEFAULT_TEAM_LIMITS,
  isTerminal,
  limitBreach,
  outcomeOf,
  renderMail,
  subjectOf,
  type TeamLimits,
  TeamTexts,
  timeLimitText,
} from './team-rules.js';

/** What a member's turn asks for: the team, the epoch, the member, and how deep its chain of messages is. */
export interface MemberTurnRequest {
  teamId: string;
  epochId: string;
  appId: string;
  depth: number;
}

export type SendResult = { delivery: DeliveryReceipt; messageId: string } | { breach: string };

/**
 * The team at work (docs/api/teams.md, "How a run works"): mailboxes, member turns, the board's
 * records, and sealing epochs. Everything it decides on is read from Postgres, so any replica
 * can deliver a message, end a member's turn or seal the run:
 * - one turn at a time per member per epoch is the agent's own rule (one active turn per
 *   conversation, a unique index), each member's transcript being its own conversation;
 * - a message waits in the member's mailbox (a table) until a turn of the member takes it (only
 *   its turns do, so the turn gate orders the takes): the running turn at its next step, else a
 *   turn queued for it, which takes it when it starts, else the one queued when the running
 *   turn ends (`afterTurn`, on whichever replica ran it). A take writes the mail into the
 *   transcript in the same transaction, so a sender's messages arrive in order.
 */
@Injectable()
export class TeamWork {
  private readonly logger = new Logger('Teams');
  readonly limits: TeamLimits;

  constructor(
    private readonly teams: TeamRepository,
    private readonly turns: TurnRepository,
    private readonly agent: AgentService,
    private readonly conversations: ConversationsService,
    private readonly spaces: SpacesService,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly runs: AppRunsService,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly queue: JobQueue,
  ) {
    this.limits = config.teamLimits ?? DEFAULT_TEAM_LIMITS;
  }

  /**
   * Puts a message in `to`'s mailbox and hands it over: `mid_turn` when `to` is working (its
   * running turn takes it at its next step), `queued` when a turn was queued for it. A breach
   * of the limits seals the epoch instead and answers it.
   */
  async send(
    team: TeamDto,
    epoch: TeamEpochDto,
    from: TeamMemberDto | null,
    to: TeamMemberDto,
    body: string,
    depth: number,
  ): Promise<SendResult> {
    if (epoch.endedAt) return { delivery: 'undelivered', messageId: '' };
    if (from) {
      const count = await this.teams.countMessage(epoch.id);
      const breach = limitBreach(this.limits, {
        count,
        depth,
        elapsedMs: this.clock.now() - Date.parse(epoch.startedAt),
      });
      if (breach) {
        await this.breach(team, epoch, breach);
        return { breach };
      }
    }
    const messageId = randomUUID();
    const now = this.clock.now();
    await this.teams.enqueue({
      id: messageId,
      epochId: epoch.id,
      toAppId: to.appId,
      fromAppId: from?.appId ?? null,
      body,
      depth,
      createdAt: new Date(now).toISOString(),
    });
    if (from) {
      await this.record(team.id, epoch.id, 'message', from.appId, to.appId, body);
      await this.bus.publish(TeamChannels.message, {
        teamId: team.id,
        epochId: epoch.id,
        fromAppId: from.appId,
        toAppId: to.appId,
        fromMemberName: from.memberName,
        toMemberName: to.memberName,
        messageId,
        ts: now,
      });
    }
    return { delivery: await this.deliver(team, epoch, to), messageId };
  }

  /**
   * Hands `to`'s waiting mail over: `mid_turn` when `to` has a running turn (it takes the mail
   * at its next step), else `queued`: a turn of `to` is queued (or was already), and takes the
   * mail when it starts. Only a turn of the member takes its mail (the turn gate: one active
   * turn per transcript), so what a sender sends arrives in the order it was sent.
   */
  async deliver(team: TeamDto, epoch: TeamEpochDto, to: TeamMemberDto): Promise<DeliveryReceipt> {
    const conversationId = teamMemberConversationId(to.appId, team.id, epoch.id);
    const active = await this.turns.findActive(conversationId);
    if (active) return active.status === 'running' ? 'mid_turn' : 'queued';
    await this.drain(team, epoch, to);
    return 'queued';
  }

  /**
   * Queues a turn of the member for its waiting mail (the turn takes the mail when it starts).
   * Should a turn be active meanwhile (another replica), that one takes it.
   */
  async drain(team: TeamDto, epoch: TeamEpochDto, member: TeamMemberDto): Promise<void> {
    if (epoch.endedAt) return;
    if (!(await this.teams.hasWaiting(epoch.id, member.appId))) return;
    const conversationId = teamMemberConversationId(member.appId, team.id, epoch.id);
    const space = await this.spaces.get(team.owningSpaceId);
    await this.conversations.openWithId(space, conversationId, {
      title: `${member.memberName} · ${team.name}`,
      appId: member.appId,
    });
    const request: MemberTurnRequest = { teamId: team.id, epochId: epoch.id, appId: member.appId, depth: 0 };
    await this.agent.queueTurn({ kind: 'team-member', spaceId: space.id, conversationId, request: { ...request } });
  }

  /**
   * The member's turn takes its waiting mail (at its start, or at a step): written at the end of
   * its transcript in the same transaction (live: while it runs); answers the text for the model.
   */
  async takeMail(req: MemberTurnRequest, live: boolean): Promise<{ text: string; depth: number } | null> {
    const members = await this.teams.members(req.teamId);
    let text = '';
    const mail = await this.teams.takeWaiting(req.epochId, req.appId, {
      conversationId: teamMemberConversationId(req.appId, req.teamId, req.epochId),
      render: (taken) => {
        text = this.render(taken, members);
        return {
          content: text,
          meta: { teamId: req.teamId, epochId: req.epochId, appId: req.appId, ...(live ? { live: true } : {}) },
        };
      },
    });
    if (mail.length === 0) return null;
    await this.bus.publish(TeamChannels.memberHistory, { teamId: req.teamId, appId: req.appId, epochId: req.epochId });
    return { text, depth: Math.max(...mail.map((m) => m.depth)) };
  }

  private render(mail: MailboxMessage[], members: TeamMemberDto[]): string {
    return renderMail(mail, (appId) => members.find((m) => m.appId === appId)?.memberName ?? 'a former member');
  }

  /**
   * A member's turn ended (completed, failed, stopped, or its replica lost): mail that came
   * meanwhile starts its next turn, and a run with nothing left to do is sealed.
   */
  async afterTurn(req: Pick<MemberTurnRequest, 'teamId' | 'epochId' | 'appId'>): Promise<void> {
    const [team, epoch] = await Promise.all([this.teams.findById(req.teamId), this.teams.findEpoch(req.epochId)]);
    if (!team || !epoch || epoch.endedAt) return;
    const members = await this.teams.members(team.id);
    // Anyone's waiting mail (a turn that ended on a lost replica left its mailbox behind too).
    for (const appId of await this.teams.waitingRecipients(epoch.id)) {
      const member = members.find((m) => m.appId === appId);
      if (member) await this.deliver(team, epoch, member);
    }
    await this.sealIfQuiet(team, epoch, members);
  }

  /**
   * A run epoch with nothing waiting and nobody working is over when every task is settled. With
   * tasks still open nobody would ever act again, so the lead is reminded (REMINDERS times, each
   * a turn of its own); after that the run is sealed, its summary naming the open tasks.
   */
  async sealIfQuiet(team: TeamDto, epoch: TeamEpochDto, members: TeamMemberDto[]): Promise<void> {
    if (epoch.lifecycle !== 'run' || epoch.endedAt) return;
    // A member waits for the person's answer: the run goes on once it comes.
    if (team.status === 'waiting_user') return;
    if (await this.teams.anyWaiting(epoch.id)) return;
    for (const m of members) {
      if (await this.turns.findActive(teamMemberConversationId(m.appId, team.id, epoch.id))) return;
    }
    const [tasks, findings] = await Promise.all([this.teams.tasks(epoch.id), this.teams.findings(epoch.id)]);
    const open = tasks.filter((t) => !isTerminal(t.status));
    const lead = members.find((m) => m.appId === team.leadAppId);
    if (open.length > 0 && lead) {
      const reminded = (await this.teams.activities(epoch.id)).filter(
        (a) => a.kind === 'message' && a.actorAppId === null && a.subject.startsWith(REMINDER_SUBJECT),
      ).length;
      if (reminded < REMINDERS) {
        await this.remind(
          team,
          epoch,
          lead,
          open.map((t) => t.title),
        );
        return;
      }
    }
    const outcome = outcomeOf(tasks, findings);
    await this.end(team, epoch, {
      endReason: 'completed',
      outcome,
      summary:
        open.length > 0
          ? `Everyone stopped working with ${open.length} task(s) still open: ${open.map((t) => t.title).join('; ')}.`
          : outcome === 'output'
            ? `${tasks.length} task(s), ${findings.length} finding(s).`
            : 'Nothing to do.',
      teamStatus: 'idle',
    });
  }

  private async remind(team: TeamDto, epoch: TeamEpochDto, lead: TeamMemberDto, open: string[]): Promise<void> {
    const body =
      `Everyone is idle, but these tasks are still open: ${open.join('; ')}. ` +
      'Follow up with the assignees (team_send), update the tasks, or end the run with team_complete.';
    await this.record(team.id, epoch.id, 'message', null, lead.appId, `${REMINDER_SUBJECT}${body}`, body);
    await this.teams.enqueue({
      id: randomUUID(),
      epochId: epoch.id,
      toAppId: lead.appId,
      fromAppId: null,
      body,
      depth: 0,
      createdAt: new Date(this.clock.now()).toISOString(),
    });
    await this.deliver(team, epoch, lead);
  }

  /**
   * A member's turn was lost with its replica (SIGKILL, crash): in an open run the member is
   * told so by a message of the team's own, which starts its next turn on a live replica, so the
   * run goes on rather than waiting for nobody. A member whose turns keep being lost
   * (LOST_TURNS_MAX in one epoch) ends the run as an error instead.
   */
  async resumeLost(req: Pick<MemberTurnRequest, 'teamId' | 'epochId' | 'appId'>): Promise<void> {
    const [team, epoch] = await Promise.all([this.teams.findById(req.teamId), this.teams.findEpoch(req.epochId)]);
    if (!team || !epoch || epoch.endedAt || epoch.lifecycle !== 'run') return;
    const member = (await this.teams.members(team.id)).find((m) => m.appId === req.appId);
    if (!member) return;
    const lost = (await this.teams.activities(epoch.id)).filter(
      (a) =>
        a.kind === 'message' &&
        a.actorAppId === null &&
        a.targetAppId === member.appId &&
        a.subject.startsWith(RESUME_SUBJECT),
    ).length;
    if (lost >= LOST_TURNS_MAX) {
      await this.breach(team, epoch, TeamTexts.turnsLost(member.memberName, lost + 1));
      return;
    }
    await this.record(team.id, epoch.id, 'message', null, member.appId, `${RESUME_SUBJECT}${RESUME_BODY}`, RESUME_BODY);
    await this.teams.enqueue({
      id: randomUUID(),
      epochId: epoch.id,
      toAppId: member.appId,
      fromAppId: null,
      body: RESUME_BODY,
      depth: 0,
      createdAt: new Date(this.clock.now()).toISOString(),
    });
  }

  /** The lead ends the run (`team_complete`). */
  async complete(team: TeamDto, epoch: TeamEpochDto, lead: TeamMemberDto, summary: string): Promise<boolean> {
    const [tasks, findings] = await Promise.all([this.teams.tasks(epoch.id), this.teams.findings(epoch.id)]);
    const outcome = summary.trim() !== '' ? 'output' : outcomeOf(tasks, findings);
    return this.end(team, epoch, { endReason: 'completed', outcome, summary, teamStatus: 'idle' }, lead.appId);
  }

  /**
   * A member asks the person (`report_to_user` with an escalation): the question is the member's
   * escalation, carrying the team and epoch, and the team waits for the answer (`waiting_user`;
   * the run does not seal meanwhile). With `escalationRouting: "lead"` a member other than the
   * lead asks its lead instead, by message.
   */
  async escalate(team: TeamDto, epoch: TeamEpochDto, me: TeamMemberDto, report: RunReport): Promise<string> {
    if (team.escalationRouting === 'lead' && !me.isLead && team.leadAppId) {
      const lead = (await this.teams.members(team.id)).find((m) => m.appId === team.leadAppId);
      if (lead) {
        const sent = await this.send(team, epoch, me, lead, `Question: ${report.summary}`, 1);
        if ('breach' in sent) return `Not sent: ${sent.breach}`;
        return `Your question went to your lead ${lead.memberName}. End your turn now; the answer comes as a message.`;
      }
    }
    await this.runs.recordReport(me.appId, epoch.id, report, { teamId: team.id, epochId: epoch.id });
    await this.record(
      team.id,
      epoch.id,
      'message',
      me.appId,
      null,
      `Asked the user: ${report.summary}`,
      report.summary,
    );
    const updated = await this.teams.update(team.id, { status: 'waiting_user' });
    if (updated)
      await this.bus.publish(TeamChannels.updated, { teamId: team.id, team: updated, liveStatus: 'waiting_user' });
    return 'Your question was sent to the user. End your turn now; their answer comes back to you here.';
  }

  /** The person answered a member's question: the answer goes to that member in its epoch. */
  async resumeFromAnswer(answered: AnsweredEscalation): Promise<ResumedWork | null> {
    const { teamId, epochId } = answered.content;
    if (typeof teamId !== 'string' || typeof epochId !== 'string') return null;
    const [team, epoch] = await Promise.all([this.teams.findById(teamId), this.teams.findEpoch(epochId)]);
    const member = team ? (await this.teams.members(team.id)).find((m) => m.appId === answered.appId) : undefined;
    if (!team || !epoch || epoch.endedAt || !member) return null;
    if (team.status === 'waiting_user' && team.currentEpochId === epoch.id) {
      const updated = await this.teams.update(team.id, { status: 'running' });
      if (updated)
        await this.bus.publish(TeamChannels.updated, { teamId: team.id, team: updated, liveStatus: 'running' });
    }
    const answer = [answered.response.choice, answered.response.text].filter((t) => t && t.trim() !== '').join('\n');
    await this.send(
      team,
      epoch,
      null,
      member,
      `Answer to your question${answered.question ? ` "${answered.question}"` : ''}:\n${answer}`,
      0,
    );
    return { runId: epoch.id, conversationId: teamMemberConversationId(member.appId, team.id, epoch.id) };
  }

  /**
   * Arms a run's time limit: a delayed job whose id names the epoch and the moment it is due, so
   * the run is sealed by whichever replica consumes it, after restarts too, and arming it again
   * (any replica, any number of times) queues it once.
   */
  async armDeadline(epoch: TeamEpochDto): Promise<void> {
    if (epoch.lifecycle !== 'run' || epoch.endedAt) return;
    const dueMs = Date.parse(epoch.startedAt) + this.limits.maxDurationMs;
    await this.queue.add(
      'team.run-deadline',
      { teamId: epoch.teamId, epochId: epoch.id },
      { jobId: teamRunDeadlineJobId(epoch.id, dueMs), delayMs: Math.max(0, dueMs - this.clock.now()) },
    );
  }

  /** Every open run's time limit armed again (a job store restarted empty loses delayed jobs); at a worker's start. */
  async armOpenDeadlines(): Promise<void> {
    for (const epoch of await this.teams.openRunEpochs()) {
      await this.armDeadline(epoch).catch((err: Error) =>
        this.logger.warn(`arming the time limit of run ${epoch.id}: ${err.message}`),
      );
    }
  }

  /** The `team.run-deadline` job: a run still open past its time limit is sealed as an error. */
  async deadlineReached(data: { teamId: string; epochId: string }): Promise<void> {
    const [team, epoch] = await Promise.all([this.teams.findById(data.teamId), this.teams.findEpoch(data.epochId)]);
    if (!team || !epoch || epoch.endedAt || epoch.lifecycle !== 'run') return;
    const dueMs = Date.parse(epoch.startedAt) + this.limits.maxDurationMs;
    const now = this.clock.now();
    if (now < dueMs) {
      // Early (a clock apart, or the limit was raised since): armed again for the time left.
      await this.queue.add(
        'team.run-deadline',
        { teamId: team.id, epochId: epoch.id },
        { jobId: teamRunDeadlineJobId(epoch.id, now), delayMs: dueMs - now },
      );
      return;
    }
    await this.breach(team, epoch, timeLimitText(this.limits));
  }

  /** Archives a conversation epoch: sealed, what still runs in it stops. */
  async archive(team: TeamDto, epoch: TeamEpochDto): Promise<boolean> {
    return this.end(team, epoch, {
      endReason: 'completed',
      outcome: null,
      summary: 'Archived.',
      teamStatus: team.status,
    });
  }

  /** Pause: the run stops (`stopped`) and its members' turns with it. */
  async stop(team: TeamDto, epoch: TeamEpochDto): Promise<boolean> {
    return this.end(team, epoch, { endReason: 'stopped', outcome: null, summary: 'Stopped.', teamStatus: 'idle' });
  }

  /** A limit broke: the epoch is sealed as an error, naming the limit, and the person is asked (through the lead). */
  async breach(team: TeamDto, epoch: TeamEpochDto, reason: string): Promise<void> {
    const sealed = await this.end(team, epoch, {
      endReason: 'error',
      outcome: 'failed',
      summary: reason,
      teamStatus: 'error',
    });
    if (!sealed || !team.leadAppId) return;
    await this.runs
      .recordReport(
        team.leadAppId,
        epoch.id,
        { type: 'escalation', summary: `The run of the team "${team.name}" was stopped. ${reason}` },
        { teamId: team.id, epochId: epoch.id },
      )
      .catch((err: Error) => this.logger.warn(`the escalation of a limit breach failed: ${err.message}`));
  }

  /** Seals the epoch once (whichever replica gets there first), records it and stops what still runs in it. */
  private async end(
    team: TeamDto,
    epoch: TeamEpochDto,
    seal: Parameters<TeamRepository['seal']>[1],
    actorAppId: string | null = null,
  ): Promise<boolean> {
    const sealed = await this.teams.seal(epoch.id, seal);
    if (!sealed) return false;
    await this.record(team.id, epoch.id, 'run_end', actorAppId, null, seal.summary ?? seal.endReason, seal.summary);
    const members = await this.teams.members(team.id);
    for (const m of members) {
      if (m.appId === actorAppId) continue; // the lead completing the run finishes its own turn
      await this.agent
        .stop(teamMemberConversationId(m.appId, team.id, epoch.id))
        .catch((err: Error) => this.logger.warn(`stopping ${m.memberName} failed: ${err.message}`));
    }
    const updated = await this.teams.findById(team.id);
    await this.bus.publish(TeamChannels.updated, {
      teamId: team.id,
      ...(updated ? { team: updated, liveStatus: updated.status } : {}),
      changed: 'epoch-sealed',
    });
    return true;
  }

  /** Appends to the epoch's office record and announces it. */
  async record(
    teamId: string,
    epochId: string,
    kind: ActivityKind,
    actorAppId: string | null,
    targetAppId: string | null,
    subject: string,
    body: string | null = subject,
  ): Promise<TeamActivityDto> {
    const activity: TeamActivityDto = {
      id: randomUUID(),
      epochId,
      kind,
      actorAppId,
      targetAppId,
      subject: subjectOf(subject),
      body,
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    await this.teams.addActivity(activity);
    await this.bus.publish(TeamChannels.blackboard, { teamId, epochId, kind: 'activity', activity });
    return activity;
  }

  /** The epoch a message to a member goes to: the one named, else the running run, else the latest. */
  async epochFor(team: TeamDto, epochId?: string | null): Promise<TeamEpochDto | null> {
    if (epochId) {
      if (!UUID.test(epochId)) return null;
      const epoch = await this.teams.findEpoch(epochId.toLowerCase());
      return epoch && epoch.teamId === team.id ? epoch : null;
    }
    if (team.currentEpochId) return this.teams.findEpoch(team.currentEpochId);
    return this.teams.latestEpoch(team.id);
  }
}

export { TeamTexts };

/** How often a quiet run with open tasks reminds its lead before it is sealed. */
const REMINDERS = 2;
const REMINDER_SUBJECT = 'Reminder: ';
/** How many of one member's turns may be lost with their replica in one run before the run ends as an error. */
const LOST_TURNS_MAX = 3;
const RESUME_SUBJECT = 'Resumed: ';
const RESUME_BODY =
  'Your previous turn was cut short: the server running it stopped. Continue your work from where it was left (team_read_board shows the board).';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
