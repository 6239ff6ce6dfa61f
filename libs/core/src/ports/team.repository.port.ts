import type {
  BoardFindingDto,
  BoardTaskDto,
  EpochEndReason,
  EpochOutcome,
  TeamActivityDto,
  TeamDto,
  TeamEdgeDto,
  TeamEpochDto,
  TeamMemberDto,
  TeamStatus,
  TeamTriggerType,
} from '#contracts/teams.js';

/** A team's trigger as stored: `nextMs` a schedule's next occurrence. */
export interface TeamTriggerRecord {
  id: string;
  teamId: string;
  type: TeamTriggerType;
  config: Record<string, unknown>;
  nextMs: number | null;
  createdAt: string;
}

export type TeamChanges = Partial<
  Pick<TeamDto, 'name' | 'goal' | 'leadAppId' | 'memberSourcing' | 'collabMode' | 'escalationRouting' | 'status'>
>;
export type MemberChanges = Partial<Pick<TeamMemberDto, 'memberName' | 'role' | 'duty'>>;
export type TaskChanges = Partial<Pick<BoardTaskDto, 'status' | 'resultRef' | 'note'>>;

/** A message waiting in (or taken from) a member's mailbox. */
export interface MailboxMessage {
  id: string;
  epochId: string;
  toAppId: string;
  /** Null: the person. */
  fromAppId: string | null;
  body: string;
  depth: number;
  createdAt: string;
}

/**
 * Where taken mail goes, in the same transaction as the take: one user message appended at the
 * end of the member's transcript (`conversationId`), its content and meta rendered from the mail.
 */
export interface MailTranscript {
  conversationId: string;
  render: (mail: MailboxMessage[]) => { content: string; meta: Record<string, unknown> };
}

export interface EpochSeal {
  endReason: EpochEndReason;
  outcome: EpochOutcome | null;
  summary: string | null;
  /** The team's status once sealed. */
  teamStatus: TeamStatus;
}

/** Teams, their epochs, boards and mailboxes (docs/api/teams.md): records every replica shares. */
export abstract class TeamRepository {
  /** The team with its members, in one transaction; a member name used twice is 'name-taken'. */
  abstract create(team: TeamDto, members: TeamMemberDto[]): Promise<'created' | 'name-taken'>;
  abstract findById(teamId: string): Promise<TeamDto | null>;
  abstract list(spaceId?: string): Promise<TeamDto[]>;
  abstract update(teamId: string, changes: TeamChanges): Promise<TeamDto | null>;
  abstract delete(teamId: string): Promise<boolean>;

  abstract members(teamId: string): Promise<TeamMemberDto[]>;
  abstract addMember(member: TeamMemberDto): Promise<'added' | 'name-taken' | 'already-member'>;
  abstract updateMember(
    teamId: string,
    appId: string,
    changes: MemberChanges,
  ): Promise<TeamMemberDto | null | 'name-taken'>;
  abstract removeMember(teamId: string, appId: string): Promise<boolean>;
  /** Removes the app from every team it is in; answers those teams' ids. */
  abstract removeAppEverywhere(appId: string): Promise<string[]>;
  abstract edges(teamId: string): Promise<TeamEdgeDto[]>;
  abstract replaceEdges(teamId: string, edges: TeamEdgeDto[]): Promise<void>;

  /**
   * Opens a run epoch and makes it the team's current one (status running); false when the
   * team already has an open run epoch (whichever replica opened it).
   */
  abstract openRunEpoch(epoch: TeamEpochDto): Promise<boolean>;
  /** Opens a conversation epoch (any number may be open, beside a run). */
  abstract openConversationEpoch(epoch: TeamEpochDto): Promise<void>;
  /** Renames an epoch; false when there is none. */
  abstract renameEpoch(epochId: string, title: string | null): Promise<boolean>;
  abstract findEpoch(epochId: string): Promise<TeamEpochDto | null>;
  abstract listEpochs(teamId: string): Promise<TeamEpochDto[]>;
  /** The latest epoch of the team (open or sealed), or null. */
  abstract latestEpoch(teamId: string): Promise<TeamEpochDto | null>;
  /** Every run epoch still open, of every team. */
  abstract openRunEpochs(): Promise<TeamEpochDto[]>;
  /** Seals an open epoch and settles its team; null when it was already sealed (someone else sealed it). */
  abstract seal(epochId: string, seal: EpochSeal): Promise<TeamEpochDto | null>;
  /** Counts one member message in the epoch; answers the new count. */
  abstract countMessage(epochId: string): Promise<number>;

  abstract addTask(task: BoardTaskDto): Promise<void>;
  abstract updateTask(epochId: string, taskId: string, changes: TaskChanges): Promise<BoardTaskDto | null>;
  abstract tasks(epochId: string): Promise<BoardTaskDto[]>;
  abstract addFinding(finding: BoardFindingDto): Promise<void>;
  abstract findings(epochId: string): Promise<BoardFindingDto[]>;
  abstract addActivity(activity: TeamActivityDto): Promise<void>;
  abstract activities(epochId: string): Promise<TeamActivityDto[]>;

  /** Puts a message at the end of a member's mailbox. */
  abstract enqueue(message: MailboxMessage): Promise<void>;
  /**
   * Takes every message waiting for the member, oldest first, and writes them as one message at
   * the end of its transcript, in one transaction: each is taken once across replicas, and mail
   * taken by two takers lands in the transcript in the order it was sent (the transcript's row is
   * locked first). Nothing is taken when the transcript does not exist.
   */
  abstract takeWaiting(epochId: string, toAppId: string, into: MailTranscript): Promise<MailboxMessage[]>;
  /** Whether any message waits for that member. */
  abstract hasWaiting(epochId: string, toAppId: string): Promise<boolean>;
  /** Whether any message of the epoch waits (for anyone). */
  abstract anyWaiting(epochId: string): Promise<boolean>;
  /** The members of the epoch with waiting messages. */
  abstract waitingRecipients(epochId: string): Promise<string[]>;

  abstract addTrigger(trigger: TeamTriggerRecord): Promise<void>;
  abstract triggers(teamId: string): Promise<TeamTriggerRecord[]>;
  abstract findTrigger(triggerId: string): Promise<TeamTriggerRecord | null>;
  abstract deleteTrigger(teamId: string, triggerId: string): Promise<boolean>;
  /** Every team's triggers of that type. */
  abstract triggersOfType(type: TeamTriggerType): Promise<TeamTriggerRecord[]>;
  /** Moves a schedule on from `fromMs` to `toMs`: the claim of the occurrence `fromMs` (false: someone else has it). */
  abstract advanceTrigger(triggerId: string, fromMs: number, toMs: number | null): Promise<boolean>;
}
