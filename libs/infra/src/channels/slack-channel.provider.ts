import { createHmac, timingSafeEqual } from 'node:crypto';
import WebSocket from 'ws';
import type { ChannelConfigField } from '#contracts/channels.js';
import {
  type ChannelConnection,
  ChannelError,
  ChannelProvider,
  type ConnectionSink,
  type InboundMessage,
  type OutboundTarget,
  type WebhookParse,
} from '#core/channels/channel-provider.port.js';
import type { ChannelInstanceRecord } from '#core/ports/channel.repository.port.js';
import type { ChannelFetch } from './channel-fetch.js';
import { abortableSleep } from './channel-fetch.js';

type Headers = Record<string, string | string[] | undefined>;

export const SLACK_API_ROOT = 'https://slack.com/api';
/**
 * The longest reply part. Slack truncates a message's `text` beyond 40,000 characters and asks
 * for at most 4,000 ("Truncating really long messages", chat.postMessage's documentation).
 */
export const SLACK_MAX_MESSAGE = 4000;
/** Requests signed longer ago than this are refused (Slack's "Verifying requests" guide: 5 minutes). */
export const SLACK_MAX_SKEW_S = 5 * 60;
/** Back-off between failed Socket Mode connections (then it stays at the last). */
const SOCKET_BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000];
/** Web API errors that mean the token is refused for good (no retry until the instance changes). */
const AUTH_ERRORS = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'not_allowed_token_type',
  'missing_scope',
]);
/** A name lookup (users.info, conversations.info) never holds a delivery longer than this. */
const LOOKUP_TIMEOUT_MS = 2_000;

/**
 * The shapes this adapter reads, from Slack's public documentation: the Events API's outer
 * event (https://api.slack.com/apis/events-api, "Callback field overview"), the `message` and
 * `app_mention` event types (https://api.slack.com/events/message, /events/app_mention) and
 * Socket Mode's envelopes (https://api.slack.com/apis/socket-mode).
 */
interface SlackEvent {
  type: string;
  subtype?: string;
  channel?: string;
  channel_type?: 'im' | 'channel' | 'group' | 'mpim' | 'app_home';
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
}
interface SlackEventCallback {
  type: 'event_callback' | 'url_verification' | 'app_rate_limited' | string;
  challenge?: string;
  event_id?: string;
  event?: SlackEvent;
  authorizations?: Array<{ user_id?: string; is_bot?: boolean }>;
}
interface SocketEnvelope {
  type: 'hello' | 'disconnect' | 'events_api' | string;
  envelope_id?: string;
  reason?: string;
  payload?: SlackEventCallback;
}
type SlackAnswer = { ok: boolean; error?: string } & Record<string, unknown>;

/** Message subtypes that are a person writing (others are edits, joins, bots…). */
const PERSON_SUBTYPES = new Set([undefined, 'file_share', 'thread_broadcast']);

/**
 * Slack (docs/api/channels.md, "Slack"), on the Web API and the Events API over plain fetch:
 * every call must pass the channels' address policy (SVC_CHANNEL_ALLOW, ChannelFetch), which the
 * official SDK's own HTTP and WebSocket clients would bypass, and the handful of methods used
 * (auth.test, chat.postMessage, users.info, conversations.info, apps.connections.open) are plain
 * form posts. Two transports:
 * - `events` (default): Slack POSTs each event to `/hooks/channels/<instanceId>`, signed with
 *   the app's signing secret (`v0` HMAC-SHA256); any replica receives. The lease holder only
 *   checks the bot token (`auth.test`).
 * - `socket`: the lease holder opens a Socket Mode WebSocket (`apps.connections.open` with the
 *   app-level token), acknowledges each envelope, and reconnects when Slack asks it to.
 * Replies leave from any replica (`chat.postMessage`).
 */
export class SlackChannelProvider extends ChannelProvider {
  readonly type = 'slack';
  readonly displayName = 'Slack';
  readonly description =
    'A Slack app (bot token): direct messages and channels where it is mentioned, by the Events API or Socket Mode.';
  readonly configFields: readonly ChannelConfigField[] = [
    {
      key: 'botToken',
      label: 'Bot token',
      type: 'secret',
      required: true,
      description: 'xoxb-…, from OAuth & Permissions (scopes chat:write, app_mentions:read, im:history)',
    },
    {
      key: 'mode',
      label: 'Transport',
      type: 'string',
      required: false,
      description: '"events" (Events API to /hooks/channels/<id>) or "socket" (Socket Mode)',
    },
    {
      key: 'signingSecret',
      label: 'Signing secret',
      type: 'secret',
      required: false,
      description: 'Basic Information → Signing Secret (Events API)',
    },
    {
      key: 'appToken',
      label: 'App-level token',
      type: 'secret',
      required: false,
      description: 'xapp-… with connections:write (Socket Mode)',
    },
    {
      key: 'apiRoot',
      label: 'Web API root',
      type: 'url',
      required: false,
      description: 'Default https://slack.com/api',
    },
  ];
  readonly defaultConfig = { mode: 'events' };
  readonly maxMessageLength = SLACK_MAX_MESSAGE;

  /** users.info / conversations.info answers, per instance and id (names only). */
  private readonly names = new Map<string, string | null>();

  constructor(
    private readonly http: ChannelFetch,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void> = abortableSleep,
  ) {
    super();
  }

  override configProblem(config: Record<string, unknown>): string | null {
    if (typeof config.botToken !== 'string' || !/^xox[a-z]-[A-Za-z0-9-]+$/.test(config.botToken))
      return 'config.botToken must be a Slack bot token (xoxb-…)';
    const mode = config.mode ?? 'events';
    if (mode !== 'events' && mode !== 'socket') return 'config.mode must be "events" or "socket"';
    if (mode === 'events' && (typeof config.signingSecret !== 'string' || config.signingSecret === ''))
      return 'config.signingSecret is required for the Events API (mode "events")';
    if (mode === 'socket' && (typeof config.appToken !== 'string' || !/^xapp-[A-Za-z0-9-]+$/.test(config.appToken)))
      return 'config.appToken must be an app-level token (xapp-…) for Socket Mode (mode "socket")';
    if (
      config.apiRoot !== undefined &&
      (typeof config.apiRoot !== 'string' || !/^https?:\/\/[^/\s]+/.test(config.apiRoot))
    )
      return 'config.apiRoot must be an http(s) URL';
    return null;
  }

  /** Events API: a signed request from Slack (or its URL verification handshake). */
  override async parseWebhook(instance: ChannelInstanceRecord, raw: Buffer, headers: Headers): Promise<WebhookParse> {
    const refusal = this.signatureProblem(instance, raw, headers);
    if (refusal !== null) return { kind: 'refused', refusal: 'bad-signature', error: refusal };
    let body: SlackEventCallback;
    try {
      body = JSON.parse(raw.toString('utf8')) as SlackEventCallback;
    } catch {
      return { kind: 'refused', refusal: 'bad-body', error: 'Slack event bodies must be JSON' };
    }
    if (body.type === 'url_verification') {
      if (typeof body.challenge !== 'string')
        return { kind: 'refused', refusal: 'bad-body', error: 'url_verification needs a challenge' };
      return { kind: 'accepted', messages: [], response: { challenge: body.challenge } };
    }
    const message = body.type === 'event_callback' ? await this.toInbound(instance, body) : null;
    return { kind: 'accepted', messages: message ? [message] : [] };
  }

  /** Why the request's `v0` signature does not hold, or null. */
  private signatureProblem(instance: ChannelInstanceRecord, raw: Buffer, headers: Headers): string | null {
    const secret = instance.config.signingSecret;
    const signature = headers['x-slack-signature'];
    const stamp = headers['x-slack-request-timestamp'];
    if (typeof secret !== 'string' || secret === '' || typeof signature !== 'string' || typeof stamp !== 'string')
      return 'Invalid Slack request signature';
    const seconds = Number(stamp);
    if (!/^\d+$/.test(stamp) || Math.abs(this.now() / 1000 - seconds) > SLACK_MAX_SKEW_S)
      return 'Slack request timestamp is too old';
    const expected = `v0=${createHmac('sha256', secret)
      .update(Buffer.concat([Buffer.from(`v0:${stamp}:`), raw]))
      .digest('hex')}`;
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected)))
      return 'Invalid Slack request signature';
    return null;
  }

  override async connect(instance: ChannelInstanceRecord, sink: ConnectionSink): Promise<ChannelConnection> {
    const me = await this.call(instance, 'auth.test', {}, botToken(instance), sink.signal);
    if (typeof me.user_id === 'string') knownBots.set(instance.id, me.user_id);
    if (instance.config.mode !== 'socket') {
      await sink.state('online', null);
      return { stop: async () => undefined };
    }
    const loop = this.holdSocket(instance, sink);
    return {
      stop: async () => {
        await loop.catch(() => undefined);
      },
    };
  }

  /** Socket Mode: open, serve until Slack says `disconnect` (or the socket drops), open again. */
  private async holdSocket(instance: ChannelInstanceRecord, sink: ConnectionSink): Promise<void> {
    let failures = 0;
    while (!sink.signal.aborted) {
      try {
        const opened = await this.call(
          instance,
          'apps.connections.open',
          {},
          String(instance.config.appToken),
          sink.signal,
        );
        if (typeof opened.url !== 'string') throw new ChannelError('Slack apps.connections.open: no url');
        const greeted = await this.socketSession(instance, opened.url, sink);
        if (greeted) failures = 0;
        else throw new ChannelError('Slack Socket Mode: the connection closed before hello');
      } catch (err) {
        if (sink.signal.aborted) return;
        const reason = err instanceof Error ? err.message : String(err);
        await sink.state('offline', reason);
        // The app token refused: offline with Slack's reason, and no retry until changed.
        if (err instanceof ChannelError && err.permanent) return;
        await this.sleep(SOCKET_BACKOFF_MS[Math.min(failures, SOCKET_BACKOFF_MS.length - 1)]!, sink.signal).catch(
          () => undefined,
        );
        failures += 1;
      }
    }
  }

  /** One WebSocket connection; resolves when it ends (true when Slack had said hello). */
  private async socketSession(instance: ChannelInstanceRecord, url: string, sink: ConnectionSink): Promise<boolean> {
    const problem = await this.http.problem(url.replace(/^ws(s?):/i, 'http$1:'));
    if (problem !== null) throw new ChannelError(problem, true);
    const socket = new WebSocket(url, { handshakeTimeout: 15_000, maxPayload: 8 * 1024 * 1024 });
    let greeted = false;
    return await new Promise<boolean>((resolve, reject) => {
      const abort = () => socket.terminate();
      sink.signal.addEventListener('abort', abort, { once: true });
      const done = (err?: Error) => {
        sink.signal.removeEventListener('abort', abort);
        if (err && !greeted) reject(new ChannelError(`Slack Socket Mode: ${err.message}`));
        else resolve(greeted);
      };
      socket.on('error', (err) => done(err));
      socket.on('close', () => done());
      socket.on('message', (data) => {
        let envelope: SocketEnvelope;
        try {
          envelope = JSON.parse(String(data)) as SocketEnvelope;
        } catch {
          return;
        }
        if (envelope.type === 'hello') {
          greeted = true;
          void sink.state('online', null);
        } else if (envelope.type === 'disconnect') {
          // Slack is about to close this connection (refresh, warning, link disabled): open another.
          socket.close();
        } else if (typeof envelope.envelope_id === 'string') {
          const id = envelope.envelope_id;
          void (async () => {
            const payload = envelope.type === 'events_api' ? envelope.payload : undefined;
            const message = payload?.type === 'event_callback' ? await this.toInbound(instance, payload) : null;
            // Acknowledged once the message is claimed and queued: a failure here lets Slack retry.
            if (message) await sink.receive(message);
            if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ envelope_id: id }));
          })().catch(() => undefined);
        }
      });
    });
  }

  override async send(instance: ChannelInstanceRecord, target: OutboundTarget, text: string): Promise<void> {
    await this.call(
      instance,
      'chat.postMessage',
      { channel: target.chatId, text: escapeText(text), ...threadParam(target) },
      botToken(instance),
    );
  }

  /**
   * One Web API method, form-encoded with the token as a Bearer header. Slack answers 200 with
   * `{ok: false, error}` for refusals; an authentication error is a permanent ChannelError.
   */
  private async call(
    instance: ChannelInstanceRecord,
    method: string,
    params: Record<string, string>,
    token: string,
    signal?: AbortSignal,
    timeoutMs?: number,
  ): Promise<SlackAnswer> {
    const res = await this.http.fetch(`${apiRoot(instance)}/${method}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Bearer ${token}` },
      body: new URLSearchParams(params).toString(),
      ...(signal ? { signal } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
    });
    let answer: SlackAnswer;
    try {
      answer = (await res.json()) as SlackAnswer;
    } catch {
      throw new ChannelError(`Slack ${method} answered ${res.status}`);
    }
    if (res.status === 429) throw new ChannelError(`Slack ${method}: ratelimited`);
    if (answer.ok === true) return answer;
    const error = typeof answer.error === 'string' ? answer.error : `answered ${res.status}`;
    throw new ChannelError(`Slack ${method}: ${error}`, AUTH_ERRORS.has(error));
  }

  /** A person's `message` or `app_mention` event as an inbound message; anything else null. */
  private async toInbound(instance: ChannelInstanceRecord, body: SlackEventCallback): Promise<InboundMessage | null> {
    const e = body.event;
    if (!e || (e.type !== 'message' && e.type !== 'app_mention')) return null;
    if (!PERSON_SUBTYPES.has(e.subtype) || e.bot_id || !e.user || !e.channel || !e.ts) return null;
    const bot = body.authorizations?.find((a) => a.is_bot !== false)?.user_id ?? knownBots.get(instance.id) ?? null;
    if (bot !== null && e.user === bot) return null;
    const direct = e.type === 'message' && (e.channel_type === 'im' || (!e.channel_type && e.channel.startsWith('D')));
    const raw = e.text ?? '';
    const mention = bot !== null ? new RegExp(`<@${bot}(\\|[^>]*)?>`, 'g') : null;
    const mentioned = direct || e.type === 'app_mention' || (mention !== null && mention.test(raw));
    // In a channel only a mention of the bot counts; the twin `message` event of an
    // `app_mention` carries the same channel and ts, so whichever comes first is the one turn.
    if (!mentioned) return null;
    const text = decodeEntities(mention ? raw.replace(mention, ' ') : raw)
      .replace(/[ \t]{2,}/g, ' ')
      .trim();
    const name = await this.lookup(instance, 'users.info', { user: e.user }, (a) => {
      const u = a.user as { name?: string; real_name?: string; profile?: { display_name?: string } } | undefined;
      return u?.profile?.display_name || u?.real_name || u?.name || null;
    });
    const chatName = direct
      ? null
      : await this.lookup(instance, 'conversations.info', { channel: e.channel }, (a) => {
          const c = a.channel as { name?: string } | undefined;
          return c?.name ? `#${c.name}` : null;
        });
    const inThread = e.thread_ts && e.thread_ts !== e.ts ? `:${e.thread_ts}` : '';
    return {
      messageId: `${e.channel}:${e.ts}${inThread}`,
      chatId: e.channel,
      chatType: direct ? 'direct' : 'group',
      ...(chatName ? { chatName } : {}),
      from: { id: e.user, ...(name ? { name } : {}) },
      text,
      mentioned: true,
    };
  }

  /** A name from a read method, cached; null when Slack does not say (a missing scope, say). */
  private async lookup(
    instance: ChannelInstanceRecord,
    method: string,
    params: Record<string, string>,
    pick: (answer: SlackAnswer) => string | null,
  ): Promise<string | null> {
    const key = `${instance.id}:${method}:${Object.values(params).join(':')}`;
    if (this.names.has(key)) return this.names.get(key)!;
    const name = await this.call(instance, method, params, botToken(instance), undefined, LOOKUP_TIMEOUT_MS).then(
      pick,
      () => undefined,
    );
    if (name === undefined) return null;
    if (this.names.size > 10_000) this.names.clear();
    this.names.set(key, name);
    return name;
  }
}

/** The bots' user ids learnt by auth.test in this process (mentions, when an event lacks `authorizations`). */
const knownBots = new Map<string, string>();

function botToken(instance: ChannelInstanceRecord): string {
  return String(instance.config.botToken ?? '');
}

function apiRoot(instance: ChannelInstanceRecord): string {
  const root =
    typeof instance.config.apiRoot === 'string' && instance.config.apiRoot !== ''
      ? instance.config.apiRoot
      : SLACK_API_ROOT;
  return root.replace(/\/+$/, '');
}

/**
 * `thread_ts` of a reply: in a channel the answer goes into the message's thread (the thread it
 * was written in, or a new one under it); in a direct chat only a message written in a thread
 * is answered there. A push of the digital human's own (no `replyTo`) is a top-level message.
 */
function threadParam(target: OutboundTarget): { thread_ts?: string } {
  if (!target.replyTo) return {};
  const [, ts, threadTs] = target.replyTo.split(':');
  if (threadTs) return { thread_ts: threadTs };
  return target.chatType === 'group' && ts ? { thread_ts: ts } : {};
}

/** Slack escapes `&`, `<` and `>` in message text ("Formatting text for app surfaces"). */
function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function decodeEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
