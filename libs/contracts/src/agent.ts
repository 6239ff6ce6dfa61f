/** Wire shapes of the agent operations and conversation events (docs/api.md, "The assistant" and "Conversation events"). */

export type ThoughtType = 'thinking' | 'text' | 'tool_use' | 'tool_result' | 'system' | 'result' | 'error';

export interface Thought {
  id: string;
  type: ThoughtType;
  content: string;
  timestamp: string;
  toolName?: string;
  toolInput?: Record<string, unknown>;
  toolOutput?: string;
  isError?: boolean;
  isStreaming?: boolean;
  /** The model's tool-use id, linking a tool_use thought to its result. */
  toolUseId?: string;
  /** A tool call a policy held for a person's answer: when it was asked, and how it was decided. */
  approval?: ApprovalRecord;
}

/**
 * Tool approvals (docs/api/agent.md, "Tool approvals"): the policy of `approvals` in the
 * configuration or a digital human's user overrides. An empty `tools` list is no policy.
 */
export interface ApprovalPolicy {
  /** Glob patterns of tool names (`Bash`, `mcp__*__send*`). */
  tools: string[];
  timeoutSeconds: number;
}

export const APPROVAL_TIMEOUT_DEFAULT_SECONDS = 600;

/** A tool call waiting for approval, as the session state shows it. */
export interface PendingApprovalDto {
  toolId: string;
  name: string;
  input: Record<string, unknown>;
  /** ISO time after which the call is rejected. */
  deadline: string;
}

/** How a held call ended: `approved`, `rejected` (by a person), `timeout` or `stopped` (both reject it). */
export type ApprovalOutcome = 'approved' | 'rejected' | 'timeout' | 'stopped';
/**
 * Who answered: the API, the web app, the assistant's own API relay, a message channel's owner
 * (a button or a reply in the thread; who exactly is in `channelUser`), or the server (timeout, stop).
 */
export type ApprovalDecider = 'api' | 'web' | 'assistant' | 'channel' | 'server';

/** The channel owner who answered from a chat thread (docs/api/channels.md, "Tool approvals in a thread"). */
export interface ApprovalChannelUser {
  /** The channel type (`telegram`, `webhook`, …). */
  channel: string;
  instanceId: string;
  /** The platform's user id. */
  userId: string;
  name?: string;
}

/** The audit of one held call, kept on its thought. */
export interface ApprovalRecord {
  requestedAt: string;
  deadline: string;
  outcome?: ApprovalOutcome;
  decidedBy?: ApprovalDecider;
  /** With `decidedBy: "channel"`: which platform user decided, on which instance. */
  channelUser?: ApprovalChannelUser;
  decidedAt?: string;
  reason?: string;
}

/**
 * What a turn serves, which decides how its plan is built: a chat of a conversation, a chat
 * with a digital human (one of its threads), or a digital human's run.
 */
export type TurnKind = 'chat' | 'app-chat' | 'app-run' | 'team-member';
export const TURN_KINDS: readonly TurnKind[] = ['chat', 'app-chat', 'app-run', 'team-member'];

export interface AskQuestion {
  question: string;
  header: string;
  options: Array<{ label: string; description: string }>;
  multiSelect: boolean;
}

export interface TokenUsageDto {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  totalCostUsd: number;
  contextWindow: number;
}

export interface ApiRetryInfo {
  attempt: number;
  maxRetries: number;
  delayMs: number;
  errorStatus: number | null;
  errorKind: string;
  errorMessage?: string;
}

/** GET /api/agent/session/:conversationId — what a client needs to recover after a refresh. */
export interface SessionState {
  conversationId: string;
  spaceId: string | null;
  active: boolean;
  turnId: string | null;
  status: string | null;
  startedAt: string | null;
  thoughts: Thought[];
  pendingQuestion: { id: string; questions: AskQuestion[] } | null;
  /** The tool call waiting for a person's answer under an approval policy (additive). */
  pendingApproval: PendingApprovalDto | null;
  pendingRetry: ApiRetryInfo | null;
  /** Which server process runs the turn (additive; for operators and tests). */
  replicaId: string | null;
}

export interface ToolsetEntry {
  id: string;
  displayName: string;
  summary: string;
  open: boolean;
}

export const AgentChannels = {
  turnStart: 'agent:turn-start',
  message: 'agent:message',
  thought: 'agent:thought',
  thoughtDelta: 'agent:thought-delta',
  toolCall: 'agent:tool-call',
  toolResult: 'agent:tool-result',
  askQuestion: 'agent:ask-question',
  complete: 'agent:complete',
  error: 'agent:error',
  sessionInfo: 'agent:session-info',
  compact: 'agent:compact',
  apiRetry: 'agent:api-retry',
  inputArrived: 'agent:input-arrived',
  inputStopped: 'agent:input-stopped',
} as const;

/** A user message as the input events carry it. */
export interface WireInputMessage {
  id: string;
  role: 'user';
  content: string;
}

/**
 * What each event of a conversation says, before the event log stamps `spaceId`,
 * `conversationId` and `seq` on it (docs/api.md, "Conversation events").
 */
export interface AgentEventPayloads {
  'agent:turn-start': { type: 'turn-start' };
  /** A text block opens (`isNewTextBlock`), streams (`delta`), ends or completes the reply (`content`). */
  'agent:message': {
    content?: string;
    delta?: string;
    isNewTextBlock?: boolean;
    isStreaming?: boolean;
    isComplete: boolean;
  };
  'agent:thought': { thought: Omit<Thought, 'toolUseId'> };
  /** A thought's text streams or ends, its tool input streams or ends, or its tool's result came. */
  'agent:thought-delta': {
    thoughtId: string;
    delta?: string;
    content?: string;
    isComplete?: boolean;
    toolInput?: Record<string, unknown>;
    isToolInput?: boolean;
    toolResult?: { output: string; isError: boolean; timestamp: string };
    isToolResult?: boolean;
  };
  /**
   * `requiresApproval: true`: the call waits for `POST /api/agent/approve` or `/reject` until
   * `deadline`; such an event goes to every client, like the status events. After an approval
   * the call is announced again without the flag as it starts.
   */
  'agent:tool-call': {
    id: string;
    name: string;
    status: 'running';
    input: Record<string, unknown>;
    requiresApproval?: boolean;
    deadline?: string;
  };
  'agent:tool-result': { toolId: string; result: string; isError: boolean };
  'agent:ask-question': { id: string; questions: AskQuestion[] };
  'agent:complete': { duration: number; tokenUsage?: TokenUsageDto };
  /** `error`, with `errorCode` or `errorType` where the ending has one. */
  'agent:error': { error: string; [field: string]: unknown };
  'agent:session-info': { slashCommands: string[]; skills: string[]; agents: string[] };
  'agent:compact': { trigger: 'auto'; preTokens: number };
  /** `retry: null`: the retried call went through. */
  'agent:api-retry': { retry: ApiRetryInfo | null };
  'agent:input-arrived': { messages: WireInputMessage[]; live: true };
  'agent:input-stopped': { messages: WireInputMessage[] };
  /** Channels of the original product's clients that this server does not publish yet. */
  'agent:goal-updated': Record<string, unknown>;
  'toolsets:changed': Record<string, unknown>;
  'toolsets:requested': Record<string, unknown>;
}

/** Coordination between replicas (never delivered to sockets). */
export const AgentInternalChannels = {
  stop: 'internal:agent-stop',
  /** A question was answered or a held tool call decided: the replica running the turn wakes. */
  answer: 'internal:agent-answer',
} as const;
