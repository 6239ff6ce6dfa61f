import type { ChannelConfigField, ChannelState } from '#contracts/channels.js';
import type { Message } from '#core/kernel/conversation.js';
import {
  type ChannelConnection,
  ChannelProvider,
  ChannelProviders,
  type OutboundOptions,
  type OutboundTarget,
} from '#core/channels/channel-provider.port.js';
import {
  type ChannelApp,
  ChannelChat,
  type ChannelChatListener,
  type ChannelReply,
  type ChannelTurnInput,
  type EscalationAsked,
  type OpenEscalation,
  type RunResult,
} from '#core/ports/channel-chat.port.js';
import {
  type ChannelInstanceRecord,
  ChannelRepository,
  type ChannelThreadRecord,
  type InstanceChanges,
} from '#core/ports/channel.repository.port.js';

/** Channel instances, claims and threads in memory, with the port's rules (records handed out are copies). */
export class FakeChannelRepository extends ChannelRepository {
  readonly instances = new Map<string, ChannelInstanceRecord>();
  readonly claims = new Set<string>();
  /** `instanceId\u0000chatId` → thread. */
  readonly threads = new Map<string, ChannelThreadRecord>();

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  async listInstances(): Promise<ChannelInstanceRecord[]> {
    return [...this.instances.values()].map((r) => structuredClone(r));
  }

  async findInstance(id: string): Promise<ChannelInstanceRecord | null> {
    const r = this.instances.get(id);
    return r ? structuredClone(r) : null;
  }

  async createInstance(
    record: Omit<ChannelInstanceRecord, 'createdAt' | 'updatedAt' | 'cursor'>,
  ): Promise<ChannelInstanceRecord> {
    const at = new Date(this.now());
    const stored: ChannelInstanceRecord = { ...structuredClone(record), cursor: null, createdAt: at, updatedAt: at };
    this.instances.set(record.id, stored);
    return structuredClone(stored);
  }

  async updateInstance(id: string, changes: InstanceChanges): Promise<ChannelInstanceRecord | null> {
    const r = this.instances.get(id);
    if (!r) return null;
    Object.assign(r, structuredClone(changes), { updatedAt: new Date(this.now()) });
    return structuredClone(r);
  }

  async deleteInstance(id: string): Promise<boolean> {
    return this.instances.delete(id);
  }

  async setState(id: string, state: ChannelState, reason: string | null): Promise<ChannelInstanceRecord | null> {
    const r = this.instances.get(id);
    if (!r || (r.state === state && r.reason === reason)) return null;
    Object.assign(r, { state, reason, updatedAt: new Date(this.now()) });
    return structuredClone(r);
  }

  async claimOwner(id: string, userId: string): Promise<boolean> {
    const r = this.instances.get(id);
    if (!r || r.owners.length > 0) return false;
    r.owners = [userId];
    return true;
  }

  async setCursor(id: string, cursor: string): Promise<void> {
    const r = this.instances.get(id);
    if (r) r.cursor = cursor;
  }

  async claim(key: string): Promise<boolean> {
    if (this.claims.has(key)) return false;
    this.claims.add(key);
    return true;
  }

  async claimMany(keys: readonly string[]): Promise<Set<string>> {
    const claimed = new Set<string>();
    for (const key of keys) if (await this.claim(key)) claimed.add(key);
    return claimed;
  }

  async release(key: string): Promise<void> {
    this.claims.delete(key);
  }

  async claimed(key: string): Promise<boolean> {
    return this.claims.has(key);
  }

  async touchThread(thread: Omit<ChannelThreadRecord, 'customName' | 'proactive'>): Promise<ChannelThreadRecord> {
    const key = threadKey(thread.instanceId, thread.chatId);
    const existing = this.threads.get(key);
    const next: ChannelThreadRecord = existing
      ? { ...existing, displayName: thread.displayName, lastMessageAt: thread.lastMessageAt }
      : { ...structuredClone(thread), customName: null, proactive: false };
    this.threads.set(key, next);
    return structuredClone(next);
  }

  async listThreads(appId?: string): Promise<ChannelThreadRecord[]> {
    return [...this.threads.values()]
      .filter((t) => appId === undefined || t.appId === appId)
      .map((t) => structuredClone(t));
  }

  async findThread(instanceId: string, chatId: string): Promise<ChannelThreadRecord | null> {
    const t = this.threads.get(threadKey(instanceId, chatId));
    return t ? structuredClone(t) : null;
  }

  async updateThread(
    instanceId: string,
    chatId: string,
    changes: Partial<Pick<ChannelThreadRecord, 'proactive' | 'customName'>>,
  ): Promise<ChannelThreadRecord | null> {
    const t = this.threads.get(threadKey(instanceId, chatId));
    if (!t) return null;
    Object.assign(t, changes);
    return structuredClone(t);
  }

  async removeThread(instanceId: string, chatId: string): Promise<boolean> {
    return this.threads.delete(threadKey(instanceId, chatId));
  }
}

const threadKey = (instanceId: string, chatId: string): string => `${instanceId}\u0000${chatId}`;

/** A provider that records what it sends; webhook-style unless `connection` is set. */
export class FakeChannelProvider extends ChannelProvider {
  readonly displayName: string;
  readonly description = 'a fake chat platform';
  readonly defaultConfig: Record<string, unknown>;
  readonly maxMessageLength: number;
  readonly sent: Array<{ instanceId: string; target: OutboundTarget; text: string; options?: OutboundOptions }> = [];
  override connect?: ChannelProvider['connect'];

  constructor(
    readonly type: string,
    readonly configFields: readonly ChannelConfigField[] = [
      { key: 'token', label: 'Token', type: 'secret', required: true },
    ],
    options: { connection?: boolean; defaultConfig?: Record<string, unknown>; maxMessageLength?: number } = {},
  ) {
    super();
    this.displayName = type;
    this.defaultConfig = options.defaultConfig ?? {};
    this.maxMessageLength = options.maxMessageLength ?? 4_000;
    if (options.connection) {
      this.connect = async (): Promise<ChannelConnection> => ({ stop: async () => undefined });
    }
  }

  async send(instance: ChannelInstanceRecord, target: OutboundTarget, text: string, options?: OutboundOptions) {
    this.sent.push({ instanceId: instance.id, target, text, ...(options ? { options } : {}) });
  }
}

/** The providers given. */
export class FakeChannelProviders extends ChannelProviders {
  constructor(private readonly providers: readonly ChannelProvider[]) {
    super();
  }

  all(): readonly ChannelProvider[] {
    return this.providers;
  }
}

/** ChannelChat over a list of apps by id → display name; records what it was asked to do. */
export class FakeChannelChat extends ChannelChat {
  /** App id → display name (null: uninstalled, still existing). */
  readonly apps = new Map<string, string | null>();
  readonly submitted: ChannelTurnInput[] = [];
  readonly stopped: string[] = [];
  readonly cleared: string[] = [];
  /** Thread id → its messages. */
  readonly threadMessages = new Map<string, Message[]>();
  readonly listeners: ChannelChatListener[] = [];
  escalations = new Map<string, OpenEscalation>();

  async app(appId: string): Promise<ChannelApp | null> {
    const name = this.apps.get(appId);
    return name === undefined || name === null ? null : { id: appId, name, spaceId: null };
  }

  async appExists(appId: string): Promise<boolean> {
    return this.apps.has(appId);
  }

  async submit(input: ChannelTurnInput): Promise<'started' | 'merged' | 'duplicate'> {
    if (this.submitted.some((s) => s.messageId === input.messageId)) return 'duplicate';
    this.submitted.push(input);
    return 'started';
  }

  async stop(threadId: string): Promise<void> {
    this.stopped.push(threadId);
  }

  async clear(threadId: string): Promise<void> {
    this.cleared.push(threadId);
  }

  async messages(threadId: string): Promise<Message[]> {
    return structuredClone(this.threadMessages.get(threadId) ?? []);
  }

  listen(listener: ChannelChatListener): void {
    this.listeners.push(listener);
  }

  async openEscalation(appId: string): Promise<OpenEscalation | null> {
    return this.escalations.get(appId) ?? null;
  }

  async answerEscalation(appId: string, entryId: string): Promise<boolean> {
    const open = this.escalations.get(appId);
    if (!open || open.entryId !== entryId) return false;
    this.escalations.delete(appId);
    return true;
  }
}

/** The channels' side of a ChannelChat: records replies, run results and escalations; `failing` makes each call throw it. */
export class RecordingChannelListener implements ChannelChatListener {
  readonly replies: ChannelReply[] = [];
  readonly results: RunResult[] = [];
  readonly escalations: EscalationAsked[] = [];
  failing: Error | null = null;

  async replied(reply: ChannelReply): Promise<void> {
    if (this.failing) throw this.failing;
    this.replies.push(reply);
  }

  async runResult(result: RunResult): Promise<void> {
    if (this.failing) throw this.failing;
    this.results.push(result);
  }

  async escalated(asked: EscalationAsked): Promise<void> {
    if (this.failing) throw this.failing;
    this.escalations.push(asked);
  }
}
