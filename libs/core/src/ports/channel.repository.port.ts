import type { ChannelState, ChatType, GuestPolicy, ReplyScope } from '#contracts/channels.js';

/** A channel instance as stored (credentials unmasked: never answered as they are). */
export interface ChannelInstanceRecord {
  id: string;
  type: string;
  name: string;
  enabled: boolean;
  appId: string;
  teamId: string | null;
  config: Record<string, unknown>;
  replyScope: ReplyScope;
  owners: string[];
  guestPolicy: GuestPolicy;
  streaming: boolean;
  state: ChannelState;
  reason: string | null;
  cursor: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export type InstanceChanges = Partial<
  Pick<
    ChannelInstanceRecord,
    'name' | 'enabled' | 'appId' | 'teamId' | 'config' | 'replyScope' | 'owners' | 'guestPolicy' | 'streaming'
  >
>;

export interface ChannelThreadRecord {
  instanceId: string;
  chatId: string;
  appId: string;
  channel: string;
  chatType: ChatType;
  conversationId: string;
  displayName: string;
  customName: string | null;
  proactive: boolean;
  lastMessageAt: Date | null;
  /** A direct chat's other party (the platform user id), where known: escalations go to owners' chats. */
  peerId: string | null;
}

/**
 * Message channels kept in Postgres, shared by every replica (docs/api/channels.md). Races are
 * settled here: `claim` is true for exactly one caller per key, `claimOwner` for the first
 * direct sender of an instance without owners.
 */
export abstract class ChannelRepository {
  abstract listInstances(): Promise<ChannelInstanceRecord[]>;
  abstract findInstance(id: string): Promise<ChannelInstanceRecord | null>;
  abstract createInstance(
    record: Omit<ChannelInstanceRecord, 'createdAt' | 'updatedAt' | 'cursor'>,
  ): Promise<ChannelInstanceRecord>;
  abstract updateInstance(id: string, changes: InstanceChanges): Promise<ChannelInstanceRecord | null>;
  abstract deleteInstance(id: string): Promise<boolean>;
  /** Sets the state; answers the record when it changed (null when it was already so, or is gone). */
  abstract setState(id: string, state: ChannelState, reason: string | null): Promise<ChannelInstanceRecord | null>;
  /** Makes `userId` the only owner when the instance has none; true when it did. */
  abstract claimOwner(id: string, userId: string): Promise<boolean>;
  /** A connection-style transport's position (e.g. Telegram's update offset). */
  abstract setCursor(id: string, cursor: string): Promise<void>;
  /** True for exactly one caller per key, ever (until released). */
  abstract claim(key: string): Promise<boolean>;
  /** `claim` for many keys in one go: answers the keys claimed by this call. */
  abstract claimMany(keys: readonly string[]): Promise<Set<string>>;
  abstract release(key: string): Promise<void>;
  /** Whether `key` was claimed (and not released). */
  abstract claimed(key: string): Promise<boolean>;
  /** Creates the thread of a chat or updates its display name and last message time. */
  abstract touchThread(thread: Omit<ChannelThreadRecord, 'customName' | 'proactive'>): Promise<ChannelThreadRecord>;
  abstract listThreads(appId?: string): Promise<ChannelThreadRecord[]>;
  abstract findThread(instanceId: string, chatId: string): Promise<ChannelThreadRecord | null>;
  abstract updateThread(
    instanceId: string,
    chatId: string,
    changes: Partial<Pick<ChannelThreadRecord, 'proactive' | 'customName'>>,
  ): Promise<ChannelThreadRecord | null>;
  abstract removeThread(instanceId: string, chatId: string): Promise<boolean>;
}
