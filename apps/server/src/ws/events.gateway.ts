import type { IncomingMessage } from 'node:http';
import { Inject, type OnModuleDestroy } from '@nestjs/common';
import { Metrics } from '#core/ports/metrics.port.js';
import {
  ConnectedSocket,
  MessageBody,
  type OnGatewayConnection,
  type OnGatewayDisconnect,
  type OnGatewayInit,
  SubscribeMessage,
  WebSocketGateway,
} from '@nestjs/websockets';
import {
  audienceOfEvent,
  type BusEvent,
  eventFrame,
  INTERNAL_CHANNEL_PREFIX,
  STREAM_GAP_CHANNEL,
  TERMINAL_FRAME_TYPES,
} from '#contracts/events.js';
import { ErrorTexts } from '#contracts/errors.js';
import { AccessService } from '#core/auth/access.service.js';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { ConnectionRegistry } from '#core/ports/connection-registry.port.js';
import { EventBus } from '#core/ports/event-bus.port.js';
import { EventLog } from '#core/ports/event-log.port.js';
import { relayTrace } from '#core/kernel/relay-trace.js';
import { AppLogger } from '#infra/logging/logger.js';
import { clientIp } from '../http/common/client-ip.js';
import { type ClientFrame, FRAME_EVENT } from './frame-adapter.js';
import { OutgoingFrame, textFrame } from './outgoing-frame.js';
import {
  AUTHENTICATED_MAX_FRAME_BYTES,
  capBeforeSignIn,
  liftSignInCap,
  UNAUTHENTICATED_MAX_FRAME_BYTES,
} from './frame-limits.js';

/** The parts of a `ws` socket the gateway uses. */
interface Socket {
  readonly readyState: number;
  /** Bytes queued for this socket and not yet handed to the network (a client that does not read). */
  readonly bufferedAmount: number;
  /** Extensions negotiated at the upgrade (`permessage-deflate`), or ''. */
  readonly extensions: string;
  send(data: string | Buffer, options?: { binary: boolean }): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  pause(): void;
  ping(): void;
  on(event: 'pong', listener: () => void): void;
}

const OPEN = 1;
/**
 * A socket with more than this queued (a client that stopped reading) is dropped: it
 * reconnects and replays from its last `seq`, instead of growing the server without bound.
 */
export const MAX_SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;
/** Conversations one socket may follow at once; one more answers an error frame and is ignored. */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 1000;
/** Longer conversation ids are no ids (UUIDs, `app-chat:<appId>`): ignored. */
const MAX_CONVERSATION_ID_LENGTH = 256;
/** docs/api.md, "Events": close about 100 ms after auth:failed, so the frame reaches the client. */
const AUTH_FAILED_CLOSE_MS = 100;

interface Connection {
  id: number;
  ip: string;
  authenticated: boolean;
  subscriptions: Set<string>;
  /** The "too many subscriptions" error went out (again after an unsubscribe). */
  capNoticeSent: boolean;
  alive: boolean;
  /** Frames of one connection are handled strictly in arrival order. */
  chain: Promise<void>;
  /** Conversations being replayed: live frames wait here until the replay is sent. */
  replaying: Map<string, Array<{ seq: number; frame: string }>>;
  /** Closes the socket unless it signs in in time; cleared at sign-in. */
  signInTimer: NodeJS.Timeout | null;
  /** Frames queued for this socket during the current tick, written together at its end. */
  outbox: Array<string | OutgoingFrame>;
  /**
   * The TCP socket the upgrade request came on (the one `ws` writes to): corked around a
   * tick's frames so that they leave in one write.
   */
  tcp: TcpSocket | undefined;
  /**
   * Whether the gateway writes this socket's frames to `tcp` itself, each prepared once for
   * every socket (`OutgoingFrame.wire`), rather than through `ws`'s `send`, which frames the
   * payload again per socket. Only without extensions: then `ws` writes every frame of its own
   * (pings, close) straight to the same TCP socket too, so the order of all frames is the
   * order they were written in, and `bufferedAmount` counts both.
   */
  direct: boolean;
}

interface TcpSocket {
  cork(): void;
  uncork(): void;
  write(data: Buffer): boolean;
}

/** Close code for a socket that did not sign in in time (policy violation). */
const SIGN_IN_TIMEOUT_CLOSE = 1008;

/**
 * The `/ws` event stream (docs/api.md, "Events"): socket sign-in under the lockout rules,
 * subscriptions, keepalive, and delivery of every event from the bus — conversation detail
 * to subscribers, status and global events to every authenticated connection.
 */
@WebSocketGateway({ path: '/ws', maxPayload: AUTHENTICATED_MAX_FRAME_BYTES })
export class EventsGateway implements OnGatewayInit, OnGatewayConnection, OnGatewayDisconnect, OnModuleDestroy {
  private readonly connections = new Map<Socket, Connection>();
  private nextId = 1;
  private keepalive: NodeJS.Timeout | null = null;
  private unsubscribeBus: (() => void) | null = null;
  /** Sockets with queued frames, flushed once per tick (see `send`). */
  private readonly flushing = new Map<Socket, Connection>();
  private flushScheduled = false;
  /** bench/agent (SVC_RELAY_TRACE): events of this tick, stamped `written` when flushed. */
  private traced: Array<[string, number]> = [];

  constructor(
    private readonly access: AccessService,
    private readonly bus: EventBus,
    private readonly log: EventLog,
    private readonly registry: ConnectionRegistry,
    private readonly logger: AppLogger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  afterInit(): void {
    this.unsubscribeBus = this.bus.subscribe((event, frame) => this.deliver(event, frame));
    this.keepalive = setInterval(() => this.sweep(), this.config.wsPingIntervalMs);
    this.keepalive.unref();
  }

  handleConnection(socket: Socket, req: IncomingMessage): void {
    const connection: Connection = {
      id: this.nextId++,
      ip: clientIp(req, this.config),
      authenticated: false,
      subscriptions: new Set(),
      capNoticeSent: false,
      alive: true,
      chain: Promise.resolve(),
      replaying: new Map(),
      signInTimer: null,
      outbox: [],
      tcp: req.socket ?? undefined,
      direct: req.socket !== undefined && socket.extensions === '',
    };
    // Until it signs in, a socket gets small frames only and a deadline.
    capBeforeSignIn(socket, req.socket, UNAUTHENTICATED_MAX_FRAME_BYTES);
    connection.signInTimer = setTimeout(() => {
      this.logger.debug('ws sign-in timeout', { connId: connection.id });
      socket.close(SIGN_IN_TIMEOUT_CLOSE, 'Sign in first');
    }, this.config.wsSignInTimeoutMs);
    connection.signInTimer.unref();
    this.connections.set(socket, connection);
    socket.on('pong', () => {
      connection.alive = true;
    });
    this.logger.debug('ws connected', { connId: connection.id, ip: connection.ip });
  }

  handleDisconnect(socket: Socket): void {
    const connection = this.connections.get(socket);
    this.connections.delete(socket);
    this.flushing.delete(socket);
    if (connection?.signInTimer) clearTimeout(connection.signInTimer);
    if (connection?.authenticated) this.countClients();
    if (connection) this.logger.debug('ws disconnected', { connId: connection.id });
  }

  @SubscribeMessage(FRAME_EVENT)
  onFrame(@ConnectedSocket() socket: Socket, @MessageBody() frame: ClientFrame): void {
    const connection = this.connections.get(socket);
    if (!connection) return;
    connection.chain = connection.chain
      .then(() => this.handleFrame(socket, connection, frame))
      .catch((err: Error) => this.logger.warn('ws frame failed', { connId: connection.id, error: err.message }));
  }

  /** Closes every socket (shutdown): clients reconnect to another replica. */
  closeAll(code = 1001, reason = 'Server shutting down'): void {
    this.flush();
    for (const socket of this.connections.keys()) socket.close(code, reason);
  }

  onModuleDestroy(): void {
    if (this.keepalive) clearInterval(this.keepalive);
    this.unsubscribeBus?.();
  }

  private async handleFrame(socket: Socket, connection: Connection, frame: ClientFrame): Promise<void> {
    const payload = (frame.payload && typeof frame.payload === 'object' ? frame.payload : {}) as Record<
      string,
      unknown
    >;
    switch (frame.type) {
      case 'auth':
        return this.authenticate(socket, connection, payload.token);
      case 'ping':
        return this.send(socket, connection, '{"type":"pong"}');
      case 'subscribe':
      case 'unsubscribe': {
        if (!connection.authenticated) return this.send(socket, connection, notAuthenticated);
        const id = payload.conversationId;
        if (typeof id !== 'string' || id === '' || id.length > MAX_CONVERSATION_ID_LENGTH) return;
        if (frame.type === 'unsubscribe') {
          connection.subscriptions.delete(id);
          connection.capNoticeSent = false;
          connection.replaying.delete(id);
          return;
        }
        if (!connection.subscriptions.has(id) && connection.subscriptions.size >= MAX_SUBSCRIPTIONS_PER_SOCKET) {
          // Said once, not once per refused frame (a flood would turn into a flood of answers).
          if (connection.capNoticeSent) return;
          connection.capNoticeSent = true;
          return this.send(socket, connection, tooManySubscriptions);
        }
        connection.subscriptions.add(id);
        if (typeof payload.afterSeq === 'number' && Number.isInteger(payload.afterSeq) && payload.afterSeq >= 0) {
          await this.replay(socket, connection, id, payload.afterSeq);
        }
        return;
      }
      default:
        if ((TERMINAL_FRAME_TYPES as readonly string[]).includes(frame.type)) {
          return this.send(socket, connection, connection.authenticated ? terminalUnavailable : notAuthenticated);
        }
      // Unknown types are ignored (docs/api.md, "Events").
    }
  }

  private async authenticate(socket: Socket, connection: Connection, token: unknown): Promise<void> {
    const outcome = await this.access.signIn(token, connection.ip);
    if (outcome.ok) {
      const first = !connection.authenticated;
      connection.authenticated = true;
      if (connection.signInTimer) clearTimeout(connection.signInTimer);
      connection.signInTimer = null;
      liftSignInCap(socket);
      if (first) this.countClients();
      this.send(socket, connection, '{"type":"auth:success"}');
      this.logger.debug('ws authenticated', { connId: connection.id });
      return;
    }
    if (connection.authenticated) {
      connection.authenticated = false;
      this.countClients();
    }
    // A locked sign-in says for how long, so a client can keep its session and retry then.
    const refusal =
      outcome.reason === 'locked'
        ? { type: 'auth:failed', error: ErrorTexts.locked, retryAfterSeconds: outcome.retryAfterSeconds }
        : { type: 'auth:failed', error: ErrorTexts.invalidToken };
    this.send(socket, connection, JSON.stringify(refusal));
    this.logger.info('ws sign-in refused', { connId: connection.id, ip: connection.ip, reason: outcome.reason });
    setTimeout(() => socket.close(4001, 'Authentication failed'), AUTH_FAILED_CLOSE_MS).unref();
  }

  /**
   * Resumable stream (additive): sends what the client missed after `afterSeq`, or a
   * `stream:gap` first when the log no longer reaches back, then goes live. Live frames that
   * arrive meanwhile are held and sent after, without duplicates.
   */
  private async replay(
    socket: Socket,
    connection: Connection,
    conversationId: string,
    afterSeq: number,
  ): Promise<void> {
    const held: Array<{ seq: number; frame: string }> = [];
    connection.replaying.set(conversationId, held);
    let lastSent = afterSeq;
    try {
      const result = await this.log.since(conversationId, afterSeq);
      if (!result.complete) {
        this.metrics.replayGap();
        this.send(socket, connection, eventFrame(STREAM_GAP_CHANNEL, { conversationId, fromSeq: result.fromSeq }));
      }
      for (const event of result.events) {
        this.send(socket, connection, eventFrame(event.channel, event.data));
        lastSent = event.seq;
      }
    } finally {
      if (connection.replaying.get(conversationId) === held) connection.replaying.delete(conversationId);
      for (const { seq, frame } of held) if (seq > lastSent) this.send(socket, connection, frame);
    }
  }

  /** Frame serialized once by the bus; here only the audience is decided per socket. */
  private deliver(event: BusEvent, frame: string): void {
    if (event.channel.startsWith(INTERNAL_CHANNEL_PREFIX)) return;
    // Where the bus read the conversation and seq from the frame, a delta's data is never decoded.
    const everyone = audienceOfEvent(event) === 'everyone';
    const conversationId = event.conversationId ?? (event.data as { conversationId?: unknown }).conversationId;
    const seqOf = (): unknown => event.seq ?? (event.data as { seq?: unknown }).seq;
    const traced = relayTrace.enabled && typeof conversationId === 'string' && relayTrace.traces(conversationId);
    if (traced) relayTrace.mark(conversationId, seqOf() as number, 'gateway');
    const subscribed = (c: Connection): boolean =>
      typeof conversationId === 'string' && c.subscriptions.has(conversationId);
    // Encoded and framed once for every recipient, sent as a text frame.
    let outgoing: OutgoingFrame | null = null;
    let sent = 0;
    for (const [socket, connection] of this.connections) {
      if (!connection.authenticated) continue;
      if (subscribed(connection) && connection.replaying.has(conversationId as string)) {
        const seq = seqOf();
        connection.replaying
          .get(conversationId as string)!
          .push({ seq: typeof seq === 'number' ? seq : Infinity, frame });
        continue;
      }
      if (everyone || subscribed(connection)) {
        outgoing ??= new OutgoingFrame(frame);
        this.send(socket, connection, outgoing);
        sent++;
      }
    }
    if (sent > 0) this.metrics.wsFramesSent(sent);
    if (traced) this.traced.push([conversationId, seqOf() as number]);
  }

  /** `clients` of the status probe: signed-in sockets only. */
  private countClients(): void {
    let count = 0;
    for (const connection of this.connections.values()) if (connection.authenticated) count++;
    this.registry.setLocalCount(count);
    this.metrics.wsClients(count);
  }

  /**
   * Queues a frame for the socket; every socket's queue is written at the end of the tick,
   * corked, so the frames of one tick leave in one write (not one syscall per frame per socket)
   * and strictly in the order they were queued.
   */
  private send(socket: Socket, connection: Connection, data: string | OutgoingFrame): void {
    if (socket.readyState !== OPEN) return;
    connection.outbox.push(data);
    if (connection.outbox.length === 1) this.flushing.set(socket, connection);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
  }

  /**
   * Writes every queued frame. A socket that still holds more than MAX_SOCKET_BUFFER_BYTES
   * unsent from earlier ticks (its client stopped reading) is dropped instead: measured before
   * this tick's frames, which the kernel has had no chance to take yet.
   */
  private readonly flush = (): void => {
    this.flushScheduled = false;
    for (const [socket, connection] of this.flushing) {
      const frames = connection.outbox;
      connection.outbox = [];
      if (socket.readyState !== OPEN) continue;
      if (socket.bufferedAmount > MAX_SOCKET_BUFFER_BYTES) {
        this.logger.warn('ws send buffer full; socket dropped (the client reconnects and replays)', {
          connId: connection.id,
          bufferedBytes: socket.bufferedAmount,
        });
        socket.terminate();
        continue;
      }
      const tcp = connection.tcp;
      if (connection.direct && tcp) {
        tcp.cork();
        for (const data of frames) tcp.write(typeof data === 'string' ? textFrame(data) : data.wire());
        tcp.uncork();
        continue;
      }
      tcp?.cork();
      for (const data of frames) socket.send(typeof data === 'string' ? data : data.payload(), { binary: false });
      tcp?.uncork();
    }
    this.flushing.clear();
    if (this.traced.length > 0) {
      for (const [conversationId, seq] of this.traced) relayTrace.mark(conversationId, seq, 'written');
      this.traced = [];
    }
  };

  /** Protocol-level keepalive: a socket that did not answer the previous ping is dropped. */
  private sweep(): void {
    for (const [socket, connection] of this.connections) {
      if (!connection.alive) {
        this.logger.debug('ws keepalive timeout', { connId: connection.id });
        socket.terminate();
        continue;
      }
      connection.alive = false;
      try {
        socket.ping();
      } catch {
        /* closing */
      }
    }
  }
}

const notAuthenticated = JSON.stringify({ type: 'error', error: ErrorTexts.notAuthenticated });
const tooManySubscriptions = JSON.stringify({
  type: 'error',
  error: `Too many subscriptions on this connection (at most ${MAX_SUBSCRIPTIONS_PER_SOCKET}); unsubscribe from some first`,
});
const terminalUnavailable = JSON.stringify({ type: 'error', error: ErrorTexts.terminalUnavailable });
