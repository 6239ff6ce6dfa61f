/**
 * Message channels (docs/api/channels.md): a channel instance connects one chat platform
 * account (a bot) to one digital human; each chat on that platform is its own thread
 * `app-chat:<appId>:<channel>:<direct|group>:<chatId>`.
 */

export type ChatType = 'direct' | 'group';
export type ReplyScope = 'all' | 'group' | 'direct';
export type GuestPolicy = 'deny' | 'chat-only';
export type ChannelState = 'connecting' | 'online' | 'standby' | 'offline';

/**
 * A button under an outbound message (Telegram inline keyboard, Slack block actions). `id` comes
 * back as the `choiceId` of the press: opaque, at most 64 bytes (Telegram's callback_data limit).
 */
export interface ChannelChoice {
  id: string;
  label: string;
  /** A hint where the platform styles buttons (Slack's `primary`/`danger`); ignored elsewhere. */
  style?: 'primary' | 'danger';
}

/** The value every credential is answered with. */
export const MASKED = '***';

export interface ChannelInstanceDto {
  id: string;
  type: string;
  name: string;
  enabled: boolean;
  appId: string;
  teamId: string | null;
  /** Credentials answered masked as `***`. */
  config: Record<string, unknown>;
  replyScope: ReplyScope;
  owners: string[];
  guestPolicy: GuestPolicy;
  streaming: boolean;
  state: ChannelState;
  reason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ChannelConfigField {
  key: string;
  label: string;
  type: 'string' | 'secret' | 'url' | 'boolean';
  required: boolean;
  description?: string;
}

export interface ChannelProviderDto {
  type: string;
  displayName: string;
  description: string;
  direction: 'bidirectional' | 'inbound-only';
  configFields: ChannelConfigField[];
  defaultConfig: Record<string, unknown>;
}

export interface ChannelStatusDto {
  id: string;
  type: string;
  enabled: boolean;
  connected: boolean;
  state: ChannelState;
  appId: string;
  appName: string | null;
  reason: string | null;
}

export interface ImSessionDto {
  appId: string;
  channel: string;
  instanceId: string;
  chatType: ChatType;
  chatId: string;
  displayName: string;
  customName: string | null;
  proactive: boolean;
  lastMessageAt: string | null;
}

export const ChannelEventChannels = {
  instanceUpdated: 'im-channels:instance-updated',
} as const;

/** An instance was created, changed, changed state or was deleted (`instance: null`); credentials masked. */
export interface ImChannelInstanceUpdatedEvent {
  instanceId: string;
  instance: ChannelInstanceDto | null;
  /** Set when someone asked the instance to reconnect (`POST /api/im-channels/reconnect`). */
  reconnect?: true;
}

/** The conversation of a chat's thread. */
export const channelThreadId = (appId: string, channel: string, chatType: ChatType, chatId: string): string =>
  `app-chat:${appId}:${channel}:${chatType}:${chatId}`;

/** Where a channel thread's turn came from: its reply goes back there. */
export interface ChannelTurnOrigin {
  instanceId: string;
  channel: string;
  chatType: ChatType;
  chatId: string;
  /** The platform message the turn answers. */
  replyTo: string;
}
