import type { ApiRetryInfo, ApprovalRecord, AskQuestion, Thought, TokenUsageDto } from '#contracts/agent.js';
import type { ApprovalDecision, PendingApproval } from '../../ports/turn.repository.port.js';
import type { ModelEndpoint, ModelInfo, ModelMessage, ReasoningEffort } from '../../ports/model-provider.port.js';
import type { App } from '../../kernel/app.js';
import type { Space } from '../../kernel/space.js';
import type { Emit, Fire } from './step-emitter.js';
import type { ToolSet } from './tool-set.js';

/**
 * What the agent loop needs to run one turn, and nothing about where the turn comes from:
 * a chat, a digital human's chat or a run each build their plan (a TurnPlanBuilder per
 * turn kind) and the loop runs them all alike.
 */
export interface TurnPlan {
  system: string;
  tools: ToolSet;
  /** The conversation so far as the model sees it, ending with the user's message. */
  history: ModelMessage[];
  model: ModelSelection;
  /** The workspace the tools act in. */
  workspace: Space;
  /** Prompt size the history ended with last time (0: unknown), so a long history compacts before it overflows. */
  contextTokens: number;
  /** Overrides the configured step limit. */
  maxSteps?: number;
  io: TurnIO;
  hooks: PlanHooks;
  /** The digital human whose turn this is, as the plan read it: its approval policy is taken from it, not read again. */
  app?: App;
}

export interface ModelSelection {
  endpoint: ModelEndpoint;
  model: string;
  info: ModelInfo;
  effort: ReasoningEffort;
}

/** Why a turn's abort signal fired. */
export type AbortReason = 'stop' | 'shutdown';

/**
 * The running turn's lines to the world, given by the runner that owns its lifecycle:
 * events, the stop signal, and the state other replicas read from the turn record.
 */
export interface TurnIO {
  /** Names the turn in logs. */
  label: string;
  emit: Emit;
  fire: Fire;
  signal: AbortSignal;
  /** Why `signal` fired. */
  abortReason(): AbortReason;
  /** Takes the input recorded while generating; it joins the next step. */
  takePendingInput(): Promise<string[]>;
  /**
   * Names the conversation messages the plan's history was read with. Input recorded before
   * that read is among them, so it is not handed over again; any other joins the first step.
   */
  historyHolds(messageIds: Iterable<string>): void;
  /** The model-call retry in progress (null: retrying is over), for clients that recover. */
  saveRetry(retry: ApiRetryInfo | null): Promise<void>;
  /** The thoughts so far, after each step, for clients that recover. */
  saveThoughts(thoughts: Thought[]): Promise<void>;
  /** Absent when nobody can answer questions in this turn. */
  questions?: QuestionChannel;
  /** Absent when no approval policy holds any tool of this turn. */
  approvals?: ApprovalChannel;
}

/**
 * Where a tool call held by an approval policy waits for a person's answer (docs/api/agent.md,
 * "Tool approvals"): in the turn record, so any replica can take the answer.
 */
export interface ApprovalChannel {
  /** Whether a call of this tool waits for an answer before it runs. */
  holds(toolName: string): boolean;
  timeoutSeconds: number;
  post(pending: PendingApproval): Promise<void>;
  /** The answer; `timeout` once the deadline passed unanswered; `stopped` when the turn is stopped first. */
  waitForDecision(pending: PendingApproval): Promise<ApprovalDecision | 'timeout' | 'stopped'>;
  /** The call no longer waits; `record` is how it was decided (for the audit). */
  settle(pending: PendingApproval, record: ApprovalRecord): Promise<void>;
}

export interface PostedQuestion {
  id: string;
  questions: AskQuestion[];
  toolUseId: string;
  askedAt: string;
}

/** Where a question waits for its answer; kept where every replica can answer it. */
export interface QuestionChannel {
  post(question: PostedQuestion): Promise<void>;
  /** The answers; throws TurnInterrupted when the turn is stopped first. */
  waitForAnswer(questionId: string): Promise<Record<string, unknown>>;
  /** The question is no longer pending (answered, or the turn is ending). */
  clear(): Promise<void>;
}

/** What a finished turn produced. */
export interface TurnResult {
  /** The reply's text blocks, joined. */
  reply: string;
  thoughts: Thought[];
  tokenUsage: TokenUsageDto;
  model: string;
  /** Prompt plus output size of the last model call. */
  contextTokens: number;
}

/** What a failed or interrupted turn produced, and why it ended. */
export interface TurnFailure {
  /** The text of `agent:error`. */
  error: string;
  interrupted: AbortReason | null;
  /** Text streamed before the end, joined. */
  reply: string;
  thoughts: Thought[];
  tokenUsage: TokenUsageDto;
}

/** What the plan's kind does with the turn's results. */
export interface PlanHooks {
  /** Records the reply; runs before the turn is marked completed. */
  onComplete(result: TurnResult): Promise<void>;
  /** Records what a failed or interrupted turn produced; runs before the turn is marked ended. */
  onFailure(failure: TurnFailure): Promise<void>;
  /** The history was compacted into `summary` (kept from the next step on). */
  onCompacted?(compaction: { summary: string; preTokens: number }): Promise<void>;
  /** Runs once the completed turn was marked completed and announced (the runner calls it). */
  afterCompleted?(): Promise<void>;
  /** Runs once the turn, whatever its end, was recorded as ended (after `afterCompleted`). */
  afterEnded?(): Promise<void>;
}
