import { createHmac } from 'node:crypto';
import type { ChannelConfigField, ChatType } from '#contracts/channels.js';
import {
  ChannelError,
  ChannelProvider,
  type InboundMessage,
  type OutboundTarget,
  type WebhookParse,
} from '#core/channels/channel-provider.port.js';
import type { ChannelInstanceRecord } from '#core/ports/channel.repository.port.js';
import { signatureValid, WEBHOOK_MAX_BYTES, WebhookTexts } from '#core/triggers/webhook-rules.js';
import type { ChannelFetch } from './channel-fetch.js';

type Headers = Record<string, string | string[] | undefined>;

/** The longest message a webhook reply carries in one POST. */
export const WEBHOOK_MAX_MESSAGE = 4000;

/**
 * The generic webhook channel (docs/api/channels.md, "webhook"): any system that can POST JSON.
 * Inbound `POST /hooks/channels/<instanceId>` with `{messageId, chatId, chatType, from: {id,
 * name?}, text, mentioned?, images?}`, signed as webhook triggers are (the same check,
 * webhook-rules.ts); each reply is POSTed to `callbackUrl` as `{instanceId, chatId, chatType,
 * replyTo, text}` with `X-Hub-Signature-256: sha256=<hmac of the body>` and `X-Delivery-Id`.
 */
export class WebhookChannelProvider extends ChannelProvider {
  readonly type = 'webhook';
  readonly displayName = 'Webhook';
  readonly description =
    'Any system that can POST signed JSON: messages in at /hooks/channels/<instanceId>, replies to a callback URL.';
  readonly configFields: readonly ChannelConfigField[] = [
    {
      key: 'secret',
      label: 'Signing secret',
      type: 'secret',
      required: true,
      description: 'HMAC-SHA256 key of both directions',
    },
    { key: 'callbackUrl', label: 'Callback URL', type: 'url', required: true, description: 'Replies are POSTed here' },
  ];
  readonly defaultConfig = {};
  readonly maxMessageLength = WEBHOOK_MAX_MESSAGE;

  constructor(private readonly http: ChannelFetch) {
    super();
  }

  override configProblem(config: Record<string, unknown>): string | null {
    if (typeof config.secret !== 'string') return 'config.secret must be a string';
    const url = config.callbackUrl;
    if (typeof url !== 'string' || !/^https?:\/\/[^/\s]+/.test(url)) return 'config.callbackUrl must be an http(s) URL';
    return null;
  }

  override async parseWebhook(instance: ChannelInstanceRecord, raw: Buffer, headers: Headers): Promise<WebhookParse> {
    const secret = instance.config.secret;
    if (typeof secret !== 'string' || secret === '' || !signatureValid(secret, raw, headers))
      return { kind: 'refused', refusal: 'bad-signature', error: WebhookTexts.badSignature };
    if (raw.length > WEBHOOK_MAX_BYTES)
      return { kind: 'refused', refusal: 'bad-body', error: 'Request body is too large' };
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return { kind: 'refused', refusal: 'bad-body', error: WebhookTexts.notJson };
    }
    const message = readMessage(body);
    if (typeof message === 'string') return { kind: 'refused', refusal: 'bad-body', error: message };
    return { kind: 'accepted', messages: [message] };
  }

  async send(instance: ChannelInstanceRecord, target: OutboundTarget, text: string): Promise<void> {
    const url = instance.config.callbackUrl;
    const secret = instance.config.secret;
    if (typeof url !== 'string' || typeof secret !== 'string') throw new ChannelError('callbackUrl is not set', true);
    const body = JSON.stringify({
      instanceId: instance.id,
      chatId: target.chatId,
      chatType: target.chatType,
      replyTo: target.replyTo,
      text,
    });
    const res = await this.http.fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Hub-Signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
        // The same on a resend after a replica died mid-reply: the receiver may drop a repeat.
        ...(target.deliveryId === undefined ? {} : { 'X-Delivery-Id': target.deliveryId }),
      },
      body,
    });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new ChannelError(`callback answered ${res.status}`);
  }
}

/** The inbound body's message, or what is wrong with it. */
function readMessage(body: unknown): InboundMessage | string {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'body must be a JSON object';
  const b = body as Record<string, unknown>;
  const str = (v: unknown): v is string => typeof v === 'string' && v !== '';
  const id = typeof b.messageId === 'number' ? String(b.messageId) : b.messageId;
  if (!str(id)) return 'messageId must be a non-empty string';
  const chatId = typeof b.chatId === 'number' ? String(b.chatId) : b.chatId;
  if (!str(chatId)) return 'chatId must be a non-empty string';
  if (b.chatType !== 'direct' && b.chatType !== 'group') return 'chatType must be "direct" or "group"';
  const from = b.from as Record<string, unknown> | undefined;
  const fromId = typeof from?.id === 'number' ? String(from.id) : from?.id;
  if (!from || typeof from !== 'object' || !str(fromId)) return 'from.id must be a non-empty string';
  if (typeof b.text !== 'string') return 'text must be a string';
  if (b.mentioned !== undefined && typeof b.mentioned !== 'boolean') return 'mentioned must be a boolean';
  const images: Array<{ mediaType: string; data: string }> = [];
  if (b.images !== undefined) {
    if (!Array.isArray(b.images)) return 'images must be a list';
    for (const img of b.images as unknown[]) {
      const i = img as { data?: unknown; mediaType?: unknown };
      if (!i || typeof i.data !== 'string' || typeof i.mediaType !== 'string')
        return 'images[] must be {data (base64), mediaType}';
      images.push({ mediaType: i.mediaType, data: i.data });
    }
  }
  return {
    messageId: id,
    chatId,
    chatType: b.chatType as ChatType,
    ...(typeof b.chatName === 'string' ? { chatName: b.chatName } : {}),
    from: { id: fromId, ...(typeof from.name === 'string' ? { name: from.name } : {}) },
    text: b.text,
    mentioned: b.mentioned === true,
    ...(images.length > 0 ? { images } : {}),
  };
}
