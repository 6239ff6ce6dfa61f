import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import {
  TeamChannels,
  type TeamDto,
  type TeamEdgeDto,
  type TeamMemberDto,
  teamMemberConversationId,
} from '#contracts/teams.js';
import { conversationRecording, lastContextTokens } from '../agent/chat-plan-builder.js';
import { buildHistory } from '../agent/context-builder.js';
import type { TurnIO, TurnPlan } from '../agent/engine/turn-plan.js';
import { ToolRegistry } from '../agent/tool-registry.js';
import {
  isRefusal,
  refuseTurn,
  skipTurn,
  TurnPlanBuilder,
  type TurnRefusal,
  type UnplannedEnding,
} from '../agent/turn-plan-builder.js';
import { TurnTexts } from '../agent/turn-endings.js';
import { TurnPlanBuilders } from '../agent/turn-plan-builders.js';
import { conversationPin, TurnPreamble } from '../agent/turn-preamble.js';
import { AppData } from '../apps/app-data.js';
import { AppsService } from '../apps/apps.service.js';
import { appModelPin, appSystemPrompt } from '../apps/agent/app-prompt.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { TeamRepository } from '../ports/team.repository.port.js';
import { type TurnRecord, TurnRepository } from '../ports/turn.repository.port.js';
import { mayMessage } from './team-rules.js';
import { teamTools } from './team-tools.js';
import { type MemberTurnRequest, TeamWork } from './team-work.js';

const ENDED_POLL_MS = 200;
const ENDED_WAIT_MS = 30_000;

/**
 * A member's turn in a team epoch (`team-member`), in its transcript
 * `app-chat:<appId>:team:<teamId>:<epochId>`: the member's own prompt and tools plus the team's
 * briefing and the member tools. Mail that arrives while it works joins at its next step; when
 * the turn ends, mail that came too late starts the next turn and a quiet run is sealed.
 */
@Injectable()
export class TeamMemberPlanBuilder extends TurnPlanBuilder implements OnModuleInit {
  readonly kind = 'team-member' as const;
  private readonly logger = new Logger('Teams');

  constructor(
    private readonly builders: TurnPlanBuilders,
    private readonly apps: AppsService,
    private readonly data: AppData,
    private readonly conversations: ConversationsService,
    private readonly preamble: TurnPreamble,
    private readonly tools: ToolRegistry,
    private readonly clock: Clock,
    private readonly bus: EventBus,
    private readonly teams: TeamRepository,
    private readonly turns: TurnRepository,
    private readonly work: TeamWork,
  ) {
    super();
  }

  onModuleInit(): void {
    this.builders.register(this);
  }

  async build(turn: TurnRecord, io: TurnIO): Promise<TurnPlan | TurnRefusal> {
    const req = requestOf(turn);
    if (!req) return refuseTurn('This turn names no team member.', { errorCode: 'NOT_FOUND' });
    const [team, epoch, members, edges] = await Promise.all([
      this.teams.findById(req.teamId),
      this.teams.findEpoch(req.epochId),
      this.teams.members(req.teamId),
      this.teams.edges(req.teamId),
    ]);
    const me = members.find((m) => m.appId === req.appId);
    if (!team || !epoch || !me)
      return refuseTurn('The team or this member no longer exists.', { errorCode: 'NOT_FOUND' });
    if (epoch.endedAt) return refuseTurn('The run has ended.', { errorCode: 'NOT_FOUND' });
    const app = await this.apps.get(me.appId).catch(() => null);
    if (!app) return refuseTurn('The digital human of this member no longer exists.', { errorCode: 'NOT_FOUND' });
    // The mail waiting now opens this turn (written into the transcript as it is taken).
    const opening = await this.work.takeMail(req, false);
    const { conversation, messages, space: read } = await this.conversations.forTurn(turn.spaceId, turn.conversationId);
    // A turn queued for mail that an earlier turn took meanwhile has nothing to answer.
    // It ends quietly (nothing lost, nothing to say); what waits for the member after it still goes on.
    if (!opening && messages[messages.length - 1]?.role !== 'user')
      return skipTurn("Nothing waits in this member's mailbox.", () => this.work.afterTurn(req));
    const ground = await this.preamble.prepareWithSkills({
      turn,
      io,
      messages,
      pins: [conversationPin(conversation), appModelPin(app)],
      space: read,
    });
    if (isRefusal(ground)) return ground;
    const { space, skills } = ground;
    io.historyHolds(messages.map((m) => m.id));
    let depth = Math.max(req.depth, opening?.depth ?? 0);
    const memberIo: TurnIO = {
      ...io,
      // Mail that came while this turn works joins its next step, like a person's input.
      takePendingInput: async () => {
        const inputs = await io.takePendingInput();
        const mail = await this.work.takeMail(req, true);
        if (!mail) return inputs;
        depth = Math.max(depth, mail.depth);
        return [...inputs, mail.text];
      },
    };
    const tools = this.tools.builtins({ bash: false }).with(
      ...skills.tools,
      ...teamTools({
        team,
        epochId: epoch.id,
        me,
        members,
        edges,
        depth: () => depth,
        work: this.work,
        teams: this.teams,
        bus: this.bus,
        clock: this.clock,
      }),
    );
    const recording = conversationRecording(this.conversations, turn);
    const announce = () =>
      this.bus.publish(TeamChannels.memberHistory, { teamId: team.id, appId: me.appId, epochId: epoch.id });
    return {
      system: appSystemPrompt({
        app,
        workspacePath: space.path,
        now: new Date(this.clock.now()),
        memory: await this.data.readMemory(app.id, app.spaceId, space),
        toolNames: tools.names(),
        closing: briefing(team, me, members, edges),
      }),
      tools,
      history: buildHistory(messages),
      model: { ...ground.model, effort: 'off' },
      workspace: space,
      contextTokens: lastContextTokens(messages),
      io: memberIo,
      app,
      hooks: {
        ...recording,
        onComplete: async (result) => {
          await recording.onComplete(result);
          await announce();
        },
        onFailure: async (failure) => {
          await recording.onFailure(failure);
          await announce();
          // The turn is marked ended after this hook: what follows it waits for that.
          void this.afterEnded(turn);
        },
        afterCompleted: () => this.work.afterTurn(req),
      },
    };
  }

  override async endedWithoutPlan(turn: TurnRecord, ending: UnplannedEnding): Promise<void> {
    const req = requestOf(turn);
    if (!req) return;
    // Its replica died mid-turn (the reaper ended it): the member picks its work up again here.
    if (ending.error === TurnTexts.replicaLost) await this.work.resumeLost(req);
    await this.work.afterTurn(req);
  }

  private async afterEnded(turn: TurnRecord): Promise<void> {
    const req = requestOf(turn);
    if (!req) return;
    const deadline = this.clock.now() + ENDED_WAIT_MS;
    while ((await this.turns.findActive(turn.conversationId))?.id === turn.id && this.clock.now() < deadline) {
      await new Promise((r) => setTimeout(r, ENDED_POLL_MS));
    }
    await this.work.afterTurn(req).catch((err: Error) => this.logger.warn(`after a member turn: ${err.message}`));
  }
}

function requestOf(turn: TurnRecord): MemberTurnRequest | null {
  const { teamId, epochId, appId, depth } = turn.request as Partial<MemberTurnRequest>;
  if (typeof teamId !== 'string' || typeof epochId !== 'string' || typeof appId !== 'string') return null;
  if (turn.conversationId !== teamMemberConversationId(appId, teamId, epochId)) return null;
  return { teamId, epochId, appId, depth: typeof depth === 'number' ? depth : 0 };
}

/** The team as this member sees it: goal, roster, whom it may message, and how the work goes. */
function briefing(team: TeamDto, me: TeamMemberDto, members: TeamMemberDto[], edges: TeamEdgeDto[]): string[] {
  const reachable = members.filter(
    (m) => m.appId !== me.appId && mayMessage(team.collabMode, edges, me.appId, m.appId),
  );
  const lines = [
    `You are "${me.memberName}" (${me.role}${me.isLead ? ', the lead' : ''}) in the team "${team.name}".`,
    `The team's goal: ${team.goal}`,
    ...(me.duty ? [`Your duty: ${me.duty}`] : []),
    'Members:',
    ...members.map((m) => `- ${m.memberName}: ${m.role}${m.isLead ? ' (lead)' : ''}${m.duty ? `, ${m.duty}` : ''}`),
    `You may message: ${reachable.map((m) => m.memberName).join(', ') || 'nobody'}.`,
    'What you write in your reply reaches nobody: only team_send delivers a message to a teammate.',
    'The board (team_read_board) holds the tasks and findings; keep your tasks up to date with team_update_task.',
  ];
  if (me.isLead) {
    lines.push(
      'As the lead: break the goal into tasks (team_post_task), tell each assignee with team_send, and call team_complete with a summary when the work is done.',
    );
  } else {
    lines.push('When you finish a task, mark it done and tell whoever asked for it with team_send.');
  }
  return lines;
}
