import { Column, Entity, ForeignKey, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { AppEntity } from './app.entity.js';
import { SpaceEntity } from './space.entity.js';

/** A team of digital humans (docs/api/teams.md); deleting its space deletes it. */
@Entity({ name: 'team' })
@Index('IDX_team_space', ['owningSpaceId'])
export class TeamEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_team' })
  id: string;

  @ForeignKey(() => SpaceEntity, { name: 'FK_team_space', onDelete: 'CASCADE' })
  @Column({ name: 'owning_space_id', type: 'text' })
  owningSpaceId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  goal: string;

  @Column({ name: 'lead_app_id', type: 'uuid', nullable: true })
  leadAppId: string | null;

  @Column({ name: 'member_sourcing', type: 'text' })
  memberSourcing: string;

  @Column({ name: 'collab_mode', type: 'text' })
  collabMode: string;

  @Column({ name: 'escalation_routing', type: 'text' })
  escalationRouting: string;

  @Column({ type: 'text' })
  status: string;

  @Column({ name: 'current_epoch_id', type: 'uuid', nullable: true })
  currentEpochId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}

/** A member: an installed digital human; its name is unique in the team. Deleting the app removes it. */
@Entity({ name: 'team_member' })
@Index('UQ_team_member_name', ['teamId', 'memberName'], { unique: true })
@Index('IDX_team_member_app', ['appId'])
export class TeamMemberEntity {
  @ForeignKey(() => TeamEntity, { name: 'FK_team_member_team', onDelete: 'CASCADE' })
  @PrimaryColumn({ name: 'team_id', type: 'uuid', primaryKeyConstraintName: 'PK_team_member' })
  teamId: string;

  @ForeignKey(() => AppEntity, { name: 'FK_team_member_app', onDelete: 'CASCADE' })
  @PrimaryColumn({ name: 'app_id', type: 'uuid', primaryKeyConstraintName: 'PK_team_member' })
  appId: string;

  @Column({ name: 'member_name', type: 'text' })
  memberName: string;

  @Column({ type: 'text' })
  role: string;

  @Column({ type: 'text', nullable: true })
  duty: string | null;

  @Column({ name: 'is_lead', type: 'boolean', default: false })
  isLead: boolean;

  @Column({ name: 'ai_provisioned', type: 'boolean', default: false })
  aiProvisioned: boolean;

  @Column({ name: 'added_at', type: 'timestamptz', default: () => 'now()' })
  addedAt: Date;
}

/** Structured mode: who may message whom (either direction). */
@Entity({ name: 'team_edge' })
export class TeamEdgeEntity {
  @ForeignKey(() => TeamEntity, { name: 'FK_team_edge_team', onDelete: 'CASCADE' })
  @PrimaryColumn({ name: 'team_id', type: 'uuid', primaryKeyConstraintName: 'PK_team_edge' })
  teamId: string;

  @PrimaryColumn({ name: 'from_app_id', type: 'uuid', primaryKeyConstraintName: 'PK_team_edge' })
  fromAppId: string;

  @PrimaryColumn({ name: 'to_app_id', type: 'uuid', primaryKeyConstraintName: 'PK_team_edge' })
  toAppId: string;
}

/** One run or conversation of a team; at most one open run epoch per team (the partial index). */
@Entity({ name: 'team_epoch' })
@Index('IDX_team_epoch_team', ['teamId', 'startedAt'])
@Index('UQ_team_epoch_open_run', ['teamId'], { unique: true, where: `"lifecycle" = 'run' AND "ended_at" IS NULL` })
export class TeamEpochEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_team_epoch' })
  id: string;

  @ForeignKey(() => TeamEntity, { name: 'FK_team_epoch_team', onDelete: 'CASCADE' })
  @Column({ name: 'team_id', type: 'uuid' })
  teamId: string;

  @Column({ type: 'text' })
  lifecycle: string;

  @Column({ name: 'started_at', type: 'timestamptz', default: () => 'now()' })
  startedAt: Date;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt: Date | null;

  @Column({ name: 'end_reason', type: 'text', nullable: true })
  endReason: string | null;

  @Column({ type: 'text', nullable: true })
  outcome: string | null;

  @Column({ type: 'text', nullable: true })
  summary: string | null;

  @Column({ name: 'trigger_type', type: 'text', nullable: true })
  triggerType: string | null;

  @Column({ type: 'text', nullable: true })
  title: string | null;

  /** Member messages sent in this epoch (the limit counts them). */
  @Column({ name: 'message_count', type: 'integer', default: 0 })
  messageCount: number;
}

/** A task on an epoch's board. */
@Entity({ name: 'team_task' })
@Index('IDX_team_task_epoch', ['epochId', 'createdAt'])
export class TeamTaskEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_team_task' })
  id: string;

  @ForeignKey(() => TeamEpochEntity, { name: 'FK_team_task_epoch', onDelete: 'CASCADE' })
  @Column({ name: 'epoch_id', type: 'uuid' })
  epochId: string;

  @Column({ type: 'text' })
  title: string;

  @Column({ name: 'assignee_app_id', type: 'uuid' })
  assigneeAppId: string;

  @Column({ type: 'text' })
  status: string;

  @Column({ name: 'result_ref', type: 'text', nullable: true })
  resultRef: string | null;

  @Column({ type: 'text', nullable: true })
  note: string | null;

  @Column({ name: 'parent_id', type: 'uuid', nullable: true })
  parentId: string | null;

  @Column({ name: 'created_by_app_id', type: 'uuid', nullable: true })
  createdByAppId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}

/** A finding on an epoch's board (append-only). */
@Entity({ name: 'team_finding' })
@Index('IDX_team_finding_epoch', ['epochId', 'createdAt'])
export class TeamFindingEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_team_finding' })
  id: string;

  @ForeignKey(() => TeamEpochEntity, { name: 'FK_team_finding_epoch', onDelete: 'CASCADE' })
  @Column({ name: 'epoch_id', type: 'uuid' })
  epochId: string;

  @Column({ name: 'author_app_id', type: 'uuid' })
  authorAppId: string;

  @Column({ type: 'text' })
  body: string;

  @Column({ type: 'text', nullable: true })
  ref: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}

/** The epoch's office record (append-only); `seq` orders it. */
@Entity({ name: 'team_activity' })
@Index('IDX_team_activity_epoch', ['epochId', 'seq'])
export class TeamActivityEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_team_activity' })
  seq: string;

  @Column({ type: 'uuid' })
  id: string;

  @ForeignKey(() => TeamEpochEntity, { name: 'FK_team_activity_epoch', onDelete: 'CASCADE' })
  @Column({ name: 'epoch_id', type: 'uuid' })
  epochId: string;

  @Column({ type: 'text' })
  kind: string;

  @Column({ name: 'actor_app_id', type: 'uuid', nullable: true })
  actorAppId: string | null;

  @Column({ name: 'target_app_id', type: 'uuid', nullable: true })
  targetAppId: string | null;

  @Column({ type: 'text' })
  subject: string;

  @Column({ type: 'text', nullable: true })
  body: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}

/**
 * A member's mailbox: messages wait here, in `seq` order, until the member's turn takes them
 * (its next step, or a new turn once the running one ends), on whichever replica.
 */
@Entity({ name: 'team_mailbox' })
@Index('IDX_team_mailbox_waiting', ['epochId', 'toAppId', 'seq'], { where: `"taken_at" IS NULL` })
export class TeamMailboxEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_team_mailbox' })
  seq: string;

  @Column({ type: 'uuid' })
  id: string;

  @ForeignKey(() => TeamEpochEntity, { name: 'FK_team_mailbox_epoch', onDelete: 'CASCADE' })
  @Column({ name: 'epoch_id', type: 'uuid' })
  epochId: string;

  @Column({ name: 'to_app_id', type: 'uuid' })
  toAppId: string;

  /** Null: the person (a message sent over HTTP). */
  @Column({ name: 'from_app_id', type: 'uuid', nullable: true })
  fromAppId: string | null;

  @Column({ type: 'text' })
  body: string;

  /** How many teammate hops led to this message (the forward-depth limit). */
  @Column({ type: 'integer' })
  depth: number;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'taken_at', type: 'timestamptz', nullable: true })
  takenAt: Date | null;
}

/**
 * A team's trigger (docs/api/teams.md, "Triggers"): a schedule or a webhook whose firing opens a
 * run epoch. A schedule keeps its next occurrence here (`next_ms`); moving it on is the claim
 * of an occurrence, so it fires once across replicas.
 */
@Entity({ name: 'team_trigger' })
@Index('IDX_team_trigger_team', ['teamId'])
export class TeamTriggerEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_team_trigger' })
  id: string;

  @ForeignKey(() => TeamEntity, { name: 'FK_team_trigger_team', onDelete: 'CASCADE' })
  @Column({ name: 'team_id', type: 'uuid' })
  teamId: string;

  /** `schedule` or `webhook`. */
  @Column({ type: 'text' })
  type: string;

  @Column({ type: 'jsonb' })
  config: Record<string, unknown>;

  /** A schedule's next occurrence (ms); null for a webhook. */
  @Column({ name: 'next_ms', type: 'bigint', nullable: true })
  nextMs: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
