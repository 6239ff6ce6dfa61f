/** Teams: digital humans that work together (docs/api/teams.md). Wire shapes and events. */

export type TeamStatus = 'idle' | 'running' | 'waiting_user' | 'error';
export type MemberSourcing = 'manual' | 'ai';
export type CollabMode = 'structured' | 'free';
export type EscalationRouting = 'user' | 'lead';

export interface TeamDto {
  id: string;
  name: string;
  owningSpaceId: string;
  goal: string;
  leadAppId: string | null;
  memberSourcing: MemberSourcing;
  collabMode: CollabMode;
  escalationRouting: EscalationRouting;
  status: TeamStatus;
  currentEpochId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface TeamMemberDto {
  teamId: string;
  appId: string;
  memberName: string;
  role: string;
  duty: string | null;
  isLead: boolean;
  aiProvisioned: boolean;
  addedAt: string;
}

export interface TeamEdgeDto {
  fromAppId: string;
  toAppId: string;
}

export type EpochLifecycle = 'run' | 'conversation';
export type EpochEndReason = 'completed' | 'stopped' | 'timeout' | 'error';
export type EpochOutcome = 'output' | 'no_action' | 'escalation' | 'failed';
export type EpochTrigger = 'manual' | 'schedule' | 'webhook' | 'file' | 'http';

export interface TeamEpochDto {
  id: string;
  teamId: string;
  lifecycle: EpochLifecycle;
  startedAt: string;
  endedAt: string | null;
  endReason: EpochEndReason | null;
  outcome: EpochOutcome | null;
  summary: string | null;
  triggerType: EpochTrigger | null;
  title: string | null;
}

export const TASK_STATUSES = ['pending', 'in_progress', 'done', 'rejected', 'blocked'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface BoardTaskDto {
  id: string;
  epochId: string;
  title: string;
  assigneeAppId: string;
  status: TaskStatus;
  resultRef: string | null;
  note: string | null;
  parentId: string | null;
  createdByAppId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface BoardFindingDto {
  id: string;
  epochId: string;
  authorAppId: string;
  body: string;
  ref: string | null;
  createdAt: string;
}

export type ActivityKind = 'message' | 'reply' | 'task_post' | 'task_update' | 'finding' | 'run_end';

export interface TeamActivityDto {
  id: string;
  epochId: string;
  kind: ActivityKind;
  actorAppId: string | null;
  targetAppId: string | null;
  subject: string;
  body: string | null;
  createdAt: string;
}

/** A member's question waiting for the person (answered over the digital-human route). */
export interface TeamPendingEscalationDto {
  appId: string;
  memberName: string;
  entryId: string;
  epochId: string;
  question: string;
  choices: string[];
}

export interface TeamDetailDto {
  team: TeamDto;
  members: TeamMemberDto[];
  edges: TeamEdgeDto[];
  tasks: BoardTaskDto[];
  findings: BoardFindingDto[];
  activities: TeamActivityDto[];
  pendingEscalations: TeamPendingEscalationDto[];
}

export interface EpochBoardDto {
  epoch: TeamEpochDto;
  tasks: BoardTaskDto[];
  findings: BoardFindingDto[];
  members: TeamMemberDto[];
  activities: TeamActivityDto[];
}

/** How a teammate's message was handed over (`team_send`, `POST …/members/:appId/send`). */
/**
 * A file the members produced in an epoch (docs/api/teams.md, "Artifacts"): a task's `resultRef`
 * (`task_result`, `sourceId` the task), a finding's `ref` (`finding`, the finding), or a file a
 * member's turn wrote with `Write`/`Edit` (`file`, the turn's message), as recorded.
 */
export interface TeamArtifactDto {
  kind: 'task_result' | 'finding' | 'file';
  ref: string;
  appId: string;
  sourceId: string | null;
  title: string;
  createdAt: string;
}

/** What fires a team's trigger: the sources of a digital human's subscriptions that teams take. */
export type TeamTriggerType = 'schedule' | 'webhook' | 'file';

/**
 * A team's trigger (docs/api/teams.md, "Triggers"): its firing opens a run epoch. `source.config`
 * as a subscription's (schedule `{every|cron, timezone?, workday_calendar?}`, webhook
 * `{path, secret?}`, file `{pattern?, path?}`; a secret is answered as `"********"`); `nextRunAt`
 * of a schedule.
 */
export interface TeamTriggerDto {
  id: string;
  teamId: string;
  source: { type: TeamTriggerType; config: Record<string, unknown> };
  nextRunAt: string | null;
  createdAt: string;
}

export type DeliveryReceipt = 'mid_turn' | 'queued' | 'undelivered';

/** Global event channels of teams (docs/api/teams.md, "Events"). */
export const TeamChannels = {
  updated: 'team:updated',
  blackboard: 'team:blackboard',
  message: 'team:message',
  memberHistory: 'team:member-history',
} as const;

export interface TeamUpdatedEvent {
  teamId: string;
  team?: TeamDto;
  removed?: boolean;
  changed?: string;
  liveStatus?: TeamStatus;
}

export interface TeamBlackboardEvent {
  teamId: string;
  epochId: string;
  kind: 'task' | 'finding' | 'activity';
  task?: BoardTaskDto;
  finding?: BoardFindingDto;
  activity?: TeamActivityDto;
}

/** Teammate traffic only, metadata only (never a person's words). */
export interface TeamMessageEvent {
  teamId: string;
  epochId: string;
  fromAppId: string;
  toAppId: string;
  fromMemberName: string;
  toMemberName: string;
  messageId: string;
  ts: number;
}

/** Re-read that member's transcript in that epoch. */
export interface TeamMemberHistoryEvent {
  teamId: string;
  appId: string;
  epochId: string;
}

/** A member's transcript in an epoch. */
export function teamMemberConversationId(appId: string, teamId: string, epochId: string): string {
  return `app-chat:${appId}:team:${teamId}:${epochId}`;
}
