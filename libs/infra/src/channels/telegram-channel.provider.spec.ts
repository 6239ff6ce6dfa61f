import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ChannelInstanceRecord } from '#core/ports/channel.repository.port.js';
import type { ChannelFetch } from './channel-fetch.js';
import { TelegramChannelProvider } from './telegram-channel.provider.js';

const TOKEN = '4242:abc_DEF';
const instance: ChannelInstanceRecord = {
  id: '9d1f0c1e-4a7b-4c55-9c1f-0d7d3c0e2a11',
  type: 'telegram',
  name: 'bot',
  enabled: true,
  appId: 'app',
  teamId: null,
  config: { botToken: TOKEN, apiRoot: 'http://tg.test' },
  replyScope: 'all',
  owners: [],
  guestPolicy: 'chat-only',
  streaming: false,
  state: 'online',
  reason: null,
  cursor: null,
  createdAt: new Date(0),
  updatedAt: new Date(0),
};

/** A ChannelFetch that records each Bot API call and answers `{ok: true}`. */
function recordingFetch(): { http: ChannelFetch; calls: Array<{ method: string; params: Record<string, unknown> }> } {
  const calls: Array<{ method: string; params: Record<string, unknown> }> = [];
  const http = {
    fetch: async (url: string, init: RequestInit = {}) => {
      calls.push({ method: url.split('/').pop()!, params: JSON.parse(String(init.body ?? '{}')) });
      return new Response(JSON.stringify({ ok: true, result: true }), { status: 200 });
    },
  } as unknown as ChannelFetch;
  return { http, calls };
}

const secret = createHmac('sha256', TOKEN).update(`svc-telegram-webhook:${instance.id}`).digest('hex');

describe('Telegram provider: buttons', () => {
  it('webhook mode reads a callback_query as a button press', async () => {
    const provider = new TelegramChannelProvider(recordingFetch().http, null);
    const update = {
      update_id: 7,
      callback_query: {
        id: 'cq-1',
        from: { id: 501, is_bot: false, first_name: 'Alice' },
        message: { message_id: 33, chat: { id: -100300, type: 'supergroup' }, date: 1, text: 'Run Bash?' },
        chat_instance: 'x',
        data: 'approval:approve:0123456789abcdef',
      },
    };
    const parsed = await provider.parseWebhook(instance, Buffer.from(JSON.stringify(update)), {
      'x-telegram-bot-api-secret-token': secret,
    });
    assert.equal(parsed.kind, 'accepted');
    assert.deepEqual(parsed.kind === 'accepted' ? [parsed.messages, parsed.actions] : null, [
      [],
      [
        {
          actionId: 'cq-1',
          choiceId: 'approval:approve:0123456789abcdef',
          chatId: '-100300',
          chatType: 'group',
          from: { id: '501', name: 'Alice' },
          messageRef: '-100300:33',
          messageText: 'Run Bash?',
        },
      ],
    ]);
    const noData = { ...update, callback_query: { ...update.callback_query, data: undefined } };
    const ignored = await provider.parseWebhook(instance, Buffer.from(JSON.stringify(noData)), {
      'x-telegram-bot-api-secret-token': secret,
    });
    assert.deepEqual(ignored.kind === 'accepted' ? ignored.actions : 'refused', undefined);
  });

  it('sends choices as an inline keyboard; settles a press with answerCallbackQuery and editMessageText', async () => {
    const { http, calls } = recordingFetch();
    const provider = new TelegramChannelProvider(http, null);
    assert.equal(provider.supportsChoices, true);
    await provider.send(instance, { chatId: '501', chatType: 'direct', replyTo: null }, 'Run?', {
      choices: [
        { id: 'a', label: 'Approve' },
        { id: 'r', label: 'Reject' },
      ],
    });
    assert.deepEqual(calls[0], {
      method: 'sendMessage',
      params: {
        chat_id: 501,
        text: 'Run?',
        reply_markup: {
          inline_keyboard: [
            [
              { text: 'Approve', callback_data: 'a' },
              { text: 'Reject', callback_data: 'r' },
            ],
          ],
        },
      },
    });
    const action = {
      actionId: 'cq-9',
      choiceId: 'a',
      chatId: '501',
      chatType: 'direct' as const,
      from: { id: '501' },
      messageRef: '501:12',
    };
    await provider.settleAction(instance, action, { notice: 'Approved.', text: 'Run?\n\nApproved by Alice.' });
    assert.deepEqual(calls.slice(1), [
      { method: 'answerCallbackQuery', params: { callback_query_id: 'cq-9', text: 'Approved.' } },
      { method: 'editMessageText', params: { chat_id: 501, message_id: 12, text: 'Run?\n\nApproved by Alice.' } },
    ]);
    await provider.settleAction(instance, action, { notice: 'Nothing is waiting for approval.' });
    assert.equal(calls.length, 4, 'a notice alone edits nothing');
  });
});
