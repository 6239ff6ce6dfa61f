import { ErrorCodes } from '#contracts/errors.js';
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DEFAULT_CONVERSATION_TITLE, type MessageRole } from '#contracts/conversations.js';
import { DomainError } from '../errors/domain-error.js';
import { Clock } from '../ports/clock.port.js';
import { ConversationCleanup } from '../ports/conversation-cleanup.port.js';
import {
  ConversationRepository,
  type SubmittedMessage,
  type UserSubmission,
} from '../ports/conversation.repository.port.js';
import type { Space } from '../kernel/space.js';
import { SpaceRepository } from '../ports/space.repository.port.js';
import type {
  Conversation,
  ConversationPatch,
  ConversationWithMessages,
  Message,
  MessageMeta,
  ModelPin,
  NewConversation,
  Thought,
} from '../kernel/conversation.js';
import {
  ephemeralSweepIdleMs,
  normalizeMeta,
  normalizeThoughts,
  normalizeTitle,
  parseContent,
  parseConversationId,
  parseMetaPatch,
  parsePinPatch,
  parseReasoningEffort,
  parseRole,
} from './conversation-rules.js';

/** Conversations remembered as just created (the oldest are forgotten first). */
const FRESH_HINTS_MAX = 1000;

/** Texts the specification fixes, and the ones this service adds. */
export const ConversationErrors = {
  notFound: 'Conversation not found',
  spaceNotFound: 'Space not found',
  noMessages: 'No messages',
  nothingToUpdate: 'Nothing to update: send title, modelSourceId with modelId, or reasoningEffort',
} as const;

export interface CreateConversationInput {
  title?: unknown;
  reasoningEffort?: unknown;
  ephemeral?: unknown;
  /** Set by the digital-human context for its threads (never from a request body). */
  appId?: string;
}

export interface UpdateConversationInput {
  title?: unknown;
  modelSourceId?: unknown;
  modelId?: unknown;
  reasoningEffort?: unknown;
}

export interface AppendMessageInput {
  role: unknown;
  content: unknown;
  meta?: unknown;
}

export interface UpdateLastMessageInput {
  content?: unknown;
  /** Merged into the stored meta; a key set to null removes it. */
  meta?: unknown;
}

/**
 * Conversation records: the operations of "Conversation records" (scoped to a space) and
 * the ones the agent engine uses (by conversation id). Also deletes a space's conversations
 * for the spaces context, and sweeps ephemeral conversations at start.
 */
@Injectable()
export class ConversationsService implements ConversationCleanup {
  /**
   * Conversations this process created and no message has been submitted to here yet: a hint,
   * never a record (a restart or another replica forgets it, and the write stays exact either
   * way), that lets a first message carry what only a first message carries in its one write.
   */
  private readonly fresh = new Set<string>();

  constructor(
    private readonly conversations: ConversationRepository,
    private readonly spaces: SpaceRepository,
    private readonly clock: Clock,
  ) {}

  // ---- records, scoped to a space -------------------------------------------------------

  async create(spaceId: string, input: CreateConversationInput): Promise<Conversation> {
    await this.requireSpace(spaceId);
    // A request never makes a digital human's thread.
    const { title, reasoningEffort, ephemeral } = input;
    const created = await this.conversations.create(
      newConversation(spaceId, randomUUID(), { title, reasoningEffort, ephemeral }),
    );
    if (this.fresh.size >= FRESH_HINTS_MAX) this.fresh.delete(this.fresh.values().next().value!);
    this.fresh.add(created.id);
    return created;
  }

  /**
   * Whether the conversation was created here and nothing was submitted to it here since
   * (probably empty then); asking forgets it.
   */
  takeFreshHint(conversationId: string): boolean {
    return this.fresh.delete(conversationId);
  }

  /**
   * The space's conversation `conversationId`, created with `input` when it does not exist
   * yet: threads whose ids are fixed (`app-chat:<appId>`) or chosen by a caller. The id must
   * follow the conversation id rule; an id another space's conversation holds is a conflict.
   * `space`: its id, checked here, or the space the caller has just read (not read again).
   */
  async openWithId(
    space: string | { readonly id: string },
    conversationId: unknown,
    input: CreateConversationInput = {},
  ): Promise<Conversation> {
    const spaceId = typeof space === 'string' ? space : space.id;
    if (typeof space === 'string') await this.requireSpace(spaceId);
    const id = parseConversationId(conversationId);
    const conversation = await this.conversations.createIfAbsent(newConversation(spaceId, id, input));
    if (conversation.spaceId !== spaceId) {
      throw new DomainError(
        'conflict',
        'conversationId is taken by a conversation of another space',
        ErrorCodes.CONVERSATION_ID_TAKEN,
      );
    }
    return conversation;
  }

  /** Most recently updated first; ephemeral conversations are left out. */
  async list(spaceId: string): Promise<Conversation[]> {
    await this.requireSpace(spaceId);
    return this.conversations.listForSpace(spaceId);
  }

  /** One run's messages (`meta.runId`) out of a digital human's run conversation, in order; none when it is gone. */
  runMessages(conversationId: string, runId: string): Promise<Message[]> {
    return this.conversations.findRunMessages(conversationId, runId);
  }

  /** With messages from `fromMessageId` (inclusive) when it is one of them, else all. */
  async get(spaceId: string, conversationId: string, fromMessageId?: string): Promise<ConversationWithMessages> {
    // Side by side (a missing space answers first, as before): every turn's plan starts here.
    const [, found] = await Promise.all([
      this.requireSpace(spaceId),
      this.conversations.findWithMessages(conversationId, fromMessageId || undefined),
    ]);
    if (!found || found.conversation.spaceId !== spaceId)
      throw DomainError.notFound(ConversationErrors.notFound, ErrorCodes.CONVERSATION_NOT_FOUND);
    return found;
  }

  /**
   * `get` for a turn's plan: the messages its history is built from (from the latest compaction
   * summary on: `ConversationRepository.findWithHistory`), and the space it checked (the plan
   * needs it: read once, not again by the preamble).
   */
  async forTurn(spaceId: string, conversationId: string): Promise<ConversationWithMessages & { space: Space }> {
    const [space, found] = await Promise.all([
      this.spaces.findById(spaceId),
      this.conversations.findWithHistory(conversationId),
    ]);
    if (!space) throw DomainError.notFound(ConversationErrors.spaceNotFound, ErrorCodes.SPACE_NOT_FOUND);
    if (!found || found.conversation.spaceId !== spaceId)
      throw DomainError.notFound(ConversationErrors.notFound, ErrorCodes.CONVERSATION_NOT_FOUND);
    return { ...found, space };
  }

  async update(
    spaceId: string,
    conversationId: string,
    input: UpdateConversationInput,
  ): Promise<ConversationWithMessages> {
    await this.requireInSpace(spaceId, conversationId);
    const patch: ConversationPatch = {};
    if (input.title !== undefined) patch.title = normalizeTitle(input.title);
    const pin = parsePinPatch(input.modelSourceId, input.modelId);
    if (pin !== undefined) patch.pin = pin;
    if (input.reasoningEffort !== undefined) {
      patch.reasoningEffort = input.reasoningEffort === null ? null : parseReasoningEffort(input.reasoningEffort);
    }
    if (Object.keys(patch).length === 0) throw DomainError.invalid(ConversationErrors.nothingToUpdate);
    const updated = await this.conversations.update(conversationId, patch);
    if (!updated) throw DomainError.notFound(ConversationErrors.notFound, ErrorCodes.CONVERSATION_NOT_FOUND);
    return this.get(spaceId, conversationId);
  }

  /** Irreversible: the conversation, its messages and their thoughts; no backup. */
  async remove(spaceId: string, conversationId: string): Promise<void> {
    await this.requireInSpace(spaceId, conversationId);
    if (!(await this.conversations.remove(conversationId)))
      throw DomainError.notFound(ConversationErrors.notFound, ErrorCodes.CONVERSATION_NOT_FOUND);
  }

  async star(spaceId: string, conversationId: string, starred: unknown): Promise<void> {
    if (typeof starred !== 'boolean') throw DomainError.invalid('starred must be a boolean');
    await this.requireInSpace(spaceId, conversationId);
    if (!(await this.conversations.setStarred(conversationId, starred))) {
      throw DomainError.notFound(ConversationErrors.notFound, ErrorCodes.CONVERSATION_NOT_FOUND);
    }
  }

  /** Thoughts of a message; wrong ids (space, conversation or message) give [] (docs/api.md, "Conversations"). */
  async thoughts(spaceId: string, conversationId: string, messageId: string): Promise<Thought[]> {
    const conversation = await this.conversations.findById(conversationId);
    if (!conversation || conversation.spaceId !== spaceId) return [];
    return this.conversations.thoughtsOf(conversationId, messageId);
  }

  async appendMessageInSpace(
    spaceId: string,
    conversationId: string,
    input: AppendMessageInput,
    thoughts?: unknown,
  ): Promise<Message> {
    await this.requireInSpace(spaceId, conversationId);
    return this.appendMessage(conversationId, input, thoughts);
  }

  async updateLastMessageInSpace(
    spaceId: string,
    conversationId: string,
    input: UpdateLastMessageInput,
    thoughts?: unknown,
  ): Promise<Message> {
    await this.requireInSpace(spaceId, conversationId);
    return this.updateLastMessage(conversationId, input, thoughts);
  }

  // ---- for the agent engine (by conversation id) ----------------------------------------

  async findById(conversationId: string): Promise<Conversation | null> {
    return this.conversations.findById(conversationId);
  }

  /** The model pin of a conversation; null when it has none or does not exist. */
  async getPin(conversationId: string): Promise<ModelPin | null> {
    const conversation = await this.conversations.findById(conversationId);
    if (!conversation || conversation.modelSourceId === null || conversation.modelId === null) return null;
    return { modelSourceId: conversation.modelSourceId, modelId: conversation.modelId };
  }

  /** Appends at the end (safe under concurrency), with its thoughts when given. */
  async appendMessage(
    conversationId: string,
    input: AppendMessageInput | { role: MessageRole; content: string; meta?: MessageMeta },
    thoughts?: unknown,
  ): Promise<Message> {
    const message = {
      role: parseRole(input.role),
      content: parseContent(input.content),
      meta: normalizeMeta(input.meta),
    };
    const normalized =
      thoughts === undefined || thoughts === null ? undefined : normalizeThoughts(thoughts, this.now());
    const stored = await this.conversations.appendMessage(conversationId, message, normalized);
    if (!stored) throw DomainError.notFound(ConversationErrors.notFound, ErrorCodes.CONVERSATION_NOT_FOUND);
    return stored;
  }

  /**
   * Appends a user's message and queues its turn in one step, or stores it as input for the
   * conversation's active turn (`turn` null then); see ConversationRepository.submitUserMessage
   * (with `inSpace`, a conversation of another space is not found; with `unlessFirst`, 'first'
   * and nothing written when the conversation has no message yet). With `idFromSource` (the
   * caller derived `messageId` from where the message came from, so it may come again), 'exists'
   * and nothing written when that message is stored already.
   */
  submitUserMessage(
    conversationId: string,
    submission: UserSubmission & { unlessFirst?: false; idFromSource?: false },
  ): Promise<SubmittedMessage>;
  submitUserMessage(
    conversationId: string,
    submission: UserSubmission & { unlessFirst: boolean; idFromSource?: false },
  ): Promise<SubmittedMessage | 'first'>;
  submitUserMessage(
    conversationId: string,
    submission: UserSubmission & { unlessFirst?: boolean; idFromSource: boolean },
  ): Promise<SubmittedMessage | 'first' | 'exists'>;
  async submitUserMessage(
    conversationId: string,
    { idFromSource, ...submission }: UserSubmission & { idFromSource?: boolean },
  ): Promise<SubmittedMessage | 'first' | 'exists'> {
    const submitted = await this.conversations.submitUserMessage(conversationId, {
      ...submission,
      content: parseContent(submission.content),
      meta: normalizeMeta(submission.meta),
      liveMeta: normalizeMeta(submission.liveMeta),
      ...(submission.firstMeta ? { firstMeta: normalizeMeta(submission.firstMeta) } : {}),
    });
    if (!submitted) throw DomainError.notFound(ConversationErrors.notFound, ErrorCodes.CONVERSATION_NOT_FOUND);
    // A fresh random id is never taken: a collision would be a fault, not a repeat.
    if (submitted === 'exists' && !idFromSource) throw new Error(`message ${submission.messageId} is stored already`);
    return submitted;
  }

  /** Content replaced when given, meta merged, thoughts replaced when given. */
  async updateLastMessage(conversationId: string, input: UpdateLastMessageInput, thoughts?: unknown): Promise<Message> {
    const content = input.content === undefined ? undefined : parseContent(input.content);
    const meta = input.meta === undefined || input.meta === null ? undefined : parseMetaPatch(input.meta);
    const normalized =
      thoughts === undefined || thoughts === null ? undefined : normalizeThoughts(thoughts, this.now());
    const updated = await this.conversations.updateLastMessage(conversationId, { content, meta }, normalized);
    if (updated) return updated;
    if (!(await this.conversations.findById(conversationId)))
      throw DomainError.notFound(ConversationErrors.notFound, ErrorCodes.CONVERSATION_NOT_FOUND);
    throw DomainError.notFound(ConversationErrors.noMessages, ErrorCodes.MESSAGE_NOT_FOUND);
  }

  /** Replaces the thoughts of a message. */
  async saveThoughts(messageId: string, thoughts: unknown): Promise<void> {
    const normalized = normalizeThoughts(thoughts, this.now());
    if (!(await this.conversations.saveThoughts(messageId, normalized))) {
      throw DomainError.notFound('Message not found', ErrorCodes.MESSAGE_NOT_FOUND);
    }
  }

  // ---- lifecycle -------------------------------------------------------------------------

  /** ConversationCleanup: deleting a space deletes every conversation in it. */
  async deleteAllInSpace(spaceId: string): Promise<void> {
    await this.conversations.removeAllInSpace(spaceId);
  }

  /** Deleting a digital human for good deletes its threads (chat threads and runs); answers their ids. */
  removeAllOfApp(appId: string): Promise<string[]> {
    return this.conversations.removeAllOfApp(appId);
  }

  /**
   * At start: deletes ephemeral conversations. With several replicas (`replicated`) only
   * those idle for an hour, so a restarting replica leaves the others' live ones alone.
   */
  sweepEphemeral(replicated: boolean): Promise<number> {
    return this.conversations.removeEphemeral(ephemeralSweepIdleMs(replicated));
  }

  // ---- helpers ---------------------------------------------------------------------------

  private now(): Date {
    return new Date(this.clock.now());
  }

  private async requireSpace(spaceId: string): Promise<void> {
    if (!(await this.spaces.findById(spaceId)))
      throw DomainError.notFound(ConversationErrors.spaceNotFound, ErrorCodes.SPACE_NOT_FOUND);
  }

  private async requireInSpace(spaceId: string, conversationId: string): Promise<Conversation> {
    await this.requireSpace(spaceId);
    const conversation = await this.conversations.findById(conversationId);
    if (!conversation || conversation.spaceId !== spaceId)
      throw DomainError.notFound(ConversationErrors.notFound, ErrorCodes.CONVERSATION_NOT_FOUND);
    return conversation;
  }
}

function newConversation(spaceId: string, id: string, input: CreateConversationInput): NewConversation {
  const title =
    input.title === undefined || (typeof input.title === 'string' && input.title.trim() === '')
      ? DEFAULT_CONVERSATION_TITLE
      : normalizeTitle(input.title);
  const reasoningEffort =
    input.reasoningEffort === undefined || input.reasoningEffort === null
      ? null
      : parseReasoningEffort(input.reasoningEffort);
  if (input.ephemeral !== undefined && typeof input.ephemeral !== 'boolean') {
    throw DomainError.invalid('ephemeral must be a boolean');
  }
  return { id, spaceId, title, ephemeral: input.ephemeral === true, reasoningEffort, appId: input.appId ?? null };
}
