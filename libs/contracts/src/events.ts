/**
 * Wire contract of the WebSocket event stream (docs/api.md, "Events").
 * Shared by the server, the web app and the tests.
 */
import type { AgentEventPayloads, AgentInternalChannels } from './agent.js';
import type {
  AppActivityEntryNewEvent,
  AppChannels,
  AppDeletedEvent,
  AppEscalationNewEvent,
  AppEscalationResolvedEvent,
  AppImSessionUpdatedEvent,
  AppListChangedEvent,
  AppStatusChangedEvent,
} from './apps.js';
import type {
  ARTIFACT_CHANGED_BATCH,
  ARTIFACT_TREE_UPDATE,
  ArtifactChangeBatchEvent,
  ArtifactTreeUpdateEvent,
  WATCH_RESTART_CHANNEL,
  WatchRestartEvent,
} from './artifacts.js';
import type {
  BrowserActiveViewChangedEvent,
  BrowserChannels,
  BrowserCommand,
  BrowserCommandReply,
  BrowserConversationReleasedEvent,
  BrowserInternalChannels,
  BrowserViewGoneEvent,
  BrowserWatchFrame,
} from './browser.js';
import type { IngestStatusDto, KnowledgeChannels, KnowledgeStatsUpdatedEvent } from './knowledge.js';
import type { MCP_STATUS_CHANNEL, McpStatusEvent } from './mcp.js';
import type {
  AI_SOURCES_CATALOG_CHANGED,
  AiSourcesCatalogChanged,
  CONFIG_CHANGED_CHANNEL,
  ConfigChanged,
} from './models.js';
import type { SPACE_CHANGED, SpaceChangedEvent } from './spaces.js';
import type { CONVERSATION_UPDATED, ConversationUpdatedEvent } from './conversations.js';
import type {
  TeamBlackboardEvent,
  TeamChannels,
  TeamMemberHistoryEvent,
  TeamMessageEvent,
  TeamUpdatedEvent,
} from './teams.js';
import { ChannelEventChannels, type ImChannelInstanceUpdatedEvent } from './channels.js';
import type { StoreChannels, StoreSyncStatusEvent, StoreUpgradeAvailableEvent } from './store.js';

/** Every pushed event: `{type:'event', channel, data}`. */
export interface EventEnvelope<TData extends object = Record<string, unknown>> {
  type: 'event';
  channel: string;
  data: TData;
}

/** An event as it travels on the event bus between replicas. */
export interface BusEvent<TData extends object = Record<string, unknown>> {
  channel: string;
  data: TData;
  /**
   * The conversation's id and the event's seq (those of `data`), where the bus read them from
   * the frame without decoding the data: then `data` is decoded only when it is read.
   */
  readonly conversationId?: string;
  readonly seq?: number;
}

/**
 * Conversation status channels: delivered to every authenticated connection,
 * subscribed or not (docs/api.md, "Events": status events).
 */
export const STATUS_CHANNELS: ReadonlySet<string> = new Set([
  'agent:turn-start',
  'agent:complete',
  'agent:error',
  'agent:ask-question',
  'agent:goal-updated',
]);

/**
 * Channels whose events belong to one conversation: delivered only to connections
 * subscribed to `data.conversationId`, unless listed in STATUS_CHANNELS.
 */
export const CONVERSATION_CHANNELS: ReadonlySet<string> = new Set([
  'agent:turn-start',
  'agent:message',
  'agent:thought',
  'agent:thought-delta',
  'agent:tool-call',
  'agent:tool-result',
  'agent:ask-question',
  'agent:complete',
  'agent:error',
  'agent:session-info',
  'agent:compact',
  'agent:goal-updated',
  'agent:api-retry',
  'agent:input-arrived',
  'agent:input-stopped',
  'toolsets:changed',
  'toolsets:requested',
  'stream:gap',
]);

/** Who receives an event of a channel. */
export type Audience = 'everyone' | 'subscribers';

/**
 * Who receives an event. A tool call waiting for approval (`agent:tool-call` with
 * `requiresApproval: true`) goes to everyone, as status events do: a person anywhere may answer it.
 */
export function audienceOf(channel: string, data?: object): Audience {
  if (STATUS_CHANNELS.has(channel)) return 'everyone';
  if (channel === 'agent:tool-call' && (data as { requiresApproval?: unknown } | undefined)?.requiresApproval === true)
    return 'everyone';
  if (CONVERSATION_CHANNELS.has(channel)) return 'subscribers';
  return 'everyone';
}

/** `audienceOf` an event on the bus, its data read only where the audience depends on it. */
export function audienceOfEvent(event: BusEvent): Audience {
  return audienceOf(event.channel, event.channel === 'agent:tool-call' ? event.data : undefined);
}

/** Client → server frames. */
export type ClientFrameType =
  | 'auth'
  | 'subscribe'
  | 'unsubscribe'
  | 'ping'
  | 'terminal-input'
  | 'terminal-resize'
  | 'terminal-attach'
  | 'terminal-detach'
  | 'terminal-ack';

export const TERMINAL_FRAME_TYPES: readonly ClientFrameType[] = [
  'terminal-input',
  'terminal-resize',
  'terminal-attach',
  'terminal-detach',
  'terminal-ack',
];

/** Server → client frames other than events. */
export type ServerFrame =
  | { type: 'auth:success' }
  /** `retryAfterSeconds`: present when the sign-in lockout refused it (additive). */
  | { type: 'auth:failed'; error: string; retryAfterSeconds?: number }
  | { type: 'error'; error: string }
  | { type: 'pong' }
  | EventEnvelope;

/** Bus channels for coordination between replicas; never delivered to sockets. */
export const INTERNAL_CHANNEL_PREFIX = 'internal:';

/** The additive resumable-stream event: the log no longer reaches back to what the client saw. */
export const STREAM_GAP_CHANNEL = 'stream:gap';

/** The wire frame of an event. */
export function eventFrame(channel: string, data: object): string {
  return JSON.stringify({ type: 'event', channel, data });
}

/** Channels whose events belong to one conversation and go through its event log (with a seq). */
export type ConversationChannel = keyof AgentEventPayloads;

/** What the event log stamps on every event of a conversation. */
export interface ConversationStamp {
  spaceId: string;
  conversationId: string;
  seq: number;
}

/** The data of an event of one conversation as it travels: its payload, stamped. */
export type ConversationEventData<C extends ConversationChannel = ConversationChannel> = AgentEventPayloads[C] &
  ConversationStamp;

/** `stream:gap`: the log no longer reaches back to `fromSeq`; sent by the gateway itself. */
export interface StreamGapEvent {
  conversationId: string;
  fromSeq: number;
}

/** The channels of events that belong to no one conversation (and stream:gap, which the gateway sends). */
export interface GlobalEventMap {
  [STREAM_GAP_CHANNEL]: StreamGapEvent;
  [MCP_STATUS_CHANNEL]: McpStatusEvent;
  [AppChannels.statusChanged]: AppStatusChangedEvent;
  [AppChannels.listChanged]: AppListChangedEvent;
  [AppChannels.deleted]: AppDeletedEvent;
  [AppChannels.activityEntryNew]: AppActivityEntryNewEvent;
  [AppChannels.imSessionUpdated]: AppImSessionUpdatedEvent;
  [AppChannels.escalationNew]: AppEscalationNewEvent;
  [AppChannels.escalationResolved]: AppEscalationResolvedEvent;
  [ARTIFACT_CHANGED_BATCH]: ArtifactChangeBatchEvent;
  [ARTIFACT_TREE_UPDATE]: ArtifactTreeUpdateEvent;
  [StoreChannels.syncStatusChanged]: StoreSyncStatusEvent;
  [StoreChannels.upgradeAvailable]: StoreUpgradeAvailableEvent;
  [AI_SOURCES_CATALOG_CHANGED]: AiSourcesCatalogChanged;
  [SPACE_CHANGED]: SpaceChangedEvent;
  [CONVERSATION_UPDATED]: ConversationUpdatedEvent;
  [TeamChannels.updated]: TeamUpdatedEvent;
  [TeamChannels.blackboard]: TeamBlackboardEvent;
  [TeamChannels.message]: TeamMessageEvent;
  [TeamChannels.memberHistory]: TeamMemberHistoryEvent;
  [KnowledgeChannels.ingestProgress]: IngestStatusDto;
  [KnowledgeChannels.statsUpdated]: KnowledgeStatsUpdatedEvent;
  [ChannelEventChannels.instanceUpdated]: ImChannelInstanceUpdatedEvent;
  [BrowserChannels.activeViewChanged]: BrowserActiveViewChangedEvent;
  [BrowserChannels.viewGone]: BrowserViewGoneEvent;
  [BrowserChannels.conversationReleased]: BrowserConversationReleasedEvent;
  // Between replicas only (INTERNAL_CHANNEL_PREFIX: never delivered to sockets).
  [AgentInternalChannels.stop]: { turnIds: string[] };
  [AgentInternalChannels.answer]: { turnId: string };
  [CONFIG_CHANGED_CHANNEL]: ConfigChanged;
  [WATCH_RESTART_CHANNEL]: WatchRestartEvent;
  [BrowserInternalChannels.command]: BrowserCommand;
  [BrowserInternalChannels.reply]: BrowserCommandReply;
  [BrowserInternalChannels.watchFrame]: BrowserWatchFrame;
}

/**
 * Every channel the server publishes, with the data of its events. `EventBus.publish` takes
 * only these; a new channel is added here (AgentEventPayloads for a conversation's, else
 * GlobalEventMap) with its payload type, and to EVENT_CHANNELS.
 */
export type EventMap = { [C in ConversationChannel]: ConversationEventData<C> } & GlobalEventMap;

export type EventChannel = keyof EventMap;

/** EventMap's channels at run time, for checks (the recording bus of the tests refuses others). */
export const EVENT_CHANNELS: readonly EventChannel[] = Object.keys({
  'agent:turn-start': 1,
  'agent:message': 1,
  'agent:thought': 1,
  'agent:thought-delta': 1,
  'agent:tool-call': 1,
  'agent:tool-result': 1,
  'agent:ask-question': 1,
  'agent:complete': 1,
  'agent:error': 1,
  'agent:session-info': 1,
  'agent:compact': 1,
  'agent:api-retry': 1,
  'agent:input-arrived': 1,
  'agent:input-stopped': 1,
  'agent:goal-updated': 1,
  'toolsets:changed': 1,
  'toolsets:requested': 1,
  'stream:gap': 1,
  'agent:mcp-status': 1,
  'app:status_changed': 1,
  'app:list_changed': 1,
  'app:deleted': 1,
  'app:activity_entry:new': 1,
  'app:im-session-updated': 1,
  'app:escalation:new': 1,
  'app:escalation:resolved': 1,
  'artifact:changed-batch': 1,
  'artifact:tree-update': 1,
  'store:sync-status-changed': 1,
  'store:upgrade-available': 1,
  'ai-sources:catalog-changed': 1,
  'space:changed': 1,
  'conversation:updated': 1,
  'team:updated': 1,
  'team:blackboard': 1,
  'team:message': 1,
  'team:member-history': 1,
  'tlon:ingest-progress': 1,
  'tlon:stats-updated': 1,
  'im-channels:instance-updated': 1,
  'ai-browser:active-view-changed': 1,
  'ai-browser:view-gone': 1,
  'ai-browser:conversation-released': 1,
  'internal:agent-stop': 1,
  'internal:agent-answer': 1,
  'internal:config-changed': 1,
  'internal:artifact-watch:restart': 1,
  'internal:browser-command': 1,
  'internal:browser-reply': 1,
  'internal:browser-watch-frame': 1,
} satisfies Record<EventChannel, 1>) as EventChannel[];

/** Whether `channel` is one of EventMap's. */
export function isEventChannel(channel: string): channel is EventChannel {
  return (EVENT_CHANNELS as readonly string[]).includes(channel);
}
