import type { EventEnvelope, ServerFrame } from '#contracts/events.js';
import { ErrorTexts } from '#contracts/errors.js';
import { STREAM_GAP_CHANNEL } from '#contracts/events.js';
import { session, wsUrl } from './api.js';

/** `paused`: sign-in is locked out for a while; the session stays, the socket retries when the lock ends. */
export type SocketState = 'connecting' | 'open' | 'closed' | 'paused';
export type EventListener = (event: EventEnvelope) => void;

/** Reconnect delays: 1 s, doubling, at most 30 s (docs/api.md, "Events"). */
export const FIRST_RETRY_MS = 1_000;
export const MAX_RETRY_MS = 30_000;
export const nextDelay = (delay: number): number => Math.min(delay * 2, MAX_RETRY_MS);

/**
 * The event stream. Signs in with the session's token, keeps its subscriptions across
 * reconnects and resumes each conversation after the last `seq` it saw, so a dropped socket
 * loses no text (the server replays, or sends `stream:gap` when it no longer can).
 */
export class EventSocket {
  private socket: WebSocket | null = null;
  private readonly listeners = new Set<EventListener>();
  private readonly stateListeners = new Set<(state: SocketState, retryInMs?: number) => void>();
  /** Subscribed conversations, with the last `seq` seen in each. */
  private readonly subscriptions = new Map<string, number | undefined>();
  private delay = FIRST_RETRY_MS;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  /** Set while the lockout refuses sign-in: how long until the socket may try again. */
  private lockedForMs: number | undefined;
  state: SocketState = 'closed';
  /** Connections opened so far (the browser tests read it). */
  connections = 0;

  constructor(private readonly onRefused: () => void) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.socket?.close();
    this.socket = null;
    this.setState('closed');
  }

  on(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onState(listener: (state: SocketState, retryInMs?: number) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  subscribe(conversationId: string): void {
    if (this.subscriptions.has(conversationId)) return;
    this.subscriptions.set(conversationId, undefined);
    this.send({ type: 'subscribe', payload: { conversationId } });
  }

  /**
   * Asks the server for every event of the conversation its log still holds (a turn already
   * running when the page was opened): the server replays from the start of its log, after a
   * `stream:gap` when the log no longer reaches back that far.
   */
  replay(conversationId: string): void {
    this.subscriptions.set(conversationId, 0);
    this.send({ type: 'subscribe', payload: { conversationId, afterSeq: 0 } });
  }

  unsubscribe(conversationId: string): void {
    if (!this.subscriptions.delete(conversationId)) return;
    this.send({ type: 'unsubscribe', payload: { conversationId } });
  }

  private send(frame: object): void {
    if (this.state === 'open' && this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private setState(state: SocketState, retryInMs?: number): void {
    this.state = state;
    for (const listener of this.stateListeners) listener(state, retryInMs);
  }

  private connect(): void {
    if (this.stopped) return;
    this.setState('connecting');
    const socket = new WebSocket(wsUrl());
    this.socket = socket;
    this.connections += 1;
    socket.onopen = () => socket.send(JSON.stringify({ type: 'auth', payload: { token: session.token ?? '' } }));
    socket.onmessage = (message) => {
      let frame: ServerFrame;
      try {
        frame = JSON.parse(String(message.data)) as ServerFrame;
      } catch {
        return;
      }
      if (frame.type === 'auth:success') {
        this.delay = FIRST_RETRY_MS;
        this.setState('open');
        for (const [conversationId, afterSeq] of this.subscriptions) {
          socket.send(JSON.stringify({ type: 'subscribe', payload: { conversationId, afterSeq } }));
        }
      } else if (frame.type === 'auth:failed') {
        // A lockout says nothing about the token (header-token requests still work): wait it out.
        if (frame.error === ErrorTexts.locked || frame.retryAfterSeconds !== undefined) {
          this.lockedForMs = (frame.retryAfterSeconds ?? MAX_RETRY_MS / 1000) * 1000;
          return;
        }
        this.stopped = true;
        this.onRefused();
      } else if (frame.type === 'event') {
        this.noteSeq(frame);
        for (const listener of this.listeners) listener(frame);
      }
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.stopped) return this.setState('closed');
      if (this.lockedForMs !== undefined) {
        const lockWait = this.lockedForMs;
        this.lockedForMs = undefined;
        this.setState('paused', lockWait);
        this.timer = setTimeout(() => this.connect(), lockWait);
        return;
      }
      const wait = this.delay;
      this.delay = nextDelay(this.delay);
      this.setState('closed', wait);
      this.timer = setTimeout(() => this.connect(), wait);
    };
  }

  private noteSeq(frame: EventEnvelope): void {
    const data = frame.data as { conversationId?: unknown; seq?: unknown };
    if (typeof data.conversationId !== 'string' || !this.subscriptions.has(data.conversationId)) return;
    if (frame.channel === STREAM_GAP_CHANNEL) this.subscriptions.set(data.conversationId, undefined);
    else if (typeof data.seq === 'number') this.subscriptions.set(data.conversationId, data.seq);
  }
}
