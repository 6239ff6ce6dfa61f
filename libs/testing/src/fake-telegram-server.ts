import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback server speaking the Telegram Bot API's wire protocol, for tests of the Telegram
 * channel. Method names, parameters and object shapes (Update, Message, User, Chat, PhotoSize,
 * File, the `{ok, result}` / `{ok: false, error_code, description}` answers, `409 Conflict:
 * terminated by other getUpdates request`) are those of the public Bot API documentation
 * (https://core.telegram.org/bots/api). Served: `POST|GET /bot<token>/<method>` for getMe,
 * getUpdates (long polling), setWebhook, deleteWebhook, sendMessage (with an inline keyboard in
 * `reply_markup`), sendChatAction, getFile, answerCallbackQuery, editMessageText, and
 * `GET /file/bot<token>/<file_path>` for downloads. A press of an inline keyboard button is a
 * `callback_query` update (`press`). `allowed_updates` of getUpdates and setWebhook is honoured:
 * an update of a type not asked for is never delivered, as on Telegram.
 */

export interface TgUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
}

export interface TgChat {
  id: number;
  type: 'private' | 'group' | 'supergroup' | 'channel';
  title?: string;
  first_name?: string;
}

export interface TgMessage {
  message_id: number;
  from: TgUser;
  chat: TgChat;
  date: number;
  text?: string;
  caption?: string;
  entities?: Array<{ type: string; offset: number; length: number }>;
  photo?: Array<{ file_id: string; file_unique_id: string; width: number; height: number; file_size?: number }>;
}

export interface InlineKeyboardMarkup {
  inline_keyboard: Array<Array<{ text: string; callback_data?: string }>>;
}

export interface TgCallbackQuery {
  id: string;
  from: TgUser;
  /** The bot's message that carried the button. */
  message?: {
    message_id: number;
    from: TgUser;
    chat: TgChat;
    date: number;
    text?: string;
    reply_markup?: InlineKeyboardMarkup;
  };
  chat_instance: string;
  data?: string;
}

export interface TgUpdate {
  update_id: number;
  message?: TgMessage;
  callback_query?: TgCallbackQuery;
}

export interface SentMessage {
  message_id: number;
  chat_id: number | string;
  text: string;
  reply_parameters?: { message_id: number };
  /** Its inline keyboard, as sent or last edited (removed by an edit without one). */
  reply_markup?: InlineKeyboardMarkup;
}

/** An answerCallbackQuery call. */
export interface CallbackAnswer {
  callback_query_id: string;
  text?: string;
  show_alert?: boolean;
}

export class FakeTelegramServer {
  readonly bot: TgUser = { id: 777000, is_bot: true, first_name: 'Chatty', username: 'chatty_bot' };
  readonly sent: SentMessage[] = [];
  /** When each message of `sent` was sent (Date.now(), same index): a bench tells a resend at a kill by it. */
  readonly sentTimes: number[] = [];
  readonly actions: Array<{ chat_id: number | string; action: string }> = [];
  /** answerCallbackQuery calls, in order. */
  readonly callbackAnswers: CallbackAnswer[] = [];
  /** editMessageText calls, in order (the message in `sent` is changed too). */
  readonly edits: Array<{ chat_id: number | string; message_id: number; text: string }> = [];
  /** The update types the bot asked for (null: every type but a few, as Telegram's default). */
  allowedUpdates: string[] | null = null;
  private readonly chats = new Map<string, TgChat>();
  private readonly openQueries = new Set<string>();
  private nextQueryId = 1;
  /** Calls per method name. */
  readonly calls = new Map<string, number>();
  webhook: { url: string; secret_token?: string; allowed_updates?: string[] } | null = null;
  private readonly updates: TgUpdate[] = [];
  private readonly files = new Map<string, { path: string; bytes: Buffer }>();
  private nextUpdateId = 1000;
  private nextMessageId = 1;
  private pollers: Array<{ finish: (status: number, body: unknown) => void; offset: number }> = [];
  private sentWaiters: Array<() => void> = [];
  /** sendMessage answers this many 502s first (the platform down). */
  failSends = 0;
  /** getUpdates calls ended by another poller (409): two replicas polling at once. */
  conflicts = 0;
  /** When getUpdates was called (epoch ms), in order. */
  readonly pollTimes: number[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly token: string,
  ) {}

  static async start(token: string): Promise<FakeTelegramServer> {
    const server = http.createServer();
    const self = new FakeTelegramServer(server, token);
    server.on('request', (req, res) => void self.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  /** The API root to configure (`apiRoot`), as `https://api.telegram.org` is the real one. */
  get apiRoot(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  count(method: string): number {
    return this.calls.get(method) ?? 0;
  }

  /** A message from a user, queued as an update (delivered by getUpdates, or POSTed to the webhook). */
  async userMessage(options: {
    chat: TgChat;
    from: Omit<TgUser, 'is_bot'>;
    text?: string;
    photo?: Buffer;
    caption?: string;
    messageId?: number;
    updateId?: number;
  }): Promise<TgUpdate> {
    this.chats.set(String(options.chat.id), options.chat);
    const message: TgMessage = {
      message_id: options.messageId ?? this.nextMessageId++,
      from: { ...options.from, is_bot: false },
      chat: options.chat,
      date: Math.floor(Date.now() / 1000),
    };
    if (options.text !== undefined) {
      message.text = options.text;
      const mention = `@${this.bot.username}`;
      const at = options.text.indexOf(mention);
      if (at >= 0) message.entities = [{ type: 'mention', offset: at, length: mention.length }];
    }
    if (options.photo) {
      const fileId = `photo-${message.message_id}`;
      this.files.set(fileId, { path: `photos/file_${message.message_id}.jpg`, bytes: options.photo });
      message.photo = [
        { file_id: `${fileId}-small`, file_unique_id: 's', width: 90, height: 90 },
        { file_id: fileId, file_unique_id: 'l', width: 800, height: 600, file_size: options.photo.length },
      ];
      this.files.set(`${fileId}-small`, { path: `photos/small_${message.message_id}.jpg`, bytes: options.photo });
      if (options.caption !== undefined) message.caption = options.caption;
    }
    const update: TgUpdate = { update_id: options.updateId ?? this.nextUpdateId++, message };
    await this.push(update);
    return update;
  }

  /**
   * A user presses an inline keyboard button of a message the bot sent (`data`: the button's
   * callback_data; default the button labelled `label`), queued as a `callback_query` update.
   */
  async press(options: {
    from: Omit<TgUser, 'is_bot'>;
    message: SentMessage;
    label?: string;
    data?: string;
    updateId?: number;
  }): Promise<TgUpdate> {
    const sent = this.sent.find((m) => m.message_id === options.message.message_id) ?? options.message;
    const button = sent.reply_markup?.inline_keyboard.flat().find((b) => b.text === options.label);
    const data = options.data ?? button?.callback_data;
    if (data === undefined) throw new Error(`no button "${options.label}" on message ${sent.message_id}`);
    const chat = this.chats.get(String(sent.chat_id)) ?? { id: Number(sent.chat_id), type: 'private' as const };
    const id = `cq-${this.nextQueryId++}`;
    this.openQueries.add(id);
    const update: TgUpdate = {
      update_id: options.updateId ?? this.nextUpdateId++,
      callback_query: {
        id,
        from: { ...options.from, is_bot: false },
        message: {
          message_id: sent.message_id,
          from: this.bot,
          chat,
          date: Math.floor(Date.now() / 1000),
          text: sent.text,
          ...(sent.reply_markup ? { reply_markup: sent.reply_markup } : {}),
        },
        chat_instance: `ci-${chat.id}`,
        data,
      },
    };
    await this.push(update);
    return update;
  }

  /** The answer given to a callback query, if any. */
  answerOf(update: TgUpdate): CallbackAnswer | undefined {
    return this.callbackAnswers.find((a) => a.callback_query_id === update.callback_query?.id);
  }

  /** Queues an update as it is (a redelivery of the same one, say). */
  async push(update: TgUpdate): Promise<void> {
    // Update ids only grow (a later update never has a smaller id than one pushed before).
    this.nextUpdateId = Math.max(this.nextUpdateId, update.update_id + 1);
    if (this.webhook) {
      if (!this.wanted(update, this.webhook.allowed_updates ?? null)) return;
      await fetch(this.webhook.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...(this.webhook.secret_token ? { 'X-Telegram-Bot-Api-Secret-Token': this.webhook.secret_token } : {}),
        },
        body: JSON.stringify(update),
      });
      return;
    }
    this.updates.push(update);
    for (const p of this.pollers.splice(0)) this.answerPoll(p.finish, p.offset);
  }

  /** Messages sent to one chat, in order. */
  sentTo(chatId: number): SentMessage[] {
    return this.sent.filter((m) => String(m.chat_id) === String(chatId));
  }

  async until(predicate: () => boolean, timeoutMs = 20_000, what = 'messages'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(this.sent)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 300));
        this.sentWaiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    for (const p of this.pollers.splice(0)) p.finish(200, { ok: true, result: [] });
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answerPoll(finish: (status: number, body: unknown) => void, offset: number): void {
    finish(200, { ok: true, result: this.pending(offset) });
  }

  /** The updates a poll at `offset` gets: of the types asked for. */
  private pending(offset: number): TgUpdate[] {
    return this.updates.filter((u) => u.update_id >= offset && this.wanted(u, this.allowedUpdates));
  }

  /** Telegram's default (no allowed_updates) leaves out a few types; callback_query is not one of them. */
  private wanted(update: TgUpdate, allowed: string[] | null): boolean {
    if (allowed === null || allowed.length === 0) return true;
    return Object.keys(update).some((k) => k !== 'update_id' && allowed.includes(k));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, body: unknown): void => {
      if (res.writableEnded) return;
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    };
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) {
      const found = [...this.files.values()].find((f) => f.path === file[2]);
      if (file[1] !== this.token || !found) return send(404, { ok: false, error_code: 404, description: 'Not Found' });
      res.writeHead(200, { 'Content-Type': 'image/jpeg' }).end(found.bytes);
      return;
    }
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!m) return send(404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, token, method] = m as unknown as [string, string, string];
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    if (token !== this.token) return send(401, { ok: false, error_code: 401, description: 'Unauthorized' });
    const raw = Buffer.concat(chunks).toString('utf8');
    const params: Record<string, unknown> = raw
      ? (JSON.parse(raw) as Record<string, unknown>)
      : Object.fromEntries(url.searchParams.entries());
    const ok = (result: unknown) => send(200, { ok: true, result });
    switch (method) {
      case 'getMe':
        return ok(this.bot);
      case 'setWebhook':
        this.webhook = {
          url: String(params.url),
          ...(typeof params.secret_token === 'string' ? { secret_token: params.secret_token } : {}),
          ...(Array.isArray(params.allowed_updates) ? { allowed_updates: params.allowed_updates as string[] } : {}),
        };
        return ok(true);
      case 'deleteWebhook':
        this.webhook = null;
        return ok(true);
      case 'getUpdates': {
        if (this.webhook)
          return send(409, {
            ok: false,
            error_code: 409,
            description:
              "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
          });
        this.pollTimes.push(Date.now());
        // As on Telegram, allowed_updates is remembered until a later call gives another list.
        if (Array.isArray(params.allowed_updates)) this.allowedUpdates = params.allowed_updates as string[];
        const offset = Number(params.offset ?? 0);
        // Telegram forgets the updates before the offset (they are confirmed).
        for (let i = this.updates.length - 1; i >= 0; i--)
          if (this.updates[i]!.update_id < offset) this.updates.splice(i, 1);
        // A second poller makes the first one fail, as Telegram does.
        for (const p of this.pollers.splice(0)) {
          this.conflicts += 1;
          p.finish(409, {
            ok: false,
            error_code: 409,
            description:
              'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
          });
        }
        if (this.pending(offset).length > 0) return this.answerPoll(send, offset);
        const timeoutS = Math.min(Number(params.timeout ?? 0), 50);
        if (timeoutS <= 0) return this.answerPoll(send, offset);
        const poller = { finish: send, offset };
        this.pollers.push(poller);
        const timer = setTimeout(() => {
          this.pollers = this.pollers.filter((p) => p !== poller);
          this.answerPoll(send, offset);
        }, timeoutS * 1000);
        res.on('close', () => {
          clearTimeout(timer);
          this.pollers = this.pollers.filter((p) => p !== poller);
        });
        return;
      }
      case 'sendMessage': {
        if (this.failSends > 0) {
          this.failSends -= 1;
          return send(502, { ok: false, error_code: 502, description: 'Bad Gateway' });
        }
        const text = String(params.text ?? '');
        if (text.length > 4096)
          return send(400, { ok: false, error_code: 400, description: 'Bad Request: message is too long' });
        const markup = params.reply_markup as InlineKeyboardMarkup | undefined;
        if (markup !== undefined) {
          const buttons = Array.isArray(markup.inline_keyboard) ? markup.inline_keyboard.flat() : null;
          const bad = buttons?.find(
            (b) => typeof b.text !== 'string' || Buffer.byteLength(String(b.callback_data ?? ''), 'utf8') > 64,
          );
          if (buttons === null || bad)
            return send(400, { ok: false, error_code: 400, description: 'Bad Request: BUTTON_DATA_INVALID' });
        }
        const messageId = this.nextMessageId++;
        this.sent.push({
          message_id: messageId,
          chat_id: params.chat_id as number,
          text,
          ...(params.reply_parameters ? { reply_parameters: params.reply_parameters as { message_id: number } } : {}),
          ...(markup ? { reply_markup: markup } : {}),
        });
        this.sentTimes.push(Date.now());
        for (const w of this.sentWaiters.splice(0)) w();
        return ok({
          message_id: messageId,
          chat: { id: params.chat_id },
          date: 0,
          text,
          ...(markup ? { reply_markup: markup } : {}),
        });
      }
      case 'answerCallbackQuery': {
        const id = String(params.callback_query_id ?? '');
        if (!this.openQueries.delete(id))
          return send(400, {
            ok: false,
            error_code: 400,
            description: 'Bad Request: query is too old and response timeout expired or query ID is invalid',
          });
        this.callbackAnswers.push({
          callback_query_id: id,
          ...(typeof params.text === 'string' ? { text: params.text } : {}),
          ...(typeof params.show_alert === 'boolean' ? { show_alert: params.show_alert } : {}),
        });
        for (const w of this.sentWaiters.splice(0)) w();
        return ok(true);
      }
      case 'editMessageText': {
        const target = this.sent.find(
          (m) => m.message_id === Number(params.message_id) && String(m.chat_id) === String(params.chat_id),
        );
        if (!target)
          return send(400, { ok: false, error_code: 400, description: 'Bad Request: message to edit not found' });
        const text = String(params.text ?? '');
        if (text === '' || text.length > 4096)
          return send(400, {
            ok: false,
            error_code: 400,
            description: 'Bad Request: message text is empty or too long',
          });
        target.text = text;
        if (params.reply_markup) target.reply_markup = params.reply_markup as InlineKeyboardMarkup;
        else delete target.reply_markup;
        this.edits.push({ chat_id: target.chat_id, message_id: target.message_id, text });
        for (const w of this.sentWaiters.splice(0)) w();
        return ok({ message_id: target.message_id, chat: { id: target.chat_id }, date: 0, text });
      }
      case 'sendChatAction':
        this.actions.push({ chat_id: params.chat_id as number, action: String(params.action) });
        return ok(true);
      case 'getFile': {
        const f = this.files.get(String(params.file_id));
        if (!f) return send(400, { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' });
        return ok({ file_id: params.file_id, file_unique_id: 'u', file_size: f.bytes.length, file_path: f.path });
      }
      default:
        return send(404, { ok: false, error_code: 404, description: 'Not Found' });
    }
  }
}
