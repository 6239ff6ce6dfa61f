import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** One assistant turn; the source of truth for `generating`, sessions and stop on every replica. */
@Entity({ name: 'agent_turn' })
@Index('UQ_agent_turn_active', ['conversationId'], { unique: true, where: `"status" IN ('queued', 'running')` })
@Index('IDX_agent_turn_status', ['status'])
@Index('IDX_agent_turn_end_pending', ['endPendingAt'], { where: `"end_pending_at" IS NOT NULL` })
export class AgentTurnEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  /** chat | app-chat | app-run: which plan builder runs it. */
  @Column({ type: 'text', default: 'chat' })
  kind: string;

  @Column({ name: 'conversation_id', type: 'text' })
  conversationId: string;

  @Column({ name: 'space_id', type: 'text' })
  spaceId: string;

  /** queued | running | completed | failed | interrupted */
  @Column({ type: 'text' })
  status: string;

  @Column({ name: 'replica_id', type: 'text', nullable: true })
  replicaId: string | null;

  @Column({ name: 'heartbeat_at', type: 'timestamptz', nullable: true })
  heartbeatAt: Date | null;

  @Column({ name: 'stop_requested', type: 'boolean', default: false })
  stopRequested: boolean;

  /** The accepted request: reasoning options, images. */
  @Column({ type: 'jsonb' })
  request: Record<string, unknown>;

  /** Input recorded while generating, not yet handed to the model. */
  @Column({ name: 'pending_inputs', type: 'jsonb' })
  pendingInputs: unknown[];

  @Column({ name: 'pending_question', type: 'jsonb', nullable: true })
  pendingQuestion: Record<string, unknown> | null;

  @Column({ name: 'question_answer', type: 'jsonb', nullable: true })
  questionAnswer: Record<string, unknown> | null;

  /** A tool call held for a person's answer. */
  @Column({ name: 'pending_approval', type: 'jsonb', nullable: true })
  pendingApproval: Record<string, unknown> | null;

  @Column({ name: 'approval_decision', type: 'jsonb', nullable: true })
  approvalDecision: Record<string, unknown> | null;

  @Column({ name: 'pending_retry', type: 'jsonb', nullable: true })
  pendingRetry: Record<string, unknown> | null;

  /** Thoughts so far, for recovery after a refresh. */
  @Column({ type: 'jsonb' })
  thoughts: unknown[];

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt: Date | null;

  /** When its end was recorded, while its end events are not yet published (the reaper announces it). */
  @Column({ name: 'end_pending_at', type: 'timestamptz', nullable: true })
  endPendingAt: Date | null;
}
