import {
  CONVERSATION_TITLE_MAX,
  MESSAGE_ROLES,
  type MessageRole,
  REASONING_EFFORTS,
  type ReasoningEffort,
} from '#contracts/conversations.js';
import { DomainError } from '../errors/domain-error.js';
import type { MessageMeta, ModelPin, Thought } from './conversation.js';

/** Pure rules of conversation records; every failure is a DomainError `invalid` naming the field. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
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
 * (unpinned); otherwise both sent. The source need not exist (spec: a pin naming a removed
 * account is accepted), but it must be a UUID.
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
