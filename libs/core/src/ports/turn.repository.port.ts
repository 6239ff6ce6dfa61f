import type { ApprovalChannelUser, TurnKind } from '#contracts/agent.js';

export type TurnStatus = 'queued' | 'running' | 'completed' | 'failed' | 'interrupted';
export const ACTIVE_TURN_STATUSES: readonly TurnStatus[] = ['queued', 'running'];

export interface PendingInput {
  messageId: string;
  content: string;
  createdAt: string;
  /** The turn kind and request the message was sent with: a follow-up turn for it takes them. */
  kind?: TurnKind;
  request?: Record<string, unknown>;
}

/** How `complete` ended a turn. */
export interface CompletedTurn {
  /** Inputs that reached the turn after its last step read them. */
  lateInputs: number;
  /** The queued turn created to answer them; null when none was needed or another turn is active. */
  followUp: TurnRecord | null;
}

export interface PendingQuestion {
  id: string;
  questions: unknown[];
  toolUseId: string;
  askedAt: string;
}

/** A tool call held for a person's answer (docs/api/agent.md, "Tool approvals"). */
export interface PendingApproval {
  toolId: string;
  name: string;
  input: Record<string, unknown>;
  /** ISO time after which the call is rejected. */
  deadline: string;
  requestedAt: string;
}

/** A person's answer to the pending approval, recorded once by whichever replica took it. */
export interface ApprovalDecision {
  approved: boolean;
  /** Who answered (`api`, `web`, `assistant`, `channel`). */
  by: string;
  /** A channel owner's answer: who, on which instance. */
  channelUser?: ApprovalChannelUser;
  at: string;
  reason?: string;
}

export interface TurnRecord {
  id: string;
  kind: TurnKind;
  conversationId: string;
  spaceId: string;
  status: TurnStatus;
  replicaId: string | null;
  heartbeatAt: Date | null;
  stopRequested: boolean;
  request: Record<string, unknown>;
  pendingInputs: PendingInput[];
  pendingQuestion: PendingQuestion | null;
  questionAnswer: Record<string, unknown> | null;
  pendingApproval: PendingApproval | null;
  approvalDecision: ApprovalDecision | null;
  pendingRetry: Record<string, unknown> | null;
  thoughts: unknown[];
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
}

export interface NewTurn {
  id: string;
  kind: TurnKind;
  conversationId: string;
  spaceId: string;
  /** What the turn's plan builder needs (reasoning options, the message, a run's trigger, …). */
  request: Record<string, unknown>;
}

/** Turn records: the shared truth behind generating, sessions, stop and questions. */
export abstract class TurnRepository {
  /** Creates a queued turn unless the conversation already has an active one (then null). */
  abstract createQueued(turn: NewTurn): Promise<TurnRecord | null>;
  abstract findById(id: string): Promise<TurnRecord | null>;
  abstract findActive(conversationId: string): Promise<TurnRecord | null>;
  /** Whether the conversation has an active turn (queued or running), without reading it. */
  async hasActive(conversationId: string): Promise<boolean> {
    return (await this.findActive(conversationId)) !== null;
  }
  abstract listActive(): Promise<TurnRecord[]>;
  /**
   * queued → running on this replica: the record as claimed (its start read with it, no look-up
   * before), or null when it is gone, no longer queued or asked to stop.
   */
  abstract claim(id: string, replicaId: string): Promise<TurnRecord | null>;
  /** Refreshes the heartbeat of those of `ids` still running (a replica's turns, one statement). */
  abstract heartbeat(ids: readonly string[]): Promise<void>;
  /** Adds input to the conversation's active turn; null when none is active. */
  abstract addPendingInput(conversationId: string, input: PendingInput): Promise<TurnRecord | null>;
  /** Takes (and clears) the input recorded so far. */
  abstract takePendingInputs(id: string): Promise<PendingInput[]>;
  abstract setQuestion(id: string, question: PendingQuestion | null): Promise<void>;
  /** Records an answer to the pending question `questionId`; false when there is none. */
  abstract answerQuestion(
    conversationId: string | null,
    questionId: string,
    answers: Record<string, unknown>,
  ): Promise<boolean>;
  /** Holds a tool call for approval (null: nothing waits); any earlier decision is cleared. */
  abstract setApproval(id: string, pending: PendingApproval | null): Promise<void>;
  /**
   * Records a decision on the conversation's pending approval (of `toolId` when given), once:
   * the turn when it was recorded, null when nothing waits, it was decided already or the turn is stopping.
   */
  abstract decideApproval(
    conversationId: string,
    toolId: string | null,
    decision: ApprovalDecision,
  ): Promise<TurnRecord | null>;
  abstract setRetry(id: string, retry: Record<string, unknown> | null): Promise<void>;
  abstract saveThoughts(id: string, thoughts: unknown[]): Promise<void>;
  /** Flags active turns (one conversation, or all) to stop; returns the flagged turns. */
  abstract requestStop(conversationId: string | null): Promise<TurnRecord[]>;
  /**
   * Ends an active turn; false when it had already ended (someone else ended it). Like
   * `complete`, it records the end as not yet announced until `endAnnounced`.
   */
  abstract finish(
    id: string,
    status: Exclude<TurnStatus, 'queued' | 'running'>,
    error?: string | null,
  ): Promise<boolean>;
  /**
   * Ends an active turn as completed (null when it had already ended). Input that reached it
   * after its last step read its input is answered by a queued follow-up turn, created in the
   * same transaction, of the kind and request that input was sent with; its messages move
   * after the turn's reply, which never saw them.
   */
  abstract complete(id: string, followUpId: string): Promise<CompletedTurn | null>;
  /**
   * Its end events are published: clears the mark `finish` and `complete` leave, which the
   * reaper looks for (the events live outside the database, so a replica dying between
   * recording an end and publishing it would otherwise leave clients waiting for ever).
   */
  abstract endAnnounced(id: string): Promise<void>;
  /** Ended turns whose end was recorded before `before` and is not announced yet, oldest first (a batch may be bounded). */
  abstract findUnannounced(before: Date): Promise<TurnRecord[]>;
  /** Running turns whose heartbeat is older than `before`. */
  abstract findStale(before: Date): Promise<TurnRecord[]>;
  /** Active turns claimed by a replica, for the shutdown path. */
  abstract listActiveOn(replicaId: string): Promise<TurnRecord[]>;
}
