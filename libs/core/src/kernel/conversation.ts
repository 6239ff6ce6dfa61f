import type { MessageRole, ReasoningEffort, ThoughtDto } from '#contracts/conversations.js';

/** A conversation record as core sees it (no messages). */
export interface Conversation {
  id: string;
  spaceId: string;
  title: string;
  starred: boolean;
  /** Left out of every list and search; deleted at the next start. */
  ephemeral: boolean;
  /** The digital human whose thread (chat or runs) this is: left out of the space's list, deleted with the app. */
  appId: string | null;
  /** null: the model's configured effort. */
  reasoningEffort: ReasoningEffort | null;
  /** The pin: both set or both null. */
  modelSourceId: string | null;
  modelId: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Messages in the whole conversation. */
  messageCount: number;
}

/** Facts about a message beyond its text, kept as one JSON object (images, tokenUsage, error, …). */
export type MessageMeta = Record<string, unknown>;

export interface Message {
  id: string;
  conversationId: string;
  /** 0, 1, 2, … in the order appended; unique within the conversation. */
  position: number;
  role: MessageRole;
  content: string;
  meta: MessageMeta;
  createdAt: Date;
}

/** `meta.kind` of the system message a compaction leaves: its summary stands for everything before it. */
export const COMPACTION_KIND = 'compaction';

/** Whether the message is a compaction's summary (the model's history begins at the latest). */
export function isCompactionSummary(m: Pick<Message, 'role' | 'meta'>): boolean {
  return m.role === 'system' && m.meta.kind === COMPACTION_KIND;
}

export type Thought = ThoughtDto;

export interface ConversationWithMessages {
  conversation: Conversation;
  /** In order; from the requested message on when it was found, else all. */
  messages: Message[];
}

export interface NewConversation {
  id: string;
  spaceId: string;
  title: string;
  ephemeral: boolean;
  reasoningEffort: ReasoningEffort | null;
  /** A digital human's thread. */
  appId?: string | null;
}

export interface ConversationPatch {
  title?: string;
  reasoningEffort?: ReasoningEffort | null;
  /** Set both (or both null to unpin). */
  pin?: ModelPin | null;
}

export interface ModelPin {
  modelSourceId: string;
  modelId: string;
}

export interface NewMessage {
  role: MessageRole;
  content: string;
  meta?: MessageMeta;
}

export interface LastMessagePatch {
  content?: string;
  /** Merged into the stored meta; a key set to null removes it. */
  meta?: MessageMeta;
}
