import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

/**
 * A loopback server speaking Slack's wire protocols, for tests of the Slack channel. Shapes are
 * those of Slack's public documentation:
 * - Web API (https://api.slack.com/web): `POST /api/<method>` with a form or JSON body and
 *   `Authorization: Bearer <token>`, answered `{ok: true, …}` or `{ok: false, error}` with
 *   status 200. Served: `auth.test` (https://api.slack.com/methods/auth.test), `chat.postMessage`
 *   (/methods/chat.postMessage), `users.info`, `conversations.info`, `apps.connections.open`
 *   (app-level token; a bot token gets `not_allowed_token_type`).
 * - Events API (https://api.slack.com/apis/events-api): `deliver()` POSTs an `event_callback`
 *   (`token, team_id, api_app_id, event, type, event_id, event_time, authorizations`) signed as
 *   "Verifying requests from Slack" says: `X-Slack-Signature: v0=<hex HMAC-SHA256 of
 *   "v0:<timestamp>:<body>">`, `X-Slack-Request-Timestamp`, and on a retry `X-Slack-Retry-Num`
 *   / `X-Slack-Retry-Reason`.
 * - Socket Mode (https://api.slack.com/apis/socket-mode): the URL `apps.connections.open` gives
 *   is a WebSocket here that says `{type: "hello", …}`, sends `events_api` envelopes
 *   (`envelope_id, payload, accepts_response_payload, retry_attempt, retry_reason`) expecting
 *   `{envelope_id}` back, and `{type: "disconnect", reason}` before it closes.
 */

export interface SlackPosted {
  channel: string;
  text: string;
  thread_ts?: string;
  ts: string;
}

export interface SlackUser {
  id: string;
  name: string;
  real_name?: string;
}

export interface MessageOptions {
  channel: string;
  /** `im` for a direct message; `channel` (public), `group` (private), `mpim`. */
  channelType: 'im' | 'channel' | 'group' | 'mpim';
  user: string;
  text: string;
  /** `app_mention` (a channel message naming the bot) or `message`. */
  type?: 'message' | 'app_mention';
  ts?: string;
  threadTs?: string;
  subtype?: string;
  botId?: string;
}

export type EventCallback = Record<string, unknown> & { event_id: string; event: Record<string, unknown> };

export class FakeSlackServer {
  readonly team = { id: 'T0FAKE01', name: 'Fake Workspace' };
  readonly bot = { userId: 'U0BOT0001', botId: 'B0BOT0001', name: 'chatty' };
  readonly appId = 'A0APP0001';
  readonly posted: SlackPosted[] = [];
  readonly calls = new Map<string, number>();
  readonly users = new Map<string, SlackUser>();
  readonly channels = new Map<string, string>();
  /** Envelope ids the Socket Mode client acknowledged. */
  readonly acks: string[] = [];
  /** chat.postMessage answers this many 503s first (Slack down). */
  failSends = 0;
  private readonly sockets = new Set<WebSocket>();
  private readonly wss: WebSocketServer;
  private nextTs = 1_700_000_000;
  private nextEvent = 1;
  private nextEnvelope = 1;

  private constructor(
    private readonly server: http.Server,
    readonly botToken: string,
    readonly appToken: string,
  ) {
    this.wss = new WebSocketServer({ noServer: true });
    server.on('upgrade', (req, socket, head) => {
      if (!req.url?.startsWith('/link/')) return socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        this.sockets.add(ws);
        ws.on('close', () => this.sockets.delete(ws));
        ws.on('message', (data) => {
          const ack = JSON.parse(String(data)) as { envelope_id?: string };
          if (typeof ack.envelope_id === 'string') this.acks.push(ack.envelope_id);
        });
        ws.send(
          JSON.stringify({
            type: 'hello',
            num_connections: this.sockets.size,
            debug_info: { host: 'fake-slack', build_number: 1, approximate_connection_time: 18060 },
            connection_info: { app_id: this.appId },
          }),
        );
      });
    });
  }

  static async start(botToken: string, appToken = 'xapp-1-A0APP0001-1-fake'): Promise<FakeSlackServer> {
    const server = http.createServer();
    const self = new FakeSlackServer(server, botToken, appToken);
    server.on('request', (req, res) => void self.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  /** The Web API root to configure (`apiRoot`), as `https://slack.com/api` is the real one. */
  get apiRoot(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api`;
  }

  /** Socket Mode connections open now. */
  get openSockets(): number {
    return this.sockets.size;
  }

  count(method: string): number {
    return this.calls.get(method) ?? 0;
  }

  postedTo(channel: string): SlackPosted[] {
    return this.posted.filter((p) => p.channel === channel);
  }

  /** A fresh message timestamp (`ts`, seconds.micro as Slack writes it). */
  ts(): string {
    return `${this.nextTs++}.000${String(this.nextEvent).padStart(3, '0')}`;
  }

  /** An `event_callback` carrying a `message` or `app_mention` event (Events API, "Callback field overview"). */
  event(o: MessageOptions): EventCallback {
    const type = o.type ?? 'message';
    const ts = o.ts ?? this.ts();
    const event: Record<string, unknown> = {
      type,
      user: o.user,
      text: o.text,
      ts,
      channel: o.channel,
      event_ts: ts,
      team: this.team.id,
    };
    if (type === 'message') event.channel_type = o.channelType;
    if (o.threadTs) event.thread_ts = o.threadTs;
    if (o.subtype) event.subtype = o.subtype;
    if (o.botId) event.bot_id = o.botId;
    return {
      token: 'deprecated-verification-token',
      team_id: this.team.id,
      api_app_id: this.appId,
      event,
      type: 'event_callback',
      event_id: `Ev0${this.nextEvent++}FAKE`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [
        {
          enterprise_id: null,
          team_id: this.team.id,
          user_id: this.bot.userId,
          is_bot: true,
          is_enterprise_install: false,
        },
      ],
      is_ext_shared_channel: false,
      event_context: `4-fake-${this.nextEvent}`,
    };
  }

  /**
   * POSTs a body to the Events API request URL, signed with `signingSecret` (or as given):
   * `timestamp` in seconds (default now), `retryNum` for a redelivery.
   */
  async deliver(
    url: string,
    signingSecret: string,
    body: unknown,
    options: { timestamp?: number; retryNum?: number; signature?: string } = {},
  ): Promise<{ status: number; body: unknown }> {
    const raw = JSON.stringify(body);
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const signature =
      options.signature ?? `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${raw}`).digest('hex')}`;
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Slack-Request-Timestamp': timestamp,
        'X-Slack-Signature': signature,
        ...(options.retryNum !== undefined
          ? { 'X-Slack-Retry-Num': String(options.retryNum), 'X-Slack-Retry-Reason': 'http_timeout' }
          : {}),
      },
      body: raw,
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Plain text.
    }
    return { status: res.status, body: parsed };
  }

  /** Sends an `events_api` envelope to every Socket Mode connection; answers its envelope id. */
  socketEvent(payload: EventCallback, retryAttempt = 0): string {
    const envelopeId = `env-${this.nextEnvelope++}`;
    const frame = JSON.stringify({
      envelope_id: envelopeId,
      payload,
      type: 'events_api',
      accepts_response_payload: false,
      retry_attempt: retryAttempt,
      retry_reason: retryAttempt > 0 ? 'timeout' : '',
    });
    for (const ws of this.sockets) ws.send(frame);
    return envelopeId;
  }

  /** Slack asking its clients to reconnect: `disconnect`, then the socket closes. */
  disconnectSockets(reason = 'refresh_requested'): void {
    for (const ws of this.sockets) {
      ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'fake-slack' } }));
      setTimeout(() => ws.close(), 50).unref();
    }
  }

  async until(predicate: () => boolean, timeoutMs = 20_000, what = 'messages'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(this.posted)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = url.pathname.replace(/^\/api\//, '');
    this.calls.set(method, this.count(method) + 1);
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    const params: Record<string, string> = Object.fromEntries(url.searchParams);
    if (raw !== '') {
      if ((req.headers['content-type'] ?? '').includes('application/json'))
        Object.assign(params, JSON.parse(raw) as Record<string, string>);
      else Object.assign(params, Object.fromEntries(new URLSearchParams(raw)));
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? params.token;
    if (!token) return answer(200, { ok: false, error: 'not_authed' });
    if (method === 'apps.connections.open') {
      if (token === this.botToken) return answer(200, { ok: false, error: 'not_allowed_token_type' });
      if (token !== this.appToken) return answer(200, { ok: false, error: 'invalid_auth' });
      const port = (this.server.address() as AddressInfo).port;
      return answer(200, { ok: true, url: `ws://127.0.0.1:${port}/link/?ticket=fake-${this.nextEnvelope}` });
    }
    if (token !== this.botToken) return answer(200, { ok: false, error: 'invalid_auth' });
    switch (method) {
      case 'auth.test':
        return answer(200, {
          ok: true,
          url: 'https://fake-workspace.slack.com/',
          team: this.team.name,
          user: this.bot.name,
          team_id: this.team.id,
          user_id: this.bot.userId,
          bot_id: this.bot.botId,
          is_enterprise_install: false,
        });
      case 'chat.postMessage': {
        if (this.failSends > 0) {
          this.failSends -= 1;
          res.writeHead(503, { 'Content-Type': 'text/plain' });
          res.end('Service Unavailable');
          return;
        }
        if (!params.channel) return answer(200, { ok: false, error: 'channel_not_found' });
        if (!params.text) return answer(200, { ok: false, error: 'no_text' });
        const ts = this.ts();
        this.posted.push({
          channel: params.channel,
          text: params.text,
          ts,
          ...(params.thread_ts ? { thread_ts: params.thread_ts } : {}),
        });
        return answer(200, {
          ok: true,
          channel: params.channel,
          ts,
          message: { type: 'message', text: params.text, user: this.bot.userId, bot_id: this.bot.botId, ts },
        });
      }
      case 'users.info': {
        const user = this.users.get(params.user ?? '');
        if (!user) return answer(200, { ok: false, error: 'user_not_found' });
        return answer(200, {
          ok: true,
          user: {
            id: user.id,
            team_id: this.team.id,
            name: user.name,
            real_name: user.real_name ?? user.name,
            profile: { display_name: user.real_name ?? '', real_name: user.real_name ?? user.name },
            is_bot: false,
          },
        });
      }
      case 'conversations.info': {
        const name = this.channels.get(params.channel ?? '');
        if (!name) return answer(200, { ok: false, error: 'channel_not_found' });
        return answer(200, { ok: true, channel: { id: params.channel, name, is_channel: true, is_im: false } });
      }
      default:
        return answer(200, { ok: false, error: 'unknown_method' });
    }
  }
}
