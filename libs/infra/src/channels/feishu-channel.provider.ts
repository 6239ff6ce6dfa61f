import { createDecipheriv, createHash, timingSafeEqual } from 'node:crypto';
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

type Headers = Record<string, string | string[] | undefined>;

/** Feishu (China); Lark (international) is `https://open.larksuite.com`. */
export const FEISHU_BASE_URL = 'https://open.feishu.cn';
/**
 * The longest reply part. A text message's request body may be up to 150 KB ("Send message",
 * open.feishu.cn/document/server-docs/im-v1/message/create); 10,000 characters stay far below
 * it even when every character takes 3 bytes and is escaped twice (the content is JSON in JSON).
 */
export const FEISHU_MAX_MESSAGE = 10_000;
/** The token is renewed this long before Feishu's `expire` says it ends. */
const TOKEN_MARGIN_MS = 5 * 60_000;
/** Answers that mean the tenant_access_token is stale or missing: fetch a fresh one and retry once. */
const TOKEN_INVALID_CODES = new Set([99991663, 99991661, 99991668]);
/** Codes that may pass: rate limited, internal error (retried with back-off by the caller). */
const PASSING_CODES = new Set([99991400, 99991401, 1000004, 1000005]);
/** A name lookup (bot info, user and group names) never holds a delivery longer than this. */
const LOOKUP_TIMEOUT_MS = 2_000;

/**
 * The shapes this adapter reads, from Feishu's public documentation: the event subscription's
 * request (open.feishu.cn/document/server-docs/event-subscription-guide/event-subscription-configure-/
 * request-url-configuration-case: `url_verification`, the Encrypt Key's AES-256-CBC `encrypt`
 * envelope, the `X-Lark-Signature` header) and event schema 2.0's `im.message.receive_v1`
 * (open.feishu.cn/document/server-docs/im-v1/message/events/receive).
 */
interface FeishuUserId {
  open_id?: string;
  union_id?: string;
  user_id?: string;
}
interface FeishuMention {
  key: string;
  id?: FeishuUserId;
  name?: string;
}
interface FeishuMessage {
  message_id?: string;
  root_id?: string;
  parent_id?: string;
  chat_id?: string;
  chat_type?: 'p2p' | 'group' | string;
  message_type?: string;
  content?: string;
  mentions?: FeishuMention[];
}
interface FeishuCallback {
  /** Schema 1.0 and url_verification. */
  type?: string;
  token?: string;
  challenge?: string;
  encrypt?: string;
  schema?: string;
  header?: { event_id?: string; event_type?: string; token?: string; app_id?: string; tenant_key?: string };
  event?: {
    sender?: { sender_id?: FeishuUserId; sender_type?: string };
    message?: FeishuMessage;
  };
}
type FeishuAnswer = { code?: number; msg?: string } & Record<string, unknown>;

/**
 * Feishu / Lark (docs/channels.md, "Feishu / Lark"), by event callbacks over plain fetch: every
 * call must pass the channels' address policy (SVC_CHANNEL_ALLOW, ChannelFetch), which the
 * official SDK's own HTTP client would bypass, and the few calls used (tenant_access_token,
 * bot info, message reply and create) are plain JSON posts.
 * - Inbound: Feishu POSTs each event to `/hooks/channels/<instanceId>`; any replica receives.
 *   The verification token must match; with an Encrypt Key the body is `{encrypt}` (AES-256-CBC)
 *   and `X-Lark-Signature` is checked.
 * - The lease holder only checks the app's credentials (tenant_access_token, bot info) and sets
 *   the state. Replies leave from any replica. The long connection (WebSocket) is not offered.
 */
export class FeishuChannelProvider extends ChannelProvider {
  readonly type = 'feishu';
  readonly displayName = 'Feishu / Lark';
  readonly description =
    'A Feishu or Lark custom app with a bot: direct chats and groups where it is @mentioned, by event callbacks.';
  readonly configFields: readonly ChannelConfigField[] = [
    {
      key: 'appId',
      label: 'App ID',
      type: 'string',
      required: true,
      description: 'cli_…, from Credentials & Basic Info',
    },
    {
      key: 'appSecret',
      label: 'App Secret',
      type: 'secret',
      required: true,
      description: 'From Credentials & Basic Info',
    },
    {
      key: 'verificationToken',
      label: 'Verification Token',
      type: 'secret',
      required: true,
      description: 'Events & Callbacks → Encryption Strategy',
    },
    {
      key: 'encryptKey',
      label: 'Encrypt Key',
      type: 'secret',
      required: false,
      description: 'Events & Callbacks → Encryption Strategy (optional; then events are encrypted and signed)',
    },
    {
      key: 'baseUrl',
      label: 'Open Platform URL',
      type: 'url',
      required: false,
      description: 'https://open.feishu.cn (default) or https://open.larksuite.com for Lark',
    },
  ];
  readonly defaultConfig = {};
  readonly maxMessageLength = FEISHU_MAX_MESSAGE;

  /** tenant_access_token per instance and credentials, until shortly before it expires. */
  private readonly tokens = new Map<string, { token: string; until: number }>();
  /** The bot's open_id per instance and credentials (to tell its @mention from others). */
  private readonly bots = new Map<string, string | null>();
  /** User and group names per instance and id. */
  private readonly names = new Map<string, string | null>();

  constructor(
    private readonly http: ChannelFetch,
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  override configProblem(config: Record<string, unknown>): string | null {
    if (typeof config.appId !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(config.appId))
      return "config.appId must be the app's App ID (cli_…)";
    if (typeof config.appSecret !== 'string' || config.appSecret === '') return 'config.appSecret is required';
    if (typeof config.verificationToken !== 'string' || config.verificationToken === '')
      return 'config.verificationToken is required';
    if (config.encryptKey !== undefined && config.encryptKey !== '' && typeof config.encryptKey !== 'string')
      return 'config.encryptKey must be a string';
    if (
      config.baseUrl !== undefined &&
      (typeof config.baseUrl !== 'string' || !/^https?:\/\/[^/\s]+/.test(config.baseUrl))
    )
      return 'config.baseUrl must be an http(s) URL';
    return null;
  }

  /** An event callback (or the `url_verification` handshake). */
  override async parseWebhook(instance: ChannelInstanceRecord, raw: Buffer, headers: Headers): Promise<WebhookParse> {
    let body: FeishuCallback;
    try {
      body = JSON.parse(raw.toString('utf8')) as FeishuCallback;
    } catch {
      return { kind: 'refused', refusal: 'bad-body', error: 'Feishu event bodies must be JSON' };
    }
    if (typeof body !== 'object' || body === null)
      return { kind: 'refused', refusal: 'bad-body', error: 'Feishu event bodies must be JSON objects' };
    const key = encryptKey(instance);
    if (key !== null) {
      const signed = signatureProblem(key, raw, headers);
      if (signed !== null && signed !== MISSING_SIGNATURE)
        return { kind: 'refused', refusal: 'bad-signature', error: signed };
      const plain = isEnvelope(body) ? decryptEvent(key, body.encrypt!) : null;
      // Feishu signs event deliveries; the URL check proves the key by its encryption instead.
      if (signed !== null && plain?.type !== 'url_verification')
        return { kind: 'refused', refusal: 'bad-signature', error: signed };
      if (plain === null)
        return {
          kind: 'refused',
          refusal: 'bad-signature',
          error: 'Feishu event cannot be decrypted with the Encrypt Key',
        };
      body = plain;
    } else if (typeof body.encrypt === 'string') {
      return {
        kind: 'refused',
        refusal: 'bad-signature',
        error: 'Feishu event is encrypted but the instance has no Encrypt Key',
      };
    }
    const token = body.header?.token ?? body.token;
    if (!sameSecret(token, instance.config.verificationToken))
      return { kind: 'refused', refusal: 'bad-signature', error: 'Invalid Feishu verification token' };
    if (body.type === 'url_verification') {
      if (typeof body.challenge !== 'string')
        return { kind: 'refused', refusal: 'bad-body', error: 'url_verification needs a challenge' };
      return { kind: 'accepted', messages: [], response: { challenge: body.challenge } };
    }
    const message = body.header?.event_type === 'im.message.receive_v1' ? await this.toInbound(instance, body) : null;
    return { kind: 'accepted', messages: message ? [message] : [] };
  }

  /** Checks the credentials (a token and the bot's identity); events arrive by callbacks. */
  override async connect(instance: ChannelInstanceRecord, sink: ConnectionSink): Promise<ChannelConnection> {
    this.tokens.delete(credentialsKey(instance));
    await this.tenantToken(instance, sink.signal);
    await this.botOpenId(instance, sink.signal);
    await sink.state('online', null);
    return { stop: async () => undefined };
  }

  /**
   * A reply to the message it answers (`POST /im/v1/messages/:message_id/reply`), or, for a push
   * of the digital human's own, a new message in the chat (`?receive_id_type=chat_id`).
   */
  override async send(instance: ChannelInstanceRecord, target: OutboundTarget, text: string): Promise<void> {
    const content = JSON.stringify({ text });
    if (target.replyTo)
      await this.api(instance, `/open-apis/im/v1/messages/${encodeURIComponent(target.replyTo)}/reply`, {
        msg_type: 'text',
        content,
      });
    else
      await this.api(instance, '/open-apis/im/v1/messages?receive_id_type=chat_id', {
        receive_id: target.chatId,
        msg_type: 'text',
        content,
      });
  }

  /** One Open API call with the tenant token; a stale token is renewed once. */
  private async api(
    instance: ChannelInstanceRecord,
    path: string,
    body: Record<string, unknown> | null,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<FeishuAnswer> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.tenantToken(instance, options.signal);
      const { status, answer } = await this.request(instance, path, body, token, options);
      if (answer?.code === 0) return answer;
      const code = answer?.code;
      if (typeof code === 'number' && TOKEN_INVALID_CODES.has(code) && attempt === 0) {
        this.tokens.delete(credentialsKey(instance));
        continue;
      }
      throw new ChannelError(`Feishu ${apiName(path)}: ${reasonOf(status, answer)}`);
    }
  }

  /** The app's tenant_access_token (cached); credentials Feishu refuses are a permanent ChannelError. */
  private async tenantToken(instance: ChannelInstanceRecord, signal?: AbortSignal): Promise<string> {
    const key = credentialsKey(instance);
    const cached = this.tokens.get(key);
    if (cached && cached.until > this.now()) return cached.token;
    const { status, answer } = await this.request(
      instance,
      '/open-apis/auth/v3/tenant_access_token/internal',
      { app_id: String(instance.config.appId ?? ''), app_secret: String(instance.config.appSecret ?? '') },
      null,
      signal ? { signal } : {},
    );
    if (answer?.code === 0 && typeof answer.tenant_access_token === 'string') {
      const expire = typeof answer.expire === 'number' ? answer.expire : 7200;
      if (this.tokens.size > 1_000) this.tokens.clear();
      this.tokens.set(key, {
        token: answer.tenant_access_token,
        until: this.now() + Math.max(expire * 1000 - TOKEN_MARGIN_MS, 30_000),
      });
      return answer.tenant_access_token;
    }
    // An answer with a code (not a server error, not a rate limit) is Feishu refusing the app.
    const refused = typeof answer?.code === 'number' && status < 500 && !PASSING_CODES.has(answer.code);
    throw new ChannelError(`Feishu tenant_access_token: ${reasonOf(status, answer)}`, refused);
  }

  /** The bot's open_id (`GET /bot/v3/info`), cached; null when Feishu does not say. */
  private async botOpenId(instance: ChannelInstanceRecord, signal?: AbortSignal): Promise<string | null> {
    const key = credentialsKey(instance);
    if (this.bots.has(key)) return this.bots.get(key)!;
    const strict = signal !== undefined;
    let id: string | null;
    try {
      const answer = await this.api(instance, '/open-apis/bot/v3/info', null, {
        ...(signal ? { signal } : {}),
        ...(strict ? {} : { timeoutMs: LOOKUP_TIMEOUT_MS }),
      });
      const bot = answer.bot as { open_id?: string } | undefined;
      id = typeof bot?.open_id === 'string' ? bot.open_id : null;
    } catch (err) {
      // On connect a refusal is the instance's state; on a delivery the mention rule falls back.
      if (strict) throw err;
      return null;
    }
    if (this.bots.size > 1_000) this.bots.clear();
    this.bots.set(key, id);
    return id;
  }

  /**
   * A name from a read call (a user's, a group's), cached; null when Feishu does not say (the app
   * lacks `contact:user.base:readonly` or `im:chat:readonly`, say), and then the id is shown.
   */
  private async lookup(
    instance: ChannelInstanceRecord,
    path: string,
    pick: (answer: FeishuAnswer) => string | null,
  ): Promise<string | null> {
    const key = `${credentialsKey(instance)}:${path}`;
    if (this.names.has(key)) return this.names.get(key)!;
    const name = await this.api(instance, path, null, { timeoutMs: LOOKUP_TIMEOUT_MS }).then(pick, () => undefined);
    if (name === undefined) return null;
    if (this.names.size > 10_000) this.names.clear();
    this.names.set(key, name);
    return name;
  }

  private async request(
    instance: ChannelInstanceRecord,
    path: string,
    body: Record<string, unknown> | null,
    token: string | null,
    options: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<{ status: number; answer: FeishuAnswer | null }> {
    const res = await this.http.fetch(`${baseUrl(instance)}${path}`, {
      method: body === null ? 'GET' : 'POST',
      headers: {
        ...(body === null ? {} : { 'Content-Type': 'application/json; charset=utf-8' }),
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      ...(body === null ? {} : { body: JSON.stringify(body) }),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    });
    let answer: FeishuAnswer | null = null;
    try {
      const parsed = (await res.json()) as unknown;
      if (typeof parsed === 'object' && parsed !== null) answer = parsed as FeishuAnswer;
    } catch {
      // Not JSON (a proxy's error page): the status says it.
    }
    return { status: res.status, answer };
  }

  /** A person's `im.message.receive_v1` as an inbound message; anything else null. */
  private async toInbound(instance: ChannelInstanceRecord, body: FeishuCallback): Promise<InboundMessage | null> {
    const sender = body.event?.sender;
    const m = body.event?.message;
    if (!m || !sender || sender.sender_type !== 'user') return null;
    const from = sender.sender_id?.open_id;
    if (!isId(from) || !isId(m.message_id) || !isId(m.chat_id)) return null;
    const raw = messageText(m.message_type, m.content);
    if (raw === null) return null;
    const direct = m.chat_type === 'p2p';
    const mentions = (Array.isArray(m.mentions) ? m.mentions : []).filter(
      (x): x is FeishuMention => typeof x?.key === 'string' && x.key !== '',
    );
    let mentioned = direct;
    let text = raw;
    if (mentions.length > 0) {
      const bot = direct ? null : await this.botOpenId(instance);
      for (const mention of mentions) {
        // Bots have no user_id; when the bot's open_id is unknown a mention of a bot stands for it.
        const isBot = bot !== null ? mention.id?.open_id === bot : !mention.id?.user_id;
        if (isBot) mentioned = true;
        text = text.split(mention.key).join(isBot ? ' ' : `@${mention.name ?? ''}`);
      }
    }
    if (!mentioned) return null;
    const name = await this.lookup(
      instance,
      `/open-apis/contact/v3/users/${encodeURIComponent(from)}?user_id_type=open_id`,
      (a) => {
        const user = (a.data as { user?: { name?: string; en_name?: string } } | undefined)?.user;
        return user?.name || user?.en_name || null;
      },
    );
    const chatName = direct
      ? null
      : await this.lookup(instance, `/open-apis/im/v1/chats/${encodeURIComponent(m.chat_id)}`, (a) => {
          const chat = a.data as { name?: string } | undefined;
          return chat?.name || null;
        });
    return {
      messageId: m.message_id,
      chatId: m.chat_id,
      chatType: direct ? 'direct' : 'group',
      ...(chatName ? { chatName } : {}),
      from: { id: from, ...(name ? { name } : {}) },
      text: text
        .split('\n')
        .map((line) => line.replace(/[ \t]{2,}/g, ' ').trim())
        .join('\n')
        .trim(),
      mentioned: true,
    };
  }
}

const MISSING_SIGNATURE = 'Invalid Feishu request signature (X-Lark-Signature missing)';

/** Why the request's `X-Lark-Signature` does not hold, or null. */
function signatureProblem(key: string, raw: Buffer, headers: Headers): string | null {
  const signature = headers['x-lark-signature'];
  const timestamp = headers['x-lark-request-timestamp'];
  const nonce = headers['x-lark-request-nonce'];
  if (typeof signature !== 'string' || typeof timestamp !== 'string' || typeof nonce !== 'string')
    return MISSING_SIGNATURE;
  const expected = createHash('sha256')
    .update(Buffer.concat([Buffer.from(timestamp + nonce + key, 'utf8'), raw]))
    .digest('hex');
  const given = Buffer.from(signature.toLowerCase());
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected)))
    return 'Invalid Feishu request signature';
  return null;
}

/** An encrypted delivery: `{encrypt}` alone. */
function isEnvelope(body: FeishuCallback): boolean {
  return typeof body.encrypt === 'string' && Object.keys(body).length === 1;
}

/**
 * `encrypt`: base64 of a 16-byte IV and the AES-256-CBC ciphertext (PKCS#7) of the event's
 * JSON, keyed with SHA-256 of the Encrypt Key. Null when it does not decrypt to a JSON object.
 */
export function decryptEvent(key: string, encrypted: string): FeishuCallback | null {
  try {
    const parsed = JSON.parse(decryptFeishu(key, encrypted)) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as FeishuCallback) : null;
  } catch {
    return null;
  }
}

/** Feishu's decryption ("Encrypt Key" in the event subscription guide); throws when it fails. */
export function decryptFeishu(key: string, encrypted: string): string {
  const data = Buffer.from(encrypted, 'base64');
  if (data.length < 32 || (data.length - 16) % 16 !== 0) throw new Error('not an AES-256-CBC payload');
  const decipher = createDecipheriv('aes-256-cbc', createHash('sha256').update(key).digest(), data.subarray(0, 16));
  return Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]).toString('utf8');
}

/** The text of a `text` message, or of a rich-text `post` (its title and text runs); else null. */
function messageText(type: string | undefined, content: string | undefined): string | null {
  if (typeof content !== 'string') return null;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(content) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (type === 'text') return typeof parsed.text === 'string' ? parsed.text : null;
  if (type === 'post') {
    // Received posts carry `{title, content: [[{tag, text}…]…]}` (or the same under a locale).
    const post = (Array.isArray(parsed.content) ? parsed : Object.values(parsed)[0]) as
      { title?: string; content?: Array<Array<{ tag?: string; text?: string; user_id?: string }>> } | undefined;
    if (!post || !Array.isArray(post.content)) return null;
    const lines = post.content.map((line) =>
      (Array.isArray(line) ? line : [])
        .map((run) => (run.tag === 'at' ? (run.user_id ?? '') : (run.text ?? '')))
        .join(''),
    );
    return [post.title ?? '', ...lines].filter((l) => l !== '').join('\n');
  }
  return null;
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value.length <= 256;
}

function encryptKey(instance: ChannelInstanceRecord): string | null {
  const key = instance.config.encryptKey;
  return typeof key === 'string' && key !== '' ? key : null;
}

function sameSecret(given: unknown, expected: unknown): boolean {
  if (typeof given !== 'string' || typeof expected !== 'string' || expected === '') return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function baseUrl(instance: ChannelInstanceRecord): string {
  const root =
    typeof instance.config.baseUrl === 'string' && instance.config.baseUrl !== ''
      ? instance.config.baseUrl
      : FEISHU_BASE_URL;
  return root.replace(/\/+$/, '');
}

/** Tokens and bot ids are kept per instance and credentials (a changed secret starts afresh). */
function credentialsKey(instance: ChannelInstanceRecord): string {
  return createHash('sha256')
    .update(
      `${instance.id}\0${baseUrl(instance)}\0${String(instance.config.appId)}\0${String(instance.config.appSecret)}`,
    )
    .digest('hex');
}

function apiName(path: string): string {
  if (path.includes('/reply')) return 'reply';
  if (path.startsWith('/open-apis/im/v1/messages')) return 'send';
  if (path.startsWith('/open-apis/bot/v3/info')) return 'bot info';
  return path;
}

/** `<code> <msg>` from Feishu, or the HTTP status. */
function reasonOf(status: number, answer: FeishuAnswer | null): string {
  if (answer && typeof answer.code === 'number')
    return `${answer.code} ${typeof answer.msg === 'string' ? answer.msg : ''}`.trim();
  return `answered ${status}`;
}
