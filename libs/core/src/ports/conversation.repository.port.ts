import {
  type Conversation,
  type ConversationPatch,
  type ConversationWithMessages,
  isCompactionSummary,
  type LastMessagePatch,
  type Message,
  type NewConversation,
  type MessageMeta,
  type NewMessage,
  type Thought,
} from '../kernel/conversation.js';
import type { NewTurn, PendingInput, TurnRecord } from './turn.repository.port.js';

/** A user's message to store in a conversation, and the turn to queue for it. */
export interface UserSubmission {
  /** Chosen by the caller, so the turn's request can name it. */
  messageId: string;
  content: string;
  /** The message's meta when its turn is queued. */
  meta: MessageMeta;
  /** The message's meta when the conversation already has an active turn (it becomes that turn's input). */
  liveMeta: MessageMeta;
  turn: NewTurn;
  /** When given, a conversation of another space is not found (as one that does not exist). */
  inSpace?: string;
  /**
   * When true and the conversation has no message yet, nothing is written and the answer is
   * 'first': the caller adds what a first message carries and submits again without it.
   */
  unlessFirst?: boolean;
  /** Added to the message's meta (either one) when the conversation has no message yet. */
  firstMeta?: MessageMeta;
  /**
   * When the conversation has an active turn that is not stopping, this is added to its pending
   * input in the same transaction as the message (`handed` true): a message is never recorded
   * as live input without reaching the turn.
   */
  liveInput?: PendingInput;
}

/**
 * What `submitUserMessage` did: queued the turn, or found one active (the message then has
 * `liveMeta`, and `handed` says whether `liveInput` went to that turn: false when none was given
 * or the turn is stopping).
 */
export type SubmittedMessage =
  { message: Message; turn: TurnRecord } | { message: Message; turn: null; handed: boolean };

/**
 * Conversation records: conversations, their ordered messages and each message's ordered
 * thoughts. Ids that cannot exist (any string) simply find nothing.
 */
export abstract class ConversationRepository {
  abstract create(conversation: NewConversation): Promise<Conversation>;

  /** Creates the conversation unless one of that id exists (in any space); returns the stored one. */
  abstract createIfAbsent(conversation: NewConversation): Promise<Conversation>;

  /** Conversations of a space that are neither ephemeral nor a digital human's threads, most recently updated first. */
  abstract listForSpace(spaceId: string): Promise<Conversation[]>;

  abstract findById(id: string): Promise<Conversation | null>;

  /**
   * The conversation with its messages in order: from message `fromMessageId` (inclusive)
   * when it belongs to the conversation, else all of them.
   */
  abstract findWithMessages(id: string, fromMessageId?: string): Promise<ConversationWithMessages | null>;

  /**
   * The conversation with the messages a turn's history is built from: from its latest
   * compaction summary (inclusive) on, all of them when it has none. What comes before that
   * summary never reaches the model, so a long-lived thread's turn does not read its whole past.
   * An adapter answers it in one query; this is the same from `findWithMessages`.
   */
  async findWithHistory(id: string): Promise<ConversationWithMessages | null> {
    const found = await this.findWithMessages(id);
    if (!found) return null;
    const from = found.messages.findLastIndex(isCompactionSummary);
    return from <= 0 ? found : { ...found, messages: found.messages.slice(from) };
  }

  /**
   * The messages of one run of a digital human (`meta.runId`), in order, out of its run
   * conversation, which keeps every run's: read without the others (none when the conversation
   * is gone).
   */
  abstract findRunMessages(conversationId: string, runId: string): Promise<Message[]>;

  /** Applies the patch and touches `updatedAt`; null when the conversation is gone. */
  abstract update(id: string, patch: ConversationPatch): Promise<Conversation | null>;

  /** Does not touch `updatedAt` (starring does not reorder the list). */
  abstract setStarred(id: string, starred: boolean): Promise<boolean>;

  /** Deletes the conversation, its messages and their thoughts. */
  abstract remove(id: string): Promise<boolean>;

  /** Returns how many were deleted. */
  abstract removeAllInSpace(spaceId: string): Promise<number>;

  /** Deletes every thread of a digital human (any space); returns their ids. */
  abstract removeAllOfApp(appId: string): Promise<string[]>;

  /**
   * Deletes ephemeral conversations; with `idleForMs`, only those not updated for that long
   * (measured on the database clock). Returns how many were deleted.
   */
  abstract removeEphemeral(idleForMs: number | null): Promise<number>;

  /**
   * Appends at the next position, atomically: concurrent appends to one conversation get
   * distinct, consecutive positions. Stores `thoughts` (when given) with the message in the
   * same transaction and touches the conversation's `updatedAt`. Null when the conversation
   * does not exist.
   */
  abstract appendMessage(
    conversationId: string,
    message: NewMessage,
    thoughts?: readonly Thought[],
  ): Promise<Message | null>;

  /**
   * Changes the last message (content replaced, meta merged, thoughts replaced when given)
   * and touches the conversation's `updatedAt`. Null when the conversation has no message.
   */
  abstract updateLastMessage(
    conversationId: string,
    patch: LastMessagePatch,
    thoughts?: readonly Thought[],
  ): Promise<Message | null>;

  /** Replaces the thoughts of a message. False when the message does not exist. */
  abstract saveThoughts(messageId: string, thoughts: readonly Thought[]): Promise<boolean>;

  /** Thoughts of a message of that conversation, in order; [] when either id is wrong. */
  abstract thoughtsOf(conversationId: string, messageId: string): Promise<Thought[]>;

  /**
   * In one transaction (and one round trip where the store allows): appends the user's
   * message at the next position, as `appendMessage` does, and queues `turn` unless the
   * conversation already has an active turn; then the message is stored with `liveMeta` and
   * `turn` is null. Concurrent submissions to one conversation queue exactly one turn. Null
   * when the conversation does not exist (or is not in `inSpace`); 'first' (nothing written)
   * for `unlessFirst` and a conversation without messages. `firstMeta` goes with a first
   * message only. 'exists' (nothing written) when a message of `messageId` is stored already:
   * a caller that derives the id from where the message came from submits it once.
   */
  abstract submitUserMessage(
    conversationId: string,
    submission: UserSubmission,
  ): Promise<SubmittedMessage | 'first' | 'exists' | null>;
}
