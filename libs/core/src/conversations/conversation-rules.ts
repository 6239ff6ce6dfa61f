import {
  CONVERSATION_TITLE_MAX,
  MESSAGE_ROLES,
  type MessageRole,
  REASONING_EFFORTS,
  type ReasoningEffort,
} from '#contracts/conversations.js';
import { DomainError } from '../errors/domain-error.js';
import type { MessageMeta, ModelPin, Thought } from '../kernel/conversation.js';

/** Pure rules of conversation records; every failure is a DomainError `invalid` naming the field. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/**
 * Conversation ids: server-minted UUIDs, a digital human's main thread `app-chat:<appId>`
 * and ids callers choose for their own threads. Any of these is safe in a URL path segment,
 * a log line and an event-log key: a letter or digit, then letters, digits and `. _ : @ -`,
 * 128 characters at most.
 */
const CONVERSATION_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;
export const CONVERSATION_ID_MAX = 128;

export function isConversationId(value: unknown): value is string {
  return typeof value === 'string' && CONVERSATION_ID.test(value);
}

/**
 * The id as stored, or null for a string that can never be a conversation id (it finds
 * nothing). UUIDs are kept in lower case, as the uuid column kept them before ids were
 * text, so a UUID names its conversation in either case.
 */
export function conversationKey(value: string): string | null {
  if (!isConversationId(value)) return null;
  return isUuid(value) ? value.toLowerCase() : value;
}

/** An id a caller chose for a new conversation: a DomainError naming the field when unusable. */
export function parseConversationId(value: unknown, field = 'conversationId'): string {
  if (typeof value !== 'string' || !isConversationId(value)) {
    throw DomainError.invalid(
      `${field} must be 1 to ${CONVERSATION_ID_MAX} letters, digits and . _ : @ - starting with a letter or digit`,
    );
  }
  return conversationKey(value)!;
}

/**
 * With several replicas a restarting one must not remove another replica's live ephemeral
 * conversations, so only those idle this long go; a single process removes them all.
 */
export const EPHEMERAL_IDLE_MS_WITH_REPLICAS = 60 * 60 * 1000;

export function ephemeralSweepIdleMs(replicated: boolean): number | null {
  return replicated ? EPHEMERAL_IDLE_MS_WITH_REPLICAS : null;
}

/** A title to keep: trimmed, 1 to CONVERSATION_TITLE_MAX characters. */
export function normalizeTitle(value: unknown): string {
  if (typeof value !== 'string') throw DomainError.invalid('title must be a string');
  const title = value.trim();
  if (title.length === 0) throw DomainError.invalid('title must not be empty');
  if (title.length > CONVERSATION_TITLE_MAX) {
    throw DomainError.invalid(`title must be at most ${CONVERSATION_TITLE_MAX} characters`);
  }
  return title;
}

export function isReasoningEffort(value: unknown): value is ReasoningEffort {
  return typeof value === 'string' && (REASONING_EFFORTS as readonly string[]).includes(value);
}

export function parseReasoningEffort(value: unknown): ReasoningEffort {
  if (!isReasoningEffort(value)) {
    throw DomainError.invalid(`reasoningEffort must be one of: ${REASONING_EFFORTS.join(', ')}`);
  }
  return value;
}

export function parseRole(value: unknown): MessageRole {
  if (typeof value !== 'string' || !(MESSAGE_ROLES as readonly string[]).includes(value)) {
    throw DomainError.invalid(`role must be one of: ${MESSAGE_ROLES.join(', ')}`);
  }
  return value as MessageRole;
}

export function parseContent(value: unknown): string {
  if (typeof value !== 'string') throw DomainError.invalid('content must be a string');
  return value;
}

/**
 * The pin part of an update. `undefined`: not sent (unchanged); `null`: both sent as null
 * (unpinned); otherwise both sent. The source need not exist (a pin naming a removed source
 * is accepted: docs/api.md, "Model sources and the configuration"), but it must be a UUID.
 */
export function parsePinPatch(modelSourceId: unknown, modelId: unknown): ModelPin | null | undefined {
  if (modelSourceId === undefined && modelId === undefined) return undefined;
  if (modelSourceId === undefined || modelId === undefined) {
    throw DomainError.invalid('modelSourceId and modelId must be sent together');
  }
  if (modelSourceId === null && modelId === null) return null;
  if (modelSourceId === null || modelId === null) {
    throw DomainError.invalid('modelSourceId and modelId must both be null to remove the pin');
  }
  if (!isUuid(modelSourceId)) throw DomainError.invalid('modelSourceId must be a UUID');
  if (typeof modelId !== 'string' || modelId.trim().length === 0) {
    throw DomainError.invalid('modelId must be a non-empty string');
  }
  return { modelSourceId: modelSourceId.toLowerCase(), modelId };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Thoughts as stored: objects with a string `id` and `type`; `content` defaults to '' and
 * `timestamp` to `now`; other fields (toolName, toolInput, toolOutput, …) are kept as given.
 */
export function normalizeThoughts(value: unknown, now: Date): Thought[] {
  if (!Array.isArray(value)) throw DomainError.invalid('thoughts must be an array');
  return value.map((item, i) => {
    const field = `thoughts[${i}]`;
    if (!isPlainObject(item)) throw DomainError.invalid(`${field} must be an object`);
    if (typeof item.id !== 'string' || item.id.length === 0) {
      throw DomainError.invalid(`${field}.id must be a non-empty string`);
    }
    if (typeof item.type !== 'string' || item.type.length === 0) {
      throw DomainError.invalid(`${field}.type must be a non-empty string`);
    }
    if (item.content !== undefined && typeof item.content !== 'string') {
      throw DomainError.invalid(`${field}.content must be a string`);
    }
    if (item.timestamp !== undefined && typeof item.timestamp !== 'string') {
      throw DomainError.invalid(`${field}.timestamp must be a string`);
    }
    if (item.toolInput !== undefined && !isPlainObject(item.toolInput)) {
      throw DomainError.invalid(`${field}.toolInput must be an object`);
    }
    return {
      ...item,
      id: item.id,
      type: item.type,
      content: item.content ?? '',
      timestamp: item.timestamp ?? now.toISOString(),
    } as Thought;
  });
}

/** Fields of a message that meta can never shadow on the wire. */
export const RESERVED_MESSAGE_FIELDS: readonly string[] = ['id', 'role', 'content', 'createdAt', 'conversationId'];

/** Meta as stored: an object without reserved keys and without null values. */
export function normalizeMeta(value: unknown): MessageMeta {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) throw DomainError.invalid('meta must be an object');
  const meta: MessageMeta = {};
  for (const [key, v] of Object.entries(value)) {
    if (RESERVED_MESSAGE_FIELDS.includes(key)) throw DomainError.invalid(`${key} cannot be set as message meta`);
    if (v !== undefined && v !== null) meta[key] = v;
  }
  return meta;
}

/** A meta patch: an object without reserved keys; null values mark keys to remove. */
export function parseMetaPatch(value: unknown): Record<string, unknown> {
  if (!isPlainObject(value)) throw DomainError.invalid('meta must be an object');
  for (const key of Object.keys(value)) {
    if (RESERVED_MESSAGE_FIELDS.includes(key)) throw DomainError.invalid(`${key} cannot be set as message meta`);
  }
  return { ...value };
}

/** Shallow merge of a parsed patch; a key set to null in the patch removes it. */
export function mergeMeta(current: MessageMeta, patch: Record<string, unknown>): MessageMeta {
  const merged: MessageMeta = { ...current };
  for (const [key, v] of Object.entries(patch)) {
    if (v === null) delete merged[key];
    else if (v !== undefined) merged[key] = v;
  }
  return merged;
}
