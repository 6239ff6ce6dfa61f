import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ChannelConfigField } from '#contracts/channels.js';
import {
  type ActionOutcome,
  type ChannelConnection,
  ChannelError,
  ChannelProvider,
  type ConnectionSink,
  type InboundAction,
  type InboundMessage,
  type OutboundOptions,
  type OutboundTarget,
  type WebhookParse,
} from '#core/channels/channel-provider.port.js';
import type { ChannelInstanceRecord } from '#core/ports/channel.repository.port.js';
import type { ChannelFetch } from './channel-fetch.js';
import { abortableSleep } from './channel-fetch.js';

type Headers = Record<string, string | string[] | undefined>;

export const TELEGRAM_API_ROOT = 'https://api.telegram.org';
/** Telegram's longest text message (sendMessage `text`: 1-4096 characters). */
export const TELEGRAM_MAX_MESSAGE = 4096;
/** getUpdates long-polling timeout, seconds. */
const POLL_TIMEOUT_S = 25;
/** Back-off between failed polls (then it stays at the last). */
const POLL_BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000];
/** The largest photo handed to a turn. */
const MAX_PHOTO_BYTES = 5 * 1024 * 1024;

/** The shapes this adapter reads, from the Bot API's public documentation (https://core.telegram.org/bots/api). */
interface TgUser {
  id: number;
  is_bot?: boolean;
  first_name?: string;
  last_name?: string;
  username?: string;
}
interface TgMessage {
  message_id: number;
  from?: TgUser;
  chat: { id: number; type: string; title?: string; first_name?: string; username?: string };
  text?: string;
  caption?: string;
  entities?: Array<{ type: string; offset: number; length: number }>;
  caption_entities?: Array<{ type: string; offset: number; length: number }>;
  photo?: Array<{ file_id: string; width: number; height: number; file_size?: number }>;
  reply_to_message?: { from?: TgUser };
}
/** A press of an inline keyboard button. `message` is absent for inline-mode messages (not ours). */
interface TgCallbackQuery {
  id: string;
  from: TgUser;
  message?: { message_id: number; chat: TgMessage['chat']; text?: string; date: number };
  data?: string;
}
interface TgUpdate {
  update_id: number;
  message?: TgMessage;
  callback_query?: TgCallbackQuery;
}

/** A batch's updates by chat (a button press by its message's chat, else its sender), each in order. */
function byChat(updates: TgUpdate[]): Map<string, TgUpdate[]> {
  const chats = new Map<string, TgUpdate[]>();
  for (const update of updates) {
    const chat =
      update.message?.chat.id ?? update.callback_query?.message?.chat.id ?? `from:${update.callback_query?.from.id}`;
    const key = String(chat);
    const list = chats.get(key);
    if (list) list.push(update);
    else chats.set(key, [update]);
  }
  return chats;
}
/** The update types this adapter asks for (getUpdates and setWebhook `allowed_updates`). */
const ALLOWED_UPDATES = ['message', 'callback_query'];
type TgAnswer<T> = { ok: true; result: T } | { ok: false; error_code: number; description: string };

/**
 * Telegram (docs/api/channels.md, "Telegram"), on the Bot API over plain fetch: the API is a
 * handful of JSON methods, and every call must pass the channels' address policy
 * (SVC_CHANNEL_ALLOW, ChannelFetch), which a bot framework's own HTTP client would bypass.
 * Connection-style: the replica holding the instance's lease either registers the webhook
 * (`setWebhook` to `SVC_PUBLIC_URL/hooks/channels/<id>` with a secret token, when the server
 * has a public URL) or long-polls `getUpdates`, keeping the offset in the instance's cursor so
 * a replica taking over resumes there. Replies leave from any replica (`sendMessage`). Buttons
 * (a held tool call's Approve / Reject) are an inline keyboard; a press is a `callback_query`
 * update, answered with `answerCallbackQuery` and shown by `editMessageText`.
 */
export class TelegramChannelProvider extends ChannelProvider {
  readonly type = 'telegram';
  readonly displayName = 'Telegram';
  readonly description = 'A Telegram bot (from @BotFather): direct chats and groups where it is mentioned.';
  readonly configFields: readonly ChannelConfigField[] = [
    { key: 'botToken', label: 'Bot token', type: 'secret', required: true, description: 'From @BotFather' },
    {
      key: 'apiRoot',
      label: 'Bot API root',
      type: 'url',
      required: false,
      description: 'A local Bot API server; default https://api.telegram.org',
    },
  ];
  readonly defaultConfig = {};
  readonly maxMessageLength = TELEGRAM_MAX_MESSAGE;
  /** Inline keyboards; a press arrives as a `callback_query` update. */
  override readonly supportsChoices = true;

  constructor(
    private readonly http: ChannelFetch,
    private readonly publicUrl: string | null,
    private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void> = abortableSleep,
  ) {
    super();
  }

  override configProblem(config: Record<string, unknown>): string | null {
    if (typeof config.botToken !== 'string' || !/^\d+:[A-Za-z0-9_-]+$/.test(config.botToken))
      return 'config.botToken must be a bot token (<digits>:<letters>)';
    if (
      config.apiRoot !== undefined &&
      (typeof config.apiRoot !== 'string' || !/^https?:\/\/[^/\s]+/.test(config.apiRoot))
    )
      return 'config.apiRoot must be an http(s) URL';
    return null;
  }

  /** Webhook mode: Telegram POSTs each Update with the secret token we gave it. */
  override async parseWebhook(instance: ChannelInstanceRecord, raw: Buffer, headers: Headers): Promise<WebhookParse> {
    const presented = headers['x-telegram-bot-api-secret-token'];
    const expected = webhookSecret(instance);
    const given = Buffer.from(typeof presented === 'string' ? presented : '');
    if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected)))
      return { kind: 'refused', refusal: 'bad-signature', error: 'Invalid webhook signature' };
    let update: TgUpdate;
    try {
      update = JSON.parse(raw.toString('utf8')) as TgUpdate;
    } catch {
      return { kind: 'refused', refusal: 'bad-body', error: 'Webhook bodies must be JSON' };
    }
    const me = botIdentity(instance);
    const message = update.message ? await this.toInbound(instance, update.message, me) : null;
    const action = update.callback_query ? toAction(update.callback_query) : null;
    return {
      kind: 'accepted',
      messages: message ? [message] : [],
      ...(action ? { actions: [action] } : {}),
      response: { ok: true },
    };
  }

  override async connect(instance: ChannelInstanceRecord, sink: ConnectionSink): Promise<ChannelConnection> {
    const me = await this.call<TgUser>(instance, 'getMe', {}, sink.signal);
    const identity = { id: me.id, username: me.username ?? '' };
    if (this.publicUrl !== null) {
      await this.call(
        instance,
        'setWebhook',
        {
          url: `${this.publicUrl}/hooks/channels/${instance.id}`,
          secret_token: webhookSecret(instance),
          allowed_updates: ALLOWED_UPDATES,
        },
        sink.signal,
      );
      // The bot's identity for mention checks in webhook deliveries (any replica receives them).
      knownBots.set(instance.id, identity);
      await sink.state('online', null);
      return { stop: async () => undefined };
    }
    knownBots.set(instance.id, identity);
    await this.call(instance, 'deleteWebhook', { drop_pending_updates: false }, sink.signal);
    await sink.state('online', null);
    const loop = this.poll(instance, sink, identity);
    return {
      stop: async () => {
        await loop.catch(() => undefined);
      },
    };
  }

  private async poll(
    instance: ChannelInstanceRecord,
    sink: ConnectionSink,
    me: { id: number; username: string },
  ): Promise<void> {
    let failures = 0;
    while (!sink.signal.aborted) {
      try {
        const cursor = await sink.cursor();
        const updates = await this.call<TgUpdate[]>(
          instance,
          'getUpdates',
          { offset: cursor === null ? 0 : Number(cursor), timeout: POLL_TIMEOUT_S, allowed_updates: ALLOWED_UPDATES },
          sink.signal,
          (POLL_TIMEOUT_S + 10) * 1000,
        );
        if (failures > 0) await sink.state('online', null);
        failures = 0;
        if (updates.length === 0) continue;
        // A batch's messages are claimed and queued together (after a takeover it holds every
        // chat's message that waited at the platform), read side by side by chat, each chat's in
        // order; button presses are handled after them, in order. The cursor moves past the
        // batch once all of it is taken; a failure (or a death) before that fetches the batch
        // again, and the updates already taken are repeats (claimed by message and action id:
        // they start nothing).
        const read = await Promise.all(
          [...byChat(updates).values()].map(async (chat) => {
            const messages: InboundMessage[] = [];
            for (const update of chat) {
              const message = update.message ? await this.toInbound(instance, update.message, me) : null;
              if (message) messages.push(message);
            }
            return messages;
          }),
        );
        if (sink.signal.aborted) return;
        await sink.receiveMany(read.flat());
        for (const update of updates) {
          const action = update.callback_query ? toAction(update.callback_query) : null;
          if (action && !sink.signal.aborted) await sink.action(action);
        }
        if (sink.signal.aborted) return;
        await sink.setCursor(String(Math.max(...updates.map((u) => u.update_id)) + 1));
      } catch (err) {
        if (sink.signal.aborted) return;
        const reason = err instanceof Error ? err.message : String(err);
        if (err instanceof ChannelError && err.permanent) {
          // Credentials rejected: offline with the platform's reason, and no retry until changed.
          await sink.state('offline', reason);
          return;
        }
        await sink.state(/Conflict/.test(reason) ? 'standby' : 'offline', reason);
        await this.sleep(POLL_BACKOFF_MS[Math.min(failures, POLL_BACKOFF_MS.length - 1)]!, sink.signal).catch(
          () => undefined,
        );
        failures += 1;
      }
    }
  }

  override async send(
    instance: ChannelInstanceRecord,
    target: OutboundTarget,
    text: string,
    options?: OutboundOptions,
  ): Promise<void> {
    const replyTo = target.replyTo ? Number(target.replyTo.split(':').pop()) : NaN;
    const choices = options?.choices ?? [];
    await this.call(instance, 'sendMessage', {
      chat_id: chatIdParam(target.chatId),
      text,
      ...(target.chatType === 'group' && Number.isInteger(replyTo)
        ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } }
        : {}),
      // One row of inline keyboard buttons; a press comes back as a callback_query with `data`.
      ...(choices.length > 0
        ? { reply_markup: { inline_keyboard: [choices.map((c) => ({ text: c.label, callback_data: c.id }))] } }
        : {}),
    });
  }

  /**
   * answerCallbackQuery with the notice (Telegram shows it to whoever pressed), then, with an
   * outcome text, editMessageText on the message: without `reply_markup` its keyboard goes.
   */
  override async settleAction(
    instance: ChannelInstanceRecord,
    action: InboundAction,
    outcome: ActionOutcome,
  ): Promise<void> {
    await this.call(instance, 'answerCallbackQuery', { callback_query_id: action.actionId, text: outcome.notice });
    const ref = /^(-?\d+):(\d+)$/.exec(action.messageRef ?? '');
    if (outcome.text === undefined || !ref) return;
    await this.call(instance, 'editMessageText', {
      chat_id: Number(ref[1]),
      message_id: Number(ref[2]),
      text: outcome.text.slice(0, TELEGRAM_MAX_MESSAGE),
    });
  }

  override async sendTyping(instance: ChannelInstanceRecord, target: OutboundTarget): Promise<void> {
    await this.call(instance, 'sendChatAction', { chat_id: chatIdParam(target.chatId), action: 'typing' });
  }

  /** One Bot API method; a refusal for good (401, 403, 404 on the token) is a permanent ChannelError. */
  private async call<T = unknown>(
    instance: ChannelInstanceRecord,
    method: string,
    params: Record<string, unknown>,
    signal?: AbortSignal,
    timeoutMs?: number,
  ): Promise<T> {
    const res = await this.http.fetch(`${apiRoot(instance)}/bot${String(instance.config.botToken)}/${method}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(params),
      ...(signal ? { signal } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
    });
    let answer: TgAnswer<T>;
    try {
      answer = (await res.json()) as TgAnswer<T>;
    } catch {
      throw new ChannelError(`Telegram ${method} answered ${res.status}`);
    }
    if (answer.ok) return answer.result;
    const permanent = answer.error_code === 401 || answer.error_code === 403 || answer.error_code === 404;
    throw new ChannelError(`Telegram ${method}: ${answer.description}`, permanent);
  }

  private async toInbound(
    instance: ChannelInstanceRecord,
    m: TgMessage,
    me: { id: number; username: string } | null,
  ): Promise<InboundMessage | null> {
    if (!m.from || m.from.is_bot) return null;
    const group = m.chat.type === 'group' || m.chat.type === 'supergroup';
    if (!group && m.chat.type !== 'private') return null;
    const text = m.text ?? m.caption ?? '';
    const entities = m.entities ?? m.caption_entities ?? [];
    const mention = me?.username ? `@${me.username}`.toLowerCase() : null;
    const mentioned =
      !group ||
      (mention !== null &&
        entities.some(
          (e) => e.type === 'mention' && text.slice(e.offset, e.offset + e.length).toLowerCase() === mention,
        )) ||
      (me !== null && m.reply_to_message?.from?.id === me.id) ||
      /^\/\w+@/.test(text);
    const images: Array<{ mediaType: string; data: string }> = [];
    if (m.photo && m.photo.length > 0 && mentioned) {
      const largest = m.photo.reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a));
      const image = await this.download(instance, largest.file_id).catch(() => null);
      if (image) images.push(image);
    }
    const name = [m.from.first_name, m.from.last_name].filter(Boolean).join(' ') || m.from.username;
    return {
      messageId: `${m.chat.id}:${m.message_id}`,
      chatId: String(m.chat.id),
      chatType: group ? 'group' : 'direct',
      ...(group && m.chat.title ? { chatName: m.chat.title } : {}),
      from: { id: String(m.from.id), ...(name ? { name } : {}) },
      text,
      mentioned,
      ...(images.length > 0 ? { images } : {}),
    };
  }

  /** A photo through getFile and the file download URL, as base64 for the turn. */
  private async download(
    instance: ChannelInstanceRecord,
    fileId: string,
  ): Promise<{ mediaType: string; data: string }> {
    const file = await this.call<{ file_path?: string; file_size?: number }>(instance, 'getFile', { file_id: fileId });
    if (!file.file_path || (file.file_size ?? 0) > MAX_PHOTO_BYTES) throw new ChannelError('file not downloadable');
    const res = await this.http.fetch(
      `${apiRoot(instance)}/file/bot${String(instance.config.botToken)}/${file.file_path}`,
    );
    if (!res.ok) throw new ChannelError(`file download answered ${res.status}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    if (bytes.length > MAX_PHOTO_BYTES) throw new ChannelError('file too large');
    const type = res.headers.get('content-type') ?? '';
    return { mediaType: type.startsWith('image/') ? type : 'image/jpeg', data: bytes.toString('base64') };
  }
}

/** A button press as the channels context reads it; null for one without data or message (not ours). */
function toAction(q: TgCallbackQuery): InboundAction | null {
  if (!q.data || !q.message || !q.from || q.from.is_bot) return null;
  const chat = q.message.chat;
  const group = chat.type === 'group' || chat.type === 'supergroup';
  if (!group && chat.type !== 'private') return null;
  const name = [q.from.first_name, q.from.last_name].filter(Boolean).join(' ') || q.from.username;
  return {
    actionId: q.id,
    choiceId: q.data,
    chatId: String(chat.id),
    chatType: group ? 'group' : 'direct',
    from: { id: String(q.from.id), ...(name ? { name } : {}) },
    messageRef: `${chat.id}:${q.message.message_id}`,
    ...(typeof q.message.text === 'string' ? { messageText: q.message.text } : {}),
  };
}

/** The bots' identities learnt by getMe in this process (mention checks of webhook deliveries). */
const knownBots = new Map<string, { id: number; username: string }>();

function botIdentity(instance: ChannelInstanceRecord): { id: number; username: string } | null {
  const known = knownBots.get(instance.id);
  if (known) return known;
  // The token's first part is the bot's user id; its username is known once getMe ran here.
  const id = Number(String(instance.config.botToken ?? '').split(':')[0]);
  return Number.isInteger(id) ? { id, username: '' } : null;
}

function apiRoot(instance: ChannelInstanceRecord): string {
  const root =
    typeof instance.config.apiRoot === 'string' && instance.config.apiRoot !== ''
      ? instance.config.apiRoot
      : TELEGRAM_API_ROOT;
  return root.replace(/\/+$/, '');
}

/** The secret token Telegram sends with webhook deliveries: derived from the bot token, 1-256 of [A-Za-z0-9_-]. */
function webhookSecret(instance: ChannelInstanceRecord): string {
  return createHmac('sha256', String(instance.config.botToken ?? ''))
    .update(`svc-telegram-webhook:${instance.id}`)
    .digest('hex');
}

function chatIdParam(chatId: string): number | string {
  return /^-?\d+$/.test(chatId) ? Number(chatId) : chatId;
}
