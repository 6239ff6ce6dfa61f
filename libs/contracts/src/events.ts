/**
 * Wire contract of the WebSocket event stream (docs/api.md, "Events").
 * Shared by the server, the web app and the tests.
 */

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

export function audienceOf(channel: string): Audience {
  if (STATUS_CHANNELS.has(channel)) return 'everyone';
  if (CONVERSATION_CHANNELS.has(channel)) return 'subscribers';
  return 'everyone';
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
  | { type: 'auth:failed'; error: string }
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
