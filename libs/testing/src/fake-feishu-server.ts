import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback server speaking Feishu's (Lark's) Open Platform protocols, for tests of the Feishu
 * channel. Shapes are those of Feishu's public documentation (open.feishu.cn):
 * - `POST /open-apis/auth/v3/tenant_access_token/internal` `{app_id, app_secret}` →
 *   `{code: 0, msg: "ok", tenant_access_token, expire}`; a wrong secret `{code: 10014, msg:
 *   "app secret invalid"}` (server-docs/authentication-management/access-token/tenant_access_token_internal).
 * - `GET /open-apis/bot/v3/info` → `{code: 0, msg: "ok", bot: {activate_status, app_name,
 *   avatar_url, ip_white_list, open_id}}` (server-docs/application-v6/bot/get… "Obtain bot info").
 * - `GET /open-apis/contact/v3/users/:user_id?user_id_type=open_id` → `{code: 0, data: {user:
 *   {open_id, union_id, name, en_name, …}}}` (server-docs/contact-v3/user/get) and
 *   `GET /open-apis/im/v1/chats/:chat_id` → `{code: 0, data: {name, chat_mode, …}}`
 *   (server-docs/group/chat/get); without the scope Feishu answers a non-zero code.
 * - `POST /open-apis/im/v1/messages/:message_id/reply` `{content, msg_type}` and
 *   `POST /open-apis/im/v1/messages?receive_id_type=chat_id` `{receive_id, msg_type, content}` →
 *   `{code: 0, msg: "success", data: {message_id, chat_id, msg_type, body: {content}, …}}`
 *   (server-docs/im-v1/message/reply, /create). A missing or unknown token:
 *   `{code: 99991663, msg: "Invalid access token for authorization…"}` with status 400.
 * - Event callbacks (server-docs/event-subscription-guide/event-subscription-configure-/
 *   request-url-configuration-case): `deliver()` POSTs a schema 2.0 event (`{schema: "2.0",
 *   header: {event_id, token, create_time, event_type, tenant_key, app_id}, event}`), or, with
 *   an Encrypt Key, `{encrypt}` (AES-256-CBC, key SHA-256 of the Encrypt Key, a random IV before
 *   the ciphertext, base64) with `X-Lark-Request-Timestamp`, `X-Lark-Request-Nonce` and
 *   `X-Lark-Signature: sha256hex(timestamp + nonce + encryptKey + body)`.
 *   `im.message.receive_v1` (server-docs/im-v1/message/events/receive): `event.sender
 *   {sender_id {union_id, user_id, open_id}, sender_type: "user", tenant_key}`, `event.message
 *   {message_id, root_id, parent_id, create_time, chat_id, chat_type: "p2p"|"group",
 *   message_type: "text", content: "{\"text\":\"@_user_1 hi\"}", mentions: [{key, id, name, tenant_key}]}`.
 */

export interface FeishuSent {
  /** `reply` (to `replyTo`) or `send` (a new message in `chatId`). */
  kind: 'reply' | 'send';
  replyTo?: string;
  chatId?: string;
  text: string;
  messageId: string;
}

export interface FeishuMessageOptions {
  chatId: string;
  chatType: 'p2p' | 'group';
  /** The sender's open_id. */
  from: string;
  text: string;
  /** People mentioned: `{key: "@_user_N", openId, name}`; `bot: true` adds the bot first as @_user_1. */
  mentionBot?: boolean;
  messageId?: string;
}

export type FeishuEvent = Record<string, unknown> & { header: Record<string, string> & { event_id: string } };

export class FakeFeishuServer {
  readonly bot = { openId: 'ou_bot0000000000000000000000000001', name: 'Chatty' };
  readonly tenantKey = '2ca1d211f64f6438';
  readonly sent: FeishuSent[] = [];
  readonly calls = new Map<string, number>();
  /** The reply and send endpoints answer this many 503s first (Feishu down). */
  failSends = 0;
  /** Names `GET /contact/v3/users/:open_id` answers (others: no authority, as without the scope). */
  readonly users = new Map<string, string>();
  /** Group names `GET /im/v1/chats/:chat_id` answers. */
  readonly chatNames = new Map<string, string>();
  /** Messages made by message(), by id → chat (so a reply is filed under its chat). */
  readonly chats = new Map<string, string>();
  /** Tokens handed out; `revokeTokens()` makes them invalid (code 99991663). */
  private readonly tokens = new Set<string>();
  private nextId = 1;

  private constructor(
    private readonly server: http.Server,
    readonly appId: string,
    readonly appSecret: string,
  ) {}

  static async start(appId: string, appSecret: string): Promise<FakeFeishuServer> {
    const server = http.createServer();
    const self = new FakeFeishuServer(server, appId, appSecret);
    server.on('request', (req, res) => void self.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  /** The Open Platform base URL to configure, as `https://open.feishu.cn` is the real one. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  count(call: string): number {
    return this.calls.get(call) ?? 0;
  }

  sentTo(chatId: string): FeishuSent[] {
    return this.sent.filter((s) => s.chatId === chatId);
  }

  /** Every token handed out so far becomes invalid (as when Feishu rotates it early). */
  revokeTokens(): void {
    this.tokens.clear();
  }

  /** A schema 2.0 `im.message.receive_v1` event. */
  message(o: FeishuMessageOptions, verificationToken: string): FeishuEvent {
    const n = this.nextId++;
    const mentions = o.mentionBot
      ? [
          {
            key: '@_user_1',
            id: { open_id: this.bot.openId, union_id: 'on_bot000001' },
            name: this.bot.name,
            tenant_key: this.tenantKey,
          },
        ]
      : [];
    const text = o.mentionBot ? `@_user_1 ${o.text}` : o.text;
    const messageId = o.messageId ?? `om_${String(n).padStart(30, '0')}`;
    this.chats.set(messageId, o.chatId);
    return {
      schema: '2.0',
      header: {
        event_id: `5e3702a84e847582be8db7fb73283c${String(n).padStart(2, '0')}`,
        token: verificationToken,
        create_time: String(Date.now()),
        event_type: 'im.message.receive_v1',
        tenant_key: this.tenantKey,
        app_id: this.appId,
      },
      event: {
        sender: {
          sender_id: { union_id: `on_${o.from.slice(3)}`, user_id: `u${o.from.slice(-6)}`, open_id: o.from },
          sender_type: 'user',
          tenant_key: this.tenantKey,
        },
        message: {
          message_id: messageId,
          root_id: '',
          parent_id: '',
          create_time: String(Date.now()),
          update_time: String(Date.now()),
          chat_id: o.chatId,
          thread_id: '',
          chat_type: o.chatType,
          message_type: 'text',
          content: JSON.stringify({ text }),
          mentions,
          user_agent: 'Mozilla/5.0 (fake-feishu)',
        },
      },
    };
  }

  /** The URL check (schema 1.0 shape). */
  challenge(verificationToken: string, challenge = 'ajls384kdjx98XX'): Record<string, unknown> {
    return { challenge, token: verificationToken, type: 'url_verification' };
  }

  /**
   * POSTs an event to the request URL as Feishu does: plain JSON, or with `encryptKey` the
   * `{encrypt}` envelope, signed (`signature` overrides the header; `unsigned` leaves them out).
   */
  async deliver(
    url: string,
    body: unknown,
    options: { encryptKey?: string; signature?: string; unsigned?: boolean } = {},
  ): Promise<{ status: number; body: unknown }> {
    const raw = options.encryptKey
      ? JSON.stringify({ encrypt: encryptEvent(options.encryptKey, JSON.stringify(body)) })
      : JSON.stringify(body);
    const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' };
    if (options.encryptKey && !options.unsigned) {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const nonce = randomBytes(8).toString('hex');
      headers['X-Lark-Request-Timestamp'] = timestamp;
      headers['X-Lark-Request-Nonce'] = nonce;
      headers['X-Lark-Signature'] =
        options.signature ??
        createHash('sha256')
          .update(timestamp + nonce + options.encryptKey + raw)
          .digest('hex');
    }
    const res = await fetch(url, { method: 'POST', headers, body: raw });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Plain text.
    }
    return { status: res.status, body: parsed };
  }

  async until(predicate: () => boolean, timeoutMs = 20_000, what = 'messages'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(this.sent)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    let body: Record<string, unknown> = {};
    if (raw !== '') {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return answer(400, { code: 9499, msg: 'Bad Request' });
      }
    }
    const path = url.pathname;
    if (path === '/open-apis/auth/v3/tenant_access_token/internal' && req.method === 'POST') {
      this.count1('token');
      if (body.app_id !== this.appId) return answer(400, { code: 10003, msg: 'invalid param' });
      if (body.app_secret !== this.appSecret) return answer(400, { code: 10014, msg: 'app secret invalid' });
      const token = `t-g1044ofake${randomBytes(12).toString('hex')}`;
      this.tokens.add(token);
      return answer(200, { code: 0, msg: 'ok', tenant_access_token: token, expire: 7200 });
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token)
      return answer(400, {
        code: 99991661,
        msg: 'Missing access token for authorization. Please make a request with token attached.',
      });
    if (!this.tokens.has(token))
      return answer(400, {
        code: 99991663,
        msg: 'Invalid access token for authorization. Please make a request with token attached.',
      });
    if (path === '/open-apis/bot/v3/info' && req.method === 'GET') {
      this.count1('bot');
      return answer(200, {
        code: 0,
        msg: 'ok',
        bot: {
          activate_status: 2,
          app_name: this.bot.name,
          avatar_url: 'https://s1-imfile.feishucdn.com/static-resource/v1/fake',
          ip_white_list: [],
          open_id: this.bot.openId,
        },
      });
    }
    const user = /^\/open-apis\/contact\/v3\/users\/([^/]+)$/.exec(path);
    if (user && req.method === 'GET') {
      this.count1('user');
      const openId = decodeURIComponent(user[1]!);
      const name = this.users.get(openId);
      if (url.searchParams.get('user_id_type') !== 'open_id' || name === undefined)
        return answer(400, { code: 41050, msg: 'no user authority error' });
      return answer(200, {
        code: 0,
        msg: 'success',
        data: { user: { open_id: openId, union_id: `on_${openId.slice(3)}`, name, en_name: name } },
      });
    }
    const chat = /^\/open-apis\/im\/v1\/chats\/([^/]+)$/.exec(path);
    if (chat && req.method === 'GET') {
      this.count1('chat');
      const name = this.chatNames.get(decodeURIComponent(chat[1]!));
      if (name === undefined) return answer(400, { code: 232011, msg: 'Operator can NOT be out of the chat.' });
      return answer(200, {
        code: 0,
        msg: 'success',
        data: { name, chat_mode: 'group', chat_type: 'private', owner_id_type: 'open_id', tenant_key: this.tenantKey },
      });
    }
    const reply = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reply$/.exec(path);
    const create = path === '/open-apis/im/v1/messages';
    if ((reply || create) && req.method === 'POST') {
      this.count1(reply ? 'reply' : 'send');
      if (this.failSends > 0) {
        this.failSends -= 1;
        res.writeHead(503, { 'Content-Type': 'text/plain' });
        res.end('Service Unavailable');
        return;
      }
      if (body.msg_type !== 'text' || typeof body.content !== 'string')
        return answer(400, { code: 230001, msg: 'Your request contains an invalid request parameter.' });
      let text: unknown;
      try {
        text = (JSON.parse(body.content) as { text?: unknown }).text;
      } catch {
        text = undefined;
      }
      if (typeof text !== 'string' || text === '')
        return answer(400, { code: 230001, msg: 'Your request contains an invalid request parameter.' });
      if (Buffer.byteLength(raw) > 150 * 1024)
        return answer(400, { code: 230025, msg: 'The length of the message content reaches its limit.' });
      if (create && (url.searchParams.get('receive_id_type') !== 'chat_id' || typeof body.receive_id !== 'string'))
        return answer(400, { code: 230001, msg: 'Your request contains an invalid request parameter.' });
      const messageId = `om_sent${String(this.nextId++).padStart(26, '0')}`;
      const chatId = create ? (body.receive_id as string) : this.chatOf(decodeURIComponent(reply![1]!));
      this.sent.push({
        kind: reply ? 'reply' : 'send',
        ...(reply ? { replyTo: decodeURIComponent(reply[1]!) } : {}),
        ...(chatId ? { chatId } : {}),
        text,
        messageId,
      });
      return answer(200, {
        code: 0,
        msg: 'success',
        data: {
          message_id: messageId,
          root_id: reply ? decodeURIComponent(reply[1]!) : '',
          parent_id: reply ? decodeURIComponent(reply[1]!) : '',
          msg_type: 'text',
          create_time: String(Date.now()),
          update_time: String(Date.now()),
          deleted: false,
          updated: false,
          chat_id: chatId ?? '',
          sender: { id: this.appId, id_type: 'app_id', sender_type: 'app', tenant_key: this.tenantKey },
          body: { content: body.content },
        },
      });
    }
    return answer(404, { code: 404, msg: 'page not found' });
  }

  private chatOf(messageId: string): string | undefined {
    return this.chats.get(messageId);
  }

  private count1(call: string): void {
    this.calls.set(call, this.count(call) + 1);
  }
}

/** Feishu's `encrypt`: base64(IV ‖ AES-256-CBC(SHA-256(key), IV, json)). */
export function encryptEvent(key: string, json: string): string {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', createHash('sha256').update(key).digest(), iv);
  return Buffer.concat([iv, cipher.update(json, 'utf8'), cipher.final()]).toString('base64');
}
