import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AppChannels } from '#contracts/apps.js';
import { ErrorCodes } from '#contracts/errors.js';
import {
  type CollabMode,
  type DeliveryReceipt,
  type EpochBoardDto,
  type EpochTrigger,
  type EscalationRouting,
  type MemberSourcing,
  TeamChannels,
  type TeamDetailDto,
  type TeamDto,
  type TeamEdgeDto,
  type TeamEpochDto,
  type TeamMemberDto,
  type TeamArtifactDto,
  type TeamPendingEscalationDto,
  teamMemberConversationId,
} from '#contracts/teams.js';
import { AgentService } from '../agent/agent.service.js';
import { EscalationAnswers } from '../apps/agent/escalation-answers.js';
import { AppsService } from '../apps/apps.service.js';
import { isUuid } from '../conversations/conversation-rules.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { DomainError } from '../errors/domain-error.js';
import type { App } from '../kernel/app.js';
import type { Message } from '../kernel/conversation.js';
import { AppRepository } from '../ports/app.repository.port.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { type TeamChanges, TeamRepository } from '../ports/team.repository.port.js';
import { SpacesService } from '../spaces/spaces.service.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import { ModelProvider } from '../ports/model-provider.port.js';
import { parseProposal, PROPOSE_SYSTEM_PROMPT, type ProposedMember, TeamTexts } from './team-rules.js';
import { TeamWork } from './team-work.js';

export interface MemberInput {
  appId?: unknown;
  memberName?: unknown;
  role?: unknown;
  duty?: unknown;
}

export interface CreateTeamInput {
  name?: unknown;
  goal?: unknown;
  owningSpaceId?: unknown;
  memberSourcing?: unknown;
  collabMode?: unknown;
  escalationRouting?: unknown;
  members?: unknown;
  leadAppId?: unknown;
}

const MEMBER_SOURCINGS: readonly MemberSourcing[] = ['manual', 'ai'];
const COLLAB_MODES: readonly CollabMode[] = ['structured', 'free'];
const ESCALATION_ROUTINGS: readonly EscalationRouting[] = ['user', 'lead'];

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw DomainError.invalid(`Missing required field: ${field}`);
  return value.trim();
}

function optionalText(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw DomainError.invalid(`${field} must be a string`);
  return value.trim() === '' ? null : value.trim();
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string, fallback: T): T {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    throw DomainError.invalid(`${field} must be one of ${allowed.join(', ')}`);
  return value as T;
}

const teamNotFound = () => DomainError.notFound(TeamTexts.teamNotFound, ErrorCodes.TEAM_NOT_FOUND);
const notAMember = () => DomainError.notFound(TeamTexts.notAMember, ErrorCodes.TEAM_MEMBER_NOT_FOUND);
const nameTaken = (name: string) => DomainError.conflict(TeamTexts.nameTaken(name), ErrorCodes.TEAM_MEMBER_NAME_TAKEN);

/** Teams of digital humans (docs/api/teams.md): records, roster, runs and what a person sends. */
@Injectable()
export class TeamsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Teams');
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly teams: TeamRepository,
    private readonly work: TeamWork,
    private readonly apps: AppsService,
    private readonly spaces: SpacesService,
    private readonly conversations: ConversationsService,
    private readonly agent: AgentService,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly models: ModelSourcesService,
    private readonly provider: ModelProvider,
    private readonly answers: EscalationAnswers,
    private readonly appRecords: AppRepository,
  ) {}

  onModuleInit(): void {
    // A member's question answered over the digital-human route resumes that member.
    this.answers.register((answered) => this.work.resumeFromAnswer(answered));
    // An uninstalled digital human leaves its teams (each replica hears it; one removes it).
    this.unsubscribe = this.bus.subscribe((event) => {
      if (event.channel !== AppChannels.listChanged) return;
      const data = event.data as { appId?: string; change?: string };
      if (data.change === 'uninstalled' && typeof data.appId === 'string') {
        void this.appLeft(data.appId).catch((err: Error) =>
          this.logger.warn(`removing an app from its teams: ${err.message}`),
        );
      }
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  private async appLeft(appId: string): Promise<void> {
    for (const teamId of await this.teams.removeAppEverywhere(appId)) await this.announce(teamId, 'members');
  }

  async list(spaceId?: string): Promise<TeamDto[]> {
    return this.teams.list(spaceId || undefined);
  }

  async get(teamId: string): Promise<TeamDto> {
    const team = isUuid(teamId) ? await this.teams.findById(teamId.toLowerCase()) : null;
    if (!team) throw teamNotFound();
    return team;
  }

  /**
   * A team with its members; with `memberSourcing: "ai"`, each member of `confirmedProposal`
   * (as `propose-members` answered it, perhaps edited) is installed as an AI-provisioned
   * digital human, deleted when the team is dissolved.
   */
  async create(input: CreateTeamInput | null | undefined, confirmedProposal?: unknown): Promise<TeamDto> {
    if (!input || typeof input !== 'object') throw DomainError.invalid('Missing required field: input');
    const name = text(input.name, 'name');
    const goal = text(input.goal, 'goal');
    const owningSpaceId = text(input.owningSpaceId, 'owningSpaceId');
    const memberSourcing = oneOf(input.memberSourcing, MEMBER_SOURCINGS, 'memberSourcing', 'manual');
    const collabMode = oneOf(input.collabMode, COLLAB_MODES, 'collabMode', 'free');
    const escalationRouting = oneOf(input.escalationRouting, ESCALATION_ROUTINGS, 'escalationRouting', 'user');
    if (input.members !== undefined && input.members !== null && !Array.isArray(input.members))
      throw DomainError.invalid('members must be an array');
    const leadAppId = optionalText(input.leadAppId, 'leadAppId');
    await this.spaces.get(owningSpaceId);
    const teamId = randomUUID();
    const now = new Date(this.clock.now()).toISOString();
    const members: TeamMemberDto[] = [];
    for (const raw of (input.members as MemberInput[] | undefined) ?? []) {
      members.push(await this.memberOf(teamId, raw, now));
    }
    if (memberSourcing === 'ai' && confirmedProposal !== undefined && confirmedProposal !== null) {
      if (!Array.isArray(confirmedProposal)) throw DomainError.invalid('confirmedProposal must be an array');
      const proposal = parseProposal(JSON.stringify(confirmedProposal));
      if (proposal.length !== confirmedProposal.length)
        throw DomainError.invalid('confirmedProposal: at most 5 members, each {memberName, role, responsibility}');
      for (const p of proposal) members.push(await this.provisionMember(teamId, name, owningSpaceId, p, now));
    }
    const names = new Set<string>();
    for (const m of members) {
      const key = m.memberName.toLowerCase();
      if (names.has(key)) throw nameTaken(m.memberName);
      names.add(key);
    }
    if (new Set(members.map((m) => m.appId)).size !== members.length)
      throw DomainError.invalid('members names the same digital human twice');
    let lead: TeamMemberDto | undefined;
    if (leadAppId) {
      lead = members.find((m) => m.appId === leadAppId);
      if (!lead) {
        lead = await this.memberOf(teamId, { appId: leadAppId, role: 'lead' }, now);
        if (names.has(lead.memberName.toLowerCase())) throw nameTaken(lead.memberName);
        members.unshift(lead);
      }
    } else {
      lead = await this.provisionLead(teamId, name, goal, owningSpaceId, now, names);
      members.unshift(lead);
    }
    lead.isLead = true;
    const team: TeamDto = {
      id: teamId,
      name,
      owningSpaceId,
      goal,
      leadAppId: lead.appId,
      memberSourcing,
      collabMode,
      escalationRouting,
      status: 'idle',
      currentEpochId: null,
      createdAt: now,
      updatedAt: now,
    };
    if ((await this.teams.create(team, members)) === 'name-taken') throw nameTaken('(one of the members)');
    await this.announce(team.id, 'created');
    return team;
  }

  /** The lead no member was named for: a digital human whose prompt leads this team, dissolved with it. */
  private async provisionLead(
    teamId: string,
    name: string,
    goal: string,
    spaceId: string,
    now: string,
    names: Set<string>,
  ): Promise<TeamMemberDto> {
    const app = await this.apps.install(
      {
        spec: {
          spec_version: '1',
          name: `team-lead-${teamId.slice(0, 8)}`,
          display_name: `${name} lead`,
          version: '1.0.0',
          author: 'teams',
          description: `Leads the team "${name}".`,
          type: 'automation',
          system_prompt: `You lead the team "${name}". Its goal: ${goal}\nPlan the work, hand out tasks, follow up, and finish the run with a summary.`,
        },
        spaceId,
      },
      false,
    );
    let memberName = 'Lead';
    for (let i = 2; names.has(memberName.toLowerCase()); i++) memberName = `Lead ${i}`;
    return {
      teamId,
      appId: app.id,
      memberName,
      role: 'lead',
      duty: null,
      isLead: true,
      aiProvisioned: true,
      addedAt: now,
    };
  }

  /** A proposed member as a digital human of its own, provisioned for this team. */
  private async provisionMember(
    teamId: string,
    teamName: string,
    spaceId: string,
    proposed: ProposedMember,
    now: string,
  ): Promise<TeamMemberDto> {
    const app = await this.apps.install(
      {
        spec: {
          spec_version: '1',
          name: `team-${teamId.slice(0, 8)}-${proposed.memberName.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
          display_name: proposed.memberName,
          version: '1.0.0',
          author: 'teams',
          description: `${proposed.role} in the team "${teamName}".`,
          type: 'automation',
          system_prompt: `You are ${proposed.memberName}, ${proposed.role}. Your responsibility: ${proposed.responsibility}`,
        },
        spaceId,
      },
      false,
    );
    return {
      teamId,
      appId: app.id,
      memberName: proposed.memberName,
      role: proposed.role,
      duty: proposed.responsibility,
      isLead: false,
      aiProvisioned: true,
      addedAt: now,
    };
  }

  /** Asks the current model for at most 5 members (name, role, responsibility) for the goal. */
  async proposeMembers(goal: unknown, owningSpaceId: unknown): Promise<ProposedMember[]> {
    const goalText = text(goal, 'goal');
    await this.spaces.get(text(owningSpaceId, 'owningSpaceId'));
    const model = await this.models.current();
    if (!model) throw new DomainError('unavailable', 'No model is configured.', ErrorCodes.NO_MODEL);
    const parts: string[] = [];
    try {
      for await (const event of this.provider.stream(model.endpoint, {
        model: model.model,
        system: PROPOSE_SYSTEM_PROMPT,
        messages: [{ role: 'user', content: [{ type: 'text', text: `The team's goal: ${goalText}` }] }],
        tools: [],
        maxOutputTokens: 2048,
        reasoningEffort: 'off',
        signal: AbortSignal.timeout(120_000),
      })) {
        if (event.type === 'text_end') parts.push(event.text);
      }
    } catch (err) {
      throw new DomainError('unavailable', `The model could not propose members: ${(err as Error).message}`);
    }
    const proposal = parseProposal(parts.join('\n'));
    if (proposal.length === 0) throw new DomainError('unavailable', 'The model proposed no members; try again.');
    return proposal;
  }

  private async memberOf(teamId: string, raw: MemberInput, now: string): Promise<TeamMemberDto> {
    if (!raw || typeof raw !== 'object') throw DomainError.invalid('Missing required field: appId');
    const appId = text(raw.appId, 'appId');
    const app = await this.installedApp(appId);
    return {
      teamId,
      appId: app.id,
      memberName: optionalText(raw.memberName, 'memberName') ?? app.spec.display_name ?? app.spec.name,
      role: optionalText(raw.role, 'role') ?? 'member',
      duty: optionalText(raw.duty, 'duty'),
      isLead: false,
      aiProvisioned: false,
      addedAt: now,
    };
  }

  private async installedApp(appId: string): Promise<App> {
    const app = await this.apps.get(appId);
    if (app.status === 'uninstalled')
      throw DomainError.invalid('The digital human is uninstalled; reinstall it first.');
    return app;
  }

  async update(teamId: string, patch: Record<string, unknown>): Promise<TeamDto> {
    const team = await this.get(teamId);
    const changes: TeamChanges = {};
    if (patch.name !== undefined) changes.name = text(patch.name, 'name');
    if (patch.goal !== undefined) changes.goal = text(patch.goal, 'goal');
    if (patch.memberSourcing !== undefined)
      changes.memberSourcing = oneOf(patch.memberSourcing, MEMBER_SOURCINGS, 'memberSourcing', team.memberSourcing);
    if (patch.collabMode !== undefined)
      changes.collabMode = oneOf(patch.collabMode, COLLAB_MODES, 'collabMode', team.collabMode);
    if (patch.escalationRouting !== undefined)
      changes.escalationRouting = oneOf(
        patch.escalationRouting,
        ESCALATION_ROUTINGS,
        'escalationRouting',
        team.escalationRouting,
      );
    if (patch.leadAppId !== undefined) {
      const leadAppId = text(patch.leadAppId, 'leadAppId');
      if (!(await this.teams.members(teamId)).some((m) => m.appId === leadAppId))
        throw DomainError.invalid(TeamTexts.leadNotMember);
      changes.leadAppId = leadAppId;
    }
    const updated = await this.teams.update(teamId, changes);
    if (!updated) throw teamNotFound();
    await this.announce(teamId, 'team', updated);
    return updated;
  }

  /** Dissolve: the running run stops, the team goes, its AI-provisioned members are deleted, others kept. */
  async dissolve(teamId: string): Promise<void> {
    const team = await this.get(teamId);
    const members = await this.teams.members(teamId);
    if (team.currentEpochId) {
      const epoch = await this.teams.findEpoch(team.currentEpochId);
      if (epoch) await this.work.stop(team, epoch);
    }
    if (!(await this.teams.delete(teamId))) throw teamNotFound();
    await this.bus.publish(TeamChannels.updated, { teamId, removed: true });
    for (const m of members.filter((m) => m.aiProvisioned)) {
      await this.apps.deletePermanently(m.appId).catch((err: Error) => this.logger.warn(`dissolve: ${err.message}`));
    }
  }

  async detail(teamId: string): Promise<TeamDetailDto> {
    const team = await this.get(teamId);
    const [members, edges] = await Promise.all([this.teams.members(teamId), this.teams.edges(teamId)]);
    const epoch = await this.work.epochFor(team);
    const [tasks, findings, activities] = epoch
      ? await Promise.all([this.teams.tasks(epoch.id), this.teams.findings(epoch.id), this.teams.activities(epoch.id)])
      : [[], [], []];
    return { team, members, edges, tasks, findings, activities, pendingEscalations: await this.pending(team, members) };
  }

  /** The members' questions of this team still waiting for the person. */
  private async pending(team: TeamDto, members: TeamMemberDto[]): Promise<TeamPendingEscalationDto[]> {
    const out: TeamPendingEscalationDto[] = [];
    for (const m of members) {
      const entryId = (await this.appRecords.findById(m.appId))?.automation.pendingEscalationId;
      if (!entryId) continue;
      const entry = await this.appRecords.findActivity(m.appId, entryId);
      const c = entry?.content ?? {};
      if (c.teamId !== team.id || typeof c.epochId !== 'string') continue;
      out.push({
        appId: m.appId,
        memberName: m.memberName,
        entryId,
        epochId: c.epochId,
        question: typeof c.question === 'string' ? c.question : '',
        choices: Array.isArray(c.choices) ? c.choices.filter((x): x is string => typeof x === 'string') : [],
      });
    }
    return out;
  }

  async addMember(teamId: string, raw: MemberInput): Promise<TeamMemberDto> {
    await this.get(teamId);
    const member = await this.memberOf(teamId, raw, new Date(this.clock.now()).toISOString());
    const added = await this.teams.addMember(member);
    if (added === 'name-taken') throw nameTaken(member.memberName);
    if (added === 'already-member') throw DomainError.conflict(TeamTexts.alreadyMember);
    await this.announce(teamId, 'members');
    return member;
  }

  async updateMember(teamId: string, appId: string, patch: Record<string, unknown>): Promise<TeamMemberDto> {
    await this.get(teamId);
    const changes = {
      ...(patch.memberName !== undefined ? { memberName: text(patch.memberName, 'memberName') } : {}),
      ...(patch.role !== undefined ? { role: text(patch.role, 'role') } : {}),
      ...(patch.duty !== undefined ? { duty: optionalText(patch.duty, 'duty') } : {}),
    };
    const updated = isUuid(appId) ? await this.teams.updateMember(teamId, appId, changes) : null;
    if (updated === 'name-taken') throw nameTaken(changes.memberName ?? '');
    if (!updated) throw notAMember();
    await this.announce(teamId, 'members');
    return updated;
  }

  async removeMember(teamId: string, appId: string): Promise<void> {
    await this.get(teamId);
    if (!isUuid(appId) || !(await this.teams.removeMember(teamId, appId))) throw notAMember();
    await this.announce(teamId, 'members');
  }

  async putEdges(teamId: string, edges: unknown): Promise<TeamEdgeDto[]> {
    await this.get(teamId);
    if (!Array.isArray(edges)) throw DomainError.invalid('Missing required field: edges');
    const members = new Set((await this.teams.members(teamId)).map((m) => m.appId));
    const parsed = edges.map((e: unknown) => {
      const edge = (e ?? {}) as { fromAppId?: unknown; toAppId?: unknown };
      const fromAppId = text(edge.fromAppId, 'edges[].fromAppId').toLowerCase();
      const toAppId = text(edge.toAppId, 'edges[].toAppId').toLowerCase();
      if (!members.has(fromAppId) || !members.has(toAppId)) throw DomainError.invalid(TeamTexts.edgeNotMember);
      return { fromAppId, toAppId };
    });
    await this.teams.replaceEdges(teamId, parsed);
    await this.announce(teamId, 'edges');
    return this.teams.edges(teamId);
  }

  /**
   * Opens a run epoch and wakes the lead with the goal; 409 while a run is running. A trigger
   * names its type, a title for the epoch and what fired it (added to the lead's message).
   */
  async run(
    teamId: string,
    fired: {
      triggerType: EpochTrigger;
      title?: string;
      note?: string;
      /** A fixed id (a schedule's occurrence): opening it twice opens it once. */
      epochId?: string;
    } = { triggerType: 'manual' },
  ): Promise<TeamEpochDto> {
    const team = await this.get(teamId);
    const members = await this.teams.members(teamId);
    const lead = members.find((m) => m.appId === team.leadAppId) ?? members.find((m) => m.isLead);
    if (!lead) throw DomainError.invalid('The team has no lead');
    const epoch: TeamEpochDto = {
      id: fired.epochId ?? randomUUID(),
      teamId,
      lifecycle: 'run',
      startedAt: new Date(this.clock.now()).toISOString(),
      endedAt: null,
      endReason: null,
      outcome: null,
      summary: null,
      triggerType: fired.triggerType,
      title: fired.title ?? null,
    };
    if (!(await this.teams.openRunEpoch(epoch)))
      throw DomainError.conflict(TeamTexts.runActive, ErrorCodes.TEAM_RUN_STATE);
    const running = (await this.teams.findById(teamId)) ?? team;
    await this.work.armDeadline(epoch);
    await this.announce(teamId, 'epoch-opened', running);
    const note = fired.note ? `\n${fired.note}` : '';
    await this.work.send(running, epoch, null, lead, `The team's goal: ${team.goal}${note}\nStart the run.`, 0);
    return epoch;
  }

  /** Seals the running run (`stopped`) and stops its members' turns. */
  async pause(teamId: string): Promise<TeamEpochDto> {
    const team = await this.get(teamId);
    const epoch = team.currentEpochId ? await this.teams.findEpoch(team.currentEpochId) : null;
    if (!epoch || epoch.endedAt) throw DomainError.conflict(TeamTexts.noRunning, ErrorCodes.TEAM_RUN_STATE);
    await this.work.stop(team, epoch);
    return (await this.teams.findEpoch(epoch.id)) ?? epoch;
  }

  /** The team's conversation epochs (a person chatting with the team), newest first. */
  async listConversations(teamId: string): Promise<TeamEpochDto[]> {
    return (await this.epochs(teamId)).filter((e) => e.lifecycle === 'conversation');
  }

  /** Opens a conversation epoch: messages sent with its `epochId` go to its members' transcripts of it; it stays open until archived. */
  async openConversation(teamId: string, title: unknown): Promise<TeamEpochDto> {
    await this.get(teamId);
    const epoch: TeamEpochDto = {
      id: randomUUID(),
      teamId,
      lifecycle: 'conversation',
      startedAt: new Date(this.clock.now()).toISOString(),
      endedAt: null,
      endReason: null,
      outcome: null,
      summary: null,
      triggerType: 'manual',
      title: optionalText(title, 'title'),
    };
    await this.teams.openConversationEpoch(epoch);
    return epoch;
  }

  async renameConversation(teamId: string, epochId: string, title: unknown): Promise<TeamEpochDto> {
    const epoch = await this.conversationOf(teamId, epochId);
    await this.teams.renameEpoch(epoch.id, text(title, 'title'));
    return (await this.teams.findEpoch(epoch.id)) ?? epoch;
  }

  /** Archives (seals) a conversation epoch; its records are kept. */
  async archiveConversation(teamId: string, epochId: string): Promise<void> {
    const team = await this.get(teamId);
    const epoch = await this.conversationOf(teamId, epochId);
    if (!epoch.endedAt) await this.work.archive(team, epoch);
  }

  private async conversationOf(teamId: string, epochId: string): Promise<TeamEpochDto> {
    await this.get(teamId);
    const epoch = isUuid(epochId) ? await this.teams.findEpoch(epochId.toLowerCase()) : null;
    if (!epoch || epoch.teamId !== teamId || epoch.lifecycle !== 'conversation')
      throw DomainError.notFound(TeamTexts.epochNotFound);
    return epoch;
  }

  async epochs(teamId: string): Promise<TeamEpochDto[]> {
    await this.get(teamId);
    return this.teams.listEpochs(teamId);
  }

  async board(teamId: string, epochId: string): Promise<EpochBoardDto> {
    await this.get(teamId);
    const epoch = isUuid(epochId) ? await this.teams.findEpoch(epochId.toLowerCase()) : null;
    if (!epoch || epoch.teamId !== teamId) throw DomainError.notFound(TeamTexts.epochNotFound);
    const [tasks, findings, members, activities] = await Promise.all([
      this.teams.tasks(epochId),
      this.teams.findings(epochId),
      this.teams.members(teamId),
      this.teams.activities(epochId),
    ]);
    return { epoch, tasks, findings, members, activities };
  }

  /**
   * The files the members produced in an epoch: tasks' `resultRef`s, findings' `ref`s, and files
   * their turns wrote (`Write`/`Edit` calls that did not fail, as their transcripts record them),
   * each path once per kind (its latest record): tasks', then findings', then files.
   */
  async artifacts(teamId: string, epochId: string): Promise<TeamArtifactDto[]> {
    const { epoch, tasks, findings, members } = await this.board(teamId, epochId);
    const out = new Map<string, TeamArtifactDto>();
    const add = (a: TeamArtifactDto) => {
      out.delete(`${a.kind}\n${a.ref}`);
      out.set(`${a.kind}\n${a.ref}`, a);
    };
    for (const t of tasks) {
      if (t.resultRef)
        add({
          kind: 'task_result',
          ref: t.resultRef,
          appId: t.assigneeAppId,
          sourceId: t.id,
          title: t.title,
          createdAt: t.updatedAt,
        });
    }
    for (const f of findings) {
      if (f.ref)
        add({
          kind: 'finding',
          ref: f.ref,
          appId: f.authorAppId,
          sourceId: f.id,
          title: f.body.split('\n')[0]!.slice(0, 80),
          createdAt: f.createdAt,
        });
    }
    for (const m of members) {
      const conversation = await this.conversations.findById(teamMemberConversationId(m.appId, teamId, epoch.id));
      if (!conversation) continue;
      const { messages } = await this.conversations.get(conversation.spaceId, conversation.id);
      for (const message of messages.filter((x) => x.role === 'assistant')) {
        const thoughts = await this.conversations.thoughts(conversation.spaceId, conversation.id, message.id);
        const failed = new Set(thoughts.filter((t) => t.type === 'tool_result' && t.isError).map((t) => t.toolUseId));
        for (const t of thoughts) {
          const path = t.toolInput?.file_path;
          if (t.type !== 'tool_use' || (t.toolName !== 'Write' && t.toolName !== 'Edit')) continue;
          if (typeof path !== 'string' || (t.toolUseId && failed.has(t.toolUseId))) continue;
          add({ kind: 'file', ref: path, appId: m.appId, sourceId: message.id, title: t.toolName, createdAt: t.timestamp });
        }
      }
    }
    return [...out.values()];
  }

  /** A member's transcript in an epoch (the current or latest one unless named). */
  async chatMessages(teamId: string, appId: unknown, epochId?: string | null): Promise<Message[]> {
    const team = await this.get(teamId);
    const member = await this.member(teamId, text(appId, 'appId'));
    const epoch = await this.work.epochFor(team, epochId);
    if (!epoch) return [];
    const conversation = await this.conversations.findById(teamMemberConversationId(member.appId, team.id, epoch.id));
    if (!conversation) return [];
    return (await this.conversations.get(conversation.spaceId, conversation.id)).messages;
  }

  /** A person's message to one member, in the named epoch or the current (else latest) run. */
  async sendToMember(
    teamId: string,
    appId: string,
    message: unknown,
    epochId?: string | null,
  ): Promise<{ epochId: string; delivery: DeliveryReceipt }> {
    const team = await this.get(teamId);
    const member = await this.member(teamId, appId);
    const body = text(message, 'message');
    const epoch = await this.work.epochFor(team, epochId);
    if (!epoch) throw DomainError.invalid(TeamTexts.noRun);
    const sent = await this.work.send(team, epoch, null, member, body, 0);
    return { epochId: epoch.id, delivery: 'breach' in sent ? 'undelivered' : sent.delivery };
  }

  /** Stops that member's turn in the current (else latest) epoch. */
  async stopMember(teamId: string, appId: string): Promise<void> {
    const team = await this.get(teamId);
    await this.member(teamId, appId);
    const epoch = await this.work.epochFor(team);
    if (epoch) await this.agent.stop(teamMemberConversationId(appId, teamId, epoch.id));
  }

  private async member(teamId: string, appId: string): Promise<TeamMemberDto> {
    const member = isUuid(appId)
      ? (await this.teams.members(teamId)).find((m) => m.appId === appId.toLowerCase())
      : undefined;
    if (!member) throw notAMember();
    return member;
  }

  private async announce(teamId: string, changed: string, team?: TeamDto): Promise<void> {
    const current = team ?? (await this.teams.findById(teamId)) ?? undefined;
    await this.bus.publish(TeamChannels.updated, {
      teamId,
      changed,
      ...(current ? { team: current, liveStatus: current.status } : {}),
    });
  }
}
