import { conversationKey, mergeMeta } from '#core/conversations/conversation-rules.js';
import {
  ConversationRepository,
  type SubmittedMessage,
  type UserSubmission,
} from '#core/ports/conversation.repository.port.js';
import type { TurnRepository } from '#core/ports/turn.repository.port.js';
import type {
  Conversation,
  ConversationPatch,
  ConversationWithMessages,
  LastMessagePatch,
  Message,
  NewConversation,
  NewMessage,
  Thought,
} from '#core/kernel/conversation.js';
import { FakeTurnRepository } from './fake-agent-ports.js';

type StoredConversation = Omit<Conversation, 'messageCount'>;

/**
 * Conversations, messages and thoughts in memory, with the port's rules: ids normalized as the
 * database keeps them (a UUID in any case, a string that is no id finds nothing), positions
 * consecutive, `updatedAt` touched by writes (not by starring) and always moving forward,
 * submissions that queue one turn in `turns` unless one is active. Records handed out are copies.
 */
export class FakeConversationRepository extends ConversationRepository {
  readonly conversations = new Map<string, StoredConversation>();
  /** Conversation id → its messages in order. */
  readonly messages = new Map<string, Message[]>();
  /** Message id → its thoughts. */
  readonly thoughts = new Map<string, Thought[]>();
  private lastStamp = 0;
  private nextMessage = 0;

  constructor(
    readonly turns: TurnRepository = new FakeTurnRepository(),
    /** The database clock (ms): `removeEphemeral` measures idleness on it. */
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  async create(conversation: NewConversation): Promise<Conversation> {
    const stamp = this.stamp();
    const record: StoredConversation = {
      id: conversation.id,
      spaceId: conversation.spaceId,
      title: conversation.title,
      starred: false,
      ephemeral: conversation.ephemeral,
      appId: conversation.appId ?? null,
      reasoningEffort: conversation.reasoningEffort,
      modelSourceId: null,
      modelId: null,
      createdAt: stamp,
      updatedAt: stamp,
    };
    const id = conversationKey(conversation.id) ?? conversation.id;
    if (this.conversations.has(id)) throw new Error(`duplicate conversation id ${id}`);
    this.conversations.set(id, { ...record, id });
    this.messages.set(id, []);
    return this.view(id)!;
  }

  async createIfAbsent(conversation: NewConversation): Promise<Conversation> {
    const id = conversationKey(conversation.id) ?? conversation.id;
    return this.view(id) ?? this.create(conversation);
  }

  async listForSpace(spaceId: string): Promise<Conversation[]> {
    return [...this.conversations.values()]
      .filter((c) => c.spaceId === spaceId && !c.ephemeral && c.appId === null)
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime())
      .map((c) => this.view(c.id)!);
  }

  async findById(id: string): Promise<Conversation | null> {
    return this.view(this.key(id));
  }

  async findWithMessages(id: string, fromMessageId?: string): Promise<ConversationWithMessages | null> {
    const key = this.key(id);
    const conversation = this.view(key);
    if (!conversation) return null;
    const all = this.messages.get(key!)!;
    const from = fromMessageId === undefined ? -1 : all.findIndex((m) => m.id === fromMessageId);
    return { conversation, messages: structuredClone(from < 0 ? all : all.slice(from)) };
  }

  async findRunMessages(conversationId: string, runId: string): Promise<Message[]> {
    const key = this.key(conversationId);
    const all = key === null ? undefined : this.messages.get(key);
    return structuredClone((all ?? []).filter((m) => m.meta.runId === runId));
  }

  async update(id: string, patch: ConversationPatch): Promise<Conversation | null> {
    const record = this.record(id);
    if (!record) return null;
    if (patch.title !== undefined) record.title = patch.title;
    if (patch.reasoningEffort !== undefined) record.reasoningEffort = patch.reasoningEffort;
    if (patch.pin !== undefined) {
      record.modelSourceId = patch.pin?.modelSourceId ?? null;
      record.modelId = patch.pin?.modelId ?? null;
    }
    record.updatedAt = this.stamp();
    return this.view(record.id);
  }

  async setStarred(id: string, starred: boolean): Promise<boolean> {
    const record = this.record(id);
    if (!record) return false;
    record.starred = starred;
    return true;
  }

  async remove(id: string): Promise<boolean> {
    const key = this.key(id);
    if (key === null || !this.conversations.has(key)) return false;
    for (const message of this.messages.get(key) ?? []) this.thoughts.delete(message.id);
    this.messages.delete(key);
    return this.conversations.delete(key);
  }

  async removeAllInSpace(spaceId: string): Promise<number> {
    return this.removeWhere((c) => c.spaceId === spaceId).length;
  }

  async removeAllOfApp(appId: string): Promise<string[]> {
    return this.removeWhere((c) => c.appId === appId);
  }

  async removeEphemeral(idleForMs: number | null): Promise<number> {
    const cutoff = idleForMs === null ? Infinity : this.now() - idleForMs;
    return this.removeWhere((c) => c.ephemeral && (idleForMs === null || c.updatedAt.getTime() <= cutoff)).length;
  }

  async appendMessage(
    conversationId: string,
    message: NewMessage,
    thoughts?: readonly Thought[],
  ): Promise<Message | null> {
    const record = this.record(conversationId);
    if (!record) return null;
    return this.append(record, message, thoughts);
  }

  async updateLastMessage(
    conversationId: string,
    patch: LastMessagePatch,
    thoughts?: readonly Thought[],
  ): Promise<Message | null> {
    const record = this.record(conversationId);
    const last = record ? this.messages.get(record.id)!.at(-1) : undefined;
    if (!record || !last) return null;
    if (patch.content !== undefined) last.content = patch.content;
    if (patch.meta) last.meta = mergeMeta(last.meta, patch.meta);
    if (thoughts) this.thoughts.set(last.id, structuredClone([...thoughts]));
    record.updatedAt = this.stamp();
    return structuredClone(last);
  }

  async saveThoughts(messageId: string, thoughts: readonly Thought[]): Promise<boolean> {
    if (!this.findMessage(messageId)) return false;
    this.thoughts.set(messageId, structuredClone([...thoughts]));
    return true;
  }

  async thoughtsOf(conversationId: string, messageId: string): Promise<Thought[]> {
    const message = this.findMessage(messageId);
    if (!message || message.conversationId !== this.key(conversationId)) return [];
    return structuredClone(this.thoughts.get(messageId) ?? []);
  }

  async submitUserMessage(
    conversationId: string,
    submission: UserSubmission,
  ): Promise<SubmittedMessage | 'first' | 'exists' | null> {
    const record = this.record(conversationId);
    if (!record || (submission.inSpace !== undefined && record.spaceId !== submission.inSpace)) return null;
    if (this.findMessage(submission.messageId)) return 'exists';
    const first = this.messages.get(record.id)!.length === 0;
    if (first && submission.unlessFirst) return 'first';
    const extra = first && submission.firstMeta ? submission.firstMeta : {};
    const active = await this.turns.findActive(record.id);
    const turn = active ? null : await this.turns.createQueued(submission.turn);
    const meta = { ...(turn ? submission.meta : submission.liveMeta), ...extra };
    const message = this.append(
      record,
      { role: 'user', content: submission.content, meta },
      undefined,
      submission.messageId,
    );
    if (turn) return { message, turn };
    const handed = submission.liveInput ? await this.turns.addPendingInput(record.id, submission.liveInput) : null;
    return { message, turn: null, handed: handed !== null };
  }

  private append(record: StoredConversation, message: NewMessage, thoughts?: readonly Thought[], id?: string): Message {
    const list = this.messages.get(record.id)!;
    const stamp = this.stamp();
    const stored: Message = {
      id: id ?? `00000000-0000-4000-8000-${(++this.nextMessage).toString(16).padStart(12, '0')}`,
      conversationId: record.id,
      position: list.length,
      role: message.role,
      content: message.content,
      meta: structuredClone(message.meta ?? {}),
      createdAt: stamp,
    };
    list.push(stored);
    if (thoughts) this.thoughts.set(stored.id, structuredClone([...thoughts]));
    record.updatedAt = stamp;
    return structuredClone(stored);
  }

  private removeWhere(test: (c: StoredConversation) => boolean): string[] {
    const ids = [...this.conversations.values()].filter(test).map((c) => c.id);
    for (const id of ids) {
      for (const message of this.messages.get(id) ?? []) this.thoughts.delete(message.id);
      this.messages.delete(id);
      this.conversations.delete(id);
    }
    return ids;
  }

  private findMessage(messageId: string): Message | undefined {
    for (const list of this.messages.values()) {
      const found = list.find((m) => m.id === messageId);
      if (found) return found;
    }
    return undefined;
  }

  private key(id: string): string | null {
    return conversationKey(id);
  }

  private record(id: string): StoredConversation | undefined {
    const key = this.key(id);
    return key === null ? undefined : this.conversations.get(key);
  }

  private view(id: string | null): Conversation | null {
    const record = id === null ? undefined : this.conversations.get(id);
    if (!record) return null;
    return { ...structuredClone(record), messageCount: this.messages.get(record.id)?.length ?? 0 };
  }

  /** The clock's time, but always after the previous stamp (so "most recent first" is exact). */
  private stamp(): Date {
    this.lastStamp = Math.max(this.now(), this.lastStamp + 1);
    return new Date(this.lastStamp);
  }
}
