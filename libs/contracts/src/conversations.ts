/** Wire shapes of conversation records (docs/api.md, "Conversations" and "Conversation events"). */

export const REASONING_EFFORTS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

export const MESSAGE_ROLES = ['user', 'assistant', 'system'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export const DEFAULT_CONVERSATION_TITLE = 'New conversation';
export const CONVERSATION_TITLE_MAX = 500;

/**
 * A conversation's title changed without a request of the one watching: the model titled it
 * after its first exchange (docs/api.md, "Conversation titles"). To every connection.
 */
export const CONVERSATION_UPDATED = 'conversation:updated';
export interface ConversationUpdatedEvent {
  spaceId: string;
  conversationId: string;
  title: string;
}

/**
 * Message meta of a reply replaced by Regenerate or by editing the message before it (the web
 * app's Edit and Regenerate): left out of the model's context, with the user message of its turn
 * when a different message follows (docs/api.md, "Agent").
 */
export const SUPERSEDED_META = 'superseded';

/** docs/api.md, "Conversation events": `agent:complete`. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  totalCostUsd: number;
  contextWindow: number;
}

/**
 * A reasoning record of a message (docs/api.md, "Conversation events": `agent:thought`). Stored as
 * given: fields beyond these are kept and returned.
 */
export interface ThoughtDto {
  id: string;
  /** `thinking`, `tool_use`, `text`, … */
  type: string;
  content: string;
  /** ISO 8601. */
  timestamp: string;
  toolName?: string;
  toolInput?: Record<string, unknown>;
  /** Raw tool results; can be long. */
  toolOutput?: unknown;
  isError?: boolean;
  [extra: string]: unknown;
}

/** A file sent with a user message (`attachments` of `POST /api/agent/message`), by reference. */
export interface MessageAttachmentDto {
  /** Relative to the space's folder. */
  path: string;
  name: string;
  mediaType: string;
  size: number;
  /** Handed to the model as an image; otherwise named for it to Read. */
  image: boolean;
}

/**
 * A stored message. Besides `id`, `role`, `content`, `createdAt`, the optional facts the agent
 * engine records (`images`, `attachments`, `tokenUsage`, `error`) appear when set.
 */
export interface MessageDto {
  id: string;
  role: MessageRole;
  content: string;
  createdAt: string;
  images?: unknown[];
  attachments?: MessageAttachmentDto[];
  tokenUsage?: Partial<TokenUsage>;
  error?: string;
  /** Replaced by Regenerate or an edit (SUPERSEDED_META). */
  superseded?: boolean;
  [extra: string]: unknown;
}

/** An entry of `GET /api/spaces/:spaceId/conversations`. */
export interface ConversationSummaryDto {
  id: string;
  spaceId: string;
  title: string;
  starred: boolean;
  ephemeral: boolean;
  /** Absent: the model's configured effort. */
  reasoningEffort?: ReasoningEffort;
  /** The pin; both present or both absent. */
  modelSourceId?: string;
  modelId?: string;
  createdAt: string;
  updatedAt: string;
  /** Messages in the whole conversation. */
  messageCount: number;
}

/** `GET /api/spaces/:spaceId/conversations/:conversationId`. */
export interface ConversationDto extends ConversationSummaryDto {
  messages: MessageDto[];
  /** Present when `?from=` is used: the requested message id, echoed. */
  messagesFrom?: string;
}

/** `POST /api/spaces/:spaceId/conversations`. */
export interface CreatedConversationDto {
  id: string;
  title: string;
}
