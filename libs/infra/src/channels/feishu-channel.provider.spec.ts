import assert from 'node:assert/strict';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ChannelInstanceRecord } from '#core/ports/channel.repository.port.js';
import type { ChannelFetch } from './channel-fetch.js';
import { decryptFeishu, FeishuChannelProvider } from './feishu-channel.provider.js';

const instance = (config: Record<string, unknown>): ChannelInstanceRecord => ({
  id: '4b1c2d3e-0000-4000-8000-00000000fe15',
  type: 'feishu',
  name: 'bot',
  enabled: true,
  appId: 'app',
  teamId: null,
  config: { appId: 'cli_x', appSecret: 's', verificationToken: 'vt', baseUrl: 'http://feishu.test', ...config },
  replyScope: 'all',
  owners: [],
  guestPolicy: 'chat-only',
  streaming: false,
  state: 'online',
  reason: null,
  cursor: null,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

/** A ChannelFetch answering Feishu's token and bot-info calls. */
const http = {
  fetch: async (url: string) =>
    new Response(
      JSON.stringify(
        url.endsWith('/tenant_access_token/internal')
          ? { code: 0, msg: 'ok', tenant_access_token: 't-1', expire: 7200 }
          : { code: 0, msg: 'ok', bot: { open_id: 'ou_bot' } },
      ),
      { status: 200 },
    ),
} as unknown as ChannelFetch;

function encrypt(key: string, json: string): string {
  const iv = randomBytes(16);
  const c = createCipheriv('aes-256-cbc', createHash('sha256').update(key).digest(), iv);
  return Buffer.concat([iv, c.update(json), c.final()]).toString('base64');
}

const event = (content: unknown, mentions: unknown[] = [], chatType = 'group') => ({
  schema: '2.0',
  header: { event_id: 'e1', token: 'vt', event_type: 'im.message.receive_v1' },
  event: {
    sender: { sender_id: { open_id: 'ou_alice', user_id: 'u1' }, sender_type: 'user' },
    message: {
      message_id: 'om_1',
      chat_id: 'oc_1',
      chat_type: chatType,
      message_type: typeof content === 'string' ? 'text' : 'post',
      content: JSON.stringify(typeof content === 'string' ? { text: content } : content),
      mentions,
    },
  },
});

describe('Feishu provider', () => {
  it("decrypts the example of Feishu's event subscription guide", () => {
    assert.equal(decryptFeishu('test key', 'P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk='), 'hello world');
  });

  it('checks X-Lark-Signature over timestamp + nonce + key + body', async () => {
    const p = new FeishuChannelProvider(http);
    const raw = Buffer.from(JSON.stringify({ encrypt: encrypt('k', JSON.stringify(event('@_user_1 hi'))) }));
    const sign = (key: string, body: Buffer) =>
      createHash('sha256').update(`1700000000n0nce${key}`).update(body).digest('hex');
    const headers = (signature: string) => ({
      'x-lark-request-timestamp': '1700000000',
      'x-lark-request-nonce': 'n0nce',
      'x-lark-signature': signature,
    });
    const bot = [{ key: '@_user_1', id: { open_id: 'ou_bot' }, name: 'Chatty' }];
    const good = Buffer.from(JSON.stringify({ encrypt: encrypt('k', JSON.stringify(event('@_user_1 hi', bot))) }));
    const ok = await p.parseWebhook(instance({ encryptKey: 'k' }), good, headers(sign('k', good)));
    assert.equal(ok.kind, 'accepted');
    assert.deepEqual(ok.kind === 'accepted' ? ok.messages.map((m) => [m.messageId, m.chatType, m.text]) : null, [
      ['om_1', 'group', 'hi'],
    ]);
    const bad = await p.parseWebhook(instance({ encryptKey: 'k' }), raw, headers(sign('other', raw)));
    assert.deepEqual(bad, { kind: 'refused', refusal: 'bad-signature', error: 'Invalid Feishu request signature' });
  });

  it("reads a group's mentions (the bot's stripped, others named) and rich-text posts", async () => {
    const p = new FeishuChannelProvider(http);
    const mentions = [
      { key: '@_user_1', id: { open_id: 'ou_bot' }, name: 'Chatty' },
      { key: '@_user_2', id: { open_id: 'ou_bob', user_id: 'u2' }, name: 'Bob' },
    ];
    const read = async (body: unknown) => {
      const r = await p.parseWebhook(instance({}), Buffer.from(JSON.stringify(body)), {});
      return r.kind === 'accepted' ? r.messages.map((m) => m.text) : r;
    };
    assert.deepEqual(await read(event('@_user_1 ask @_user_2 please', mentions)), ['ask @Bob please']);
    assert.deepEqual(await read(event('@_user_2 not for the bot', mentions.slice(1))), []);
    assert.deepEqual(
      await read(
        event(
          {
            title: 'Plan',
            content: [
              [
                { tag: 'at', user_id: '@_user_1' },
                { tag: 'text', text: ' step one' },
              ],
            ],
          },
          mentions.slice(0, 1),
        ),
      ),
      ['Plan\nstep one'],
    );
  });
});
