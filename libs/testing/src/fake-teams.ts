import type {
  BoardFindingDto,
  BoardTaskDto,
  TeamActivityDto,
  TeamDto,
  TeamEdgeDto,
  TeamEpochDto,
  TeamMemberDto,
} from '#contracts/teams.js';
import {
  type EpochSeal,
  type MailboxMessage,
  type MailTranscript,
  type MemberChanges,
  type TaskChanges,
  type TeamChanges,
  TeamRepository,
  type TeamTriggerRecord,
} from '#core/ports/team.repository.port.js';

/** TeamRepository in memory, with the adapter's rules (unique names, one open run, each message taken once). */
export class FakeTeamRepository extends TeamRepository {
  readonly teams = new Map<string, TeamDto>();
  readonly memberRows: TeamMemberDto[] = [];
  readonly edgeRows = new Map<string, TeamEdgeDto[]>();
  readonly epochs = new Map<string, TeamEpochDto & { messageCount: number }>();
  readonly taskRows: BoardTaskDto[] = [];
  readonly findingRows: BoardFindingDto[] = [];
  readonly activityRows: TeamActivityDto[] = [];
  readonly mailbox: Array<MailboxMessage & { taken: boolean }> = [];

  private nameTaken(member: TeamMemberDto, except?: string): boolean {
    return this.memberRows.some(
      (m) =>
        m.teamId === member.teamId &&
        m.appId !== except &&
        m.memberName.toLowerCase() === member.memberName.toLowerCase(),
    );
  }

  async create(team: TeamDto, members: TeamMemberDto[]): Promise<'created' | 'name-taken'> {
    const names = new Set(members.map((m) => m.memberName.toLowerCase()));
    if (names.size !== members.length) return 'name-taken';
    this.teams.set(team.id, { ...team });
    this.memberRows.push(...members.map((m) => ({ ...m })));
    return 'created';
  }

  async findById(teamId: string): Promise<TeamDto | null> {
    const team = this.teams.get(teamId);
    return team ? { ...team } : null;
  }

  async list(spaceId?: string): Promise<TeamDto[]> {
    return [...this.teams.values()].filter((t) => spaceId === undefined || t.owningSpaceId === spaceId);
  }

  async update(teamId: string, changes: TeamChanges): Promise<TeamDto | null> {
    const team = this.teams.get(teamId);
    if (!team) return null;
    const defined = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
    Object.assign(team, defined);
    return { ...team };
  }

  async delete(teamId: string): Promise<boolean> {
    return this.teams.delete(teamId);
  }

  async members(teamId: string): Promise<TeamMemberDto[]> {
    return this.memberRows.filter((m) => m.teamId === teamId).map((m) => ({ ...m }));
  }

  async addMember(member: TeamMemberDto): Promise<'added' | 'name-taken' | 'already-member'> {
    if (this.memberRows.some((m) => m.teamId === member.teamId && m.appId === member.appId)) return 'already-member';
    if (this.nameTaken(member)) return 'name-taken';
    this.memberRows.push({ ...member });
    return 'added';
  }

  async updateMember(
    teamId: string,
    appId: string,
    changes: MemberChanges,
  ): Promise<TeamMemberDto | null | 'name-taken'> {
    const member = this.memberRows.find((m) => m.teamId === teamId && m.appId === appId);
    if (!member) return null;
    if (changes.memberName && this.nameTaken({ ...member, memberName: changes.memberName }, appId)) return 'name-taken';
    Object.assign(member, Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)));
    return { ...member };
  }

  async removeMember(teamId: string, appId: string): Promise<boolean> {
    const at = this.memberRows.findIndex((m) => m.teamId === teamId && m.appId === appId);
    if (at < 0) return false;
    this.memberRows.splice(at, 1);
    return true;
  }

  async removeAppEverywhere(appId: string): Promise<string[]> {
    const teams = this.memberRows.filter((m) => m.appId === appId).map((m) => m.teamId);
    for (const teamId of teams) await this.removeMember(teamId, appId);
    return teams;
  }

  async edges(teamId: string): Promise<TeamEdgeDto[]> {
    return [...(this.edgeRows.get(teamId) ?? [])];
  }

  async replaceEdges(teamId: string, edges: TeamEdgeDto[]): Promise<void> {
    this.edgeRows.set(teamId, [...edges]);
  }

  async openRunEpoch(epoch: TeamEpochDto): Promise<boolean> {
    const open = [...this.epochs.values()].some(
      (e) => e.teamId === epoch.teamId && e.lifecycle === 'run' && e.endedAt === null,
    );
    if (open) return false;
    this.epochs.set(epoch.id, { ...epoch, messageCount: 0 });
    await this.update(epoch.teamId, { status: 'running' });
    const team = this.teams.get(epoch.teamId);
    if (team) team.currentEpochId = epoch.id;
    return true;
  }

  async openConversationEpoch(epoch: TeamEpochDto): Promise<void> {
    this.epochs.set(epoch.id, { ...epoch, lifecycle: 'conversation', messageCount: 0 });
  }

  async renameEpoch(epochId: string, title: string | null): Promise<boolean> {
    const epoch = this.epochs.get(epochId);
    if (!epoch) return false;
    epoch.title = title;
    return true;
  }

  async findEpoch(epochId: string): Promise<TeamEpochDto | null> {
    const epoch = this.epochs.get(epochId);
    if (!epoch) return null;
    const { messageCount: _count, ...dto } = epoch;
    return dto;
  }

  async listEpochs(teamId: string): Promise<TeamEpochDto[]> {
    const found = await Promise.all(
      [...this.epochs.values()].filter((e) => e.teamId === teamId).map((e) => this.findEpoch(e.id)),
    );
    return (found as TeamEpochDto[]).sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  }

  async openRunEpochs(): Promise<TeamEpochDto[]> {
    return [...this.epochs.values()]
      .filter((e) => e.lifecycle === 'run' && !e.endedAt)
      .map(({ messageCount: _count, ...e }) => e);
  }

  async latestEpoch(teamId: string): Promise<TeamEpochDto | null> {
    return (await this.listEpochs(teamId))[0] ?? null;
  }

  async seal(epochId: string, seal: EpochSeal): Promise<TeamEpochDto | null> {
    const epoch = this.epochs.get(epochId);
    if (!epoch || epoch.endedAt !== null) return null;
    Object.assign(epoch, {
      endedAt: new Date().toISOString(),
      endReason: seal.endReason,
      outcome: seal.outcome,
      summary: seal.summary,
    });
    const team = this.teams.get(epoch.teamId);
    if (team && team.currentEpochId === epochId) Object.assign(team, { currentEpochId: null, status: seal.teamStatus });
    return this.findEpoch(epochId);
  }

  async countMessage(epochId: string): Promise<number> {
    const epoch = this.epochs.get(epochId);
    if (!epoch) return 0;
    return ++epoch.messageCount;
  }

  async addTask(task: BoardTaskDto): Promise<void> {
    this.taskRows.push({ ...task });
  }

  async updateTask(epochId: string, taskId: string, changes: TaskChanges): Promise<BoardTaskDto | null> {
    const task = this.taskRows.find((t) => t.epochId === epochId && t.id === taskId);
    if (!task) return null;
    Object.assign(task, Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)));
    return { ...task };
  }

  async tasks(epochId: string): Promise<BoardTaskDto[]> {
    return this.taskRows.filter((t) => t.epochId === epochId).map((t) => ({ ...t }));
  }

  async addFinding(finding: BoardFindingDto): Promise<void> {
    this.findingRows.push({ ...finding });
  }

  async findings(epochId: string): Promise<BoardFindingDto[]> {
    return this.findingRows.filter((f) => f.epochId === epochId);
  }

  async addActivity(activity: TeamActivityDto): Promise<void> {
    this.activityRows.push({ ...activity });
  }

  async activities(epochId: string): Promise<TeamActivityDto[]> {
    return this.activityRows.filter((a) => a.epochId === epochId);
  }

  async enqueue(message: MailboxMessage): Promise<void> {
    this.mailbox.push({ ...message, taken: false });
  }

  /** What takeWaiting wrote into transcripts, by conversation id. */
  readonly transcripts = new Map<string, Array<{ content: string; meta: Record<string, unknown> }>>();

  async takeWaiting(epochId: string, toAppId: string, into: MailTranscript): Promise<MailboxMessage[]> {
    const waiting = this.mailbox.filter((m) => m.epochId === epochId && m.toAppId === toAppId && !m.taken);
    if (waiting.length === 0) return [];
    for (const m of waiting) m.taken = true;
    const mail = waiting.map(({ taken: _taken, ...m }) => m);
    const written = this.transcripts.get(into.conversationId) ?? [];
    written.push(into.render(mail));
    this.transcripts.set(into.conversationId, written);
    return mail;
  }

  async hasWaiting(epochId: string, toAppId: string): Promise<boolean> {
    return this.mailbox.some((m) => m.epochId === epochId && m.toAppId === toAppId && !m.taken);
  }

  async anyWaiting(epochId: string): Promise<boolean> {
    return this.mailbox.some((m) => m.epochId === epochId && !m.taken);
  }

  async waitingRecipients(epochId: string): Promise<string[]> {
    return [...new Set(this.mailbox.filter((m) => m.epochId === epochId && !m.taken).map((m) => m.toAppId))];
  }

  readonly triggerRows: TeamTriggerRecord[] = [];

  async addTrigger(trigger: TeamTriggerRecord): Promise<void> {
    this.triggerRows.push({ ...trigger });
  }

  async triggers(teamId: string): Promise<TeamTriggerRecord[]> {
    return this.triggerRows.filter((t) => t.teamId === teamId);
  }

  async findTrigger(triggerId: string): Promise<TeamTriggerRecord | null> {
    return this.triggerRows.find((t) => t.id === triggerId) ?? null;
  }

  async deleteTrigger(teamId: string, triggerId: string): Promise<boolean> {
    const at = this.triggerRows.findIndex((t) => t.teamId === teamId && t.id === triggerId);
    if (at < 0) return false;
    this.triggerRows.splice(at, 1);
    return true;
  }

  async triggersOfType(type: TeamTriggerRecord['type']): Promise<TeamTriggerRecord[]> {
    return this.triggerRows.filter((t) => t.type === type);
  }

  async advanceTrigger(triggerId: string, fromMs: number, toMs: number | null): Promise<boolean> {
    const trigger = this.triggerRows.find((t) => t.id === triggerId && t.nextMs === fromMs);
    if (!trigger) return false;
    trigger.nextMs = toMs;
    return true;
  }
}
