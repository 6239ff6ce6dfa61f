import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgentHarness } from '#testing/agent-harness.js';
import { FakeTelegramServer } from '#testing/fake-telegram-server.js';
import { textReply } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { sleep, waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

const TOKEN = '777000:TEST-token_abc';

const spec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: 'Answers on Telegram.',
  type: 'automation',
  system_prompt: 'You help the user from Telegram.',
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
});

/** The Telegram channel against a loopback Bot API of our own (long polling: no SVC_PUBLIC_URL). */
describe(`message channels: Telegram (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let tg: FakeTelegramServer;
  let events: WsTestClient;
  let appId: string;
  let instanceId: string;
  const alice = { id: 501, first_name: 'Alice', username: 'alice' };
  const bob = { id: 502, first_name: 'Bob' };
  const aliceChat = { id: 501, type: 'private' as const, first_name: 'Alice' };
  const group = { id: -100200, type: 'supergroup' as const, title: 'Team room' };
  const event = (channel: string, match: (f: Frame) => boolean, timeoutMs = 20_000) =>
    events.next((f) => f.type === 'event' && f.channel === channel && match(f), timeoutMs);
  const requestsWith = (text: string) =>
    h.model.requests.filter((r) => JSON.stringify(r.body.messages?.at(-1) ?? '').includes(text));

  before(async () => {
    tg = await FakeTelegramServer.start(TOKEN);
    await h.start({ SVC_CHANNEL_ALLOW: '127.0.0.1' });
    events = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    const spaceId = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Telegram' })).id;
    appId = okData<{ appId: string }>(await api.post('/api/apps/install', { spec: spec('Chatty'), spaceId })).appId;
  });
  after(async () => {
    events?.close();
    await h.stop();
    await tg?.close();
  });
  beforeEach(() => h.model.reset());

  it('credentials the platform rejects: offline with its reason, and no retry storm', async () => {
    const offline = event(
      'im-channels:instance-updated',
      (f) => (f.data!.instance as { state?: string } | null)?.state === 'offline',
    );
    const bad = okData<{ id: string; config: Record<string, unknown>; state: string }>(
      await api.post('/api/im-channels/instances', {
        type: 'telegram',
        name: 'Wrong token',
        appId,
        config: { botToken: '777000:wrong', apiRoot: tg.apiRoot },
      }),
    );
    assert.deepEqual(bad.config, { botToken: '***', apiRoot: tg.apiRoot });
    const e = await offline;
    assert.equal(e.data!.instanceId, bad.id);
    assert.equal((e.data!.instance as { reason: string }).reason, 'Telegram getMe: Unauthorized');
    const calls = tg.count('getMe');
    await sleep(3000);
    assert.equal(tg.count('getMe'), calls, 'no retry until the instance is changed or reconnected');
    const status = okData<Array<{ state: string; connected: boolean; reason: string }>>(
      await api.get(`/api/im-channels/status?instanceId=${bad.id}`),
    );
    assert.deepEqual(
      [status[0]!.state, status[0]!.connected, status[0]!.reason],
      ['offline', false, 'Telegram getMe: Unauthorized'],
    );
    okData(await api.delete(`/api/im-channels/instances/${bad.id}`));
  });

  it('polls with a good token: online; a direct message is one turn however often it is delivered', async () => {
    const online = event(
      'im-channels:instance-updated',
      (f) => (f.data!.instance as { state?: string } | null)?.state === 'online',
    );
    instanceId = okData<{ id: string }>(
      await api.post('/api/im-channels/instances', {
        type: 'telegram',
        name: 'Chatty bot',
        appId,
        config: { botToken: TOKEN, apiRoot: tg.apiRoot },
      }),
    ).id;
    await online;
    assert.ok(tg.count('deleteWebhook') >= 1, 'long polling: no webhook');
    h.model.enqueue(textReply('Hi Alice!'));
    const update = await tg.userMessage({ chat: aliceChat, from: alice, text: 'Hello bot' });
    // Redeliveries of the same message (as after a lost confirmation) under new update ids.
    await tg.push({ ...update, update_id: update.update_id + 500 });
    await tg.push({ ...update, update_id: update.update_id + 501 });
    await tg.until(() => tg.sentTo(501).length >= 1, 20_000, 'the reply');
    await sleep(1500);
    assert.deepEqual(
      tg.sentTo(501).map((m) => m.text),
      ['Hi Alice!'],
    );
    assert.equal(requestsWith('Hello bot').length, 1);
    assert.ok(
      tg.actions.some((a) => a.chat_id === 501 && a.action === 'typing'),
      'typing shown',
    );
    const sessions = okData<Array<{ chatId: string; chatType: string; channel: string; displayName: string }>>(
      await api.get(`/api/im-sessions?appId=${appId}`),
    );
    assert.deepEqual(
      sessions.map((s) => [s.channel, s.chatType, s.chatId, s.displayName]),
      [['telegram', 'direct', '501', 'Alice']],
    );
    const messages = okData<Array<{ role: string; content: string }>>(
      await api.get(`/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=direct&chatId=501`),
    );
    assert.deepEqual(
      messages.map((m) => [m.role, m.content]),
      [
        ['user', 'Hello bot'],
        ['assistant', 'Hi Alice!'],
      ],
    );
  });

  it('in a group: only when mentioned, the mention stripped, the reply threaded to the message', async () => {
    h.model.enqueue(textReply('Group hello.'));
    await tg.userMessage({ chat: group, from: bob, text: 'nobody asked the bot' });
    const asked = await tg.userMessage({ chat: group, from: alice, text: '@chatty_bot what is new?' });
    await tg.until(() => tg.sentTo(group.id).length >= 1, 20_000, 'the group reply');
    const [reply] = tg.sentTo(group.id);
    assert.equal(reply!.text, 'Group hello.');
    assert.equal(reply!.reply_parameters?.message_id, asked.message!.message_id);
    assert.equal(requestsWith('nobody asked').length, 0);
    const last = JSON.stringify(h.model.requests.at(-1)!.body.messages!.at(-1));
    assert.match(last, /\[Alice\] what is new\?/);
    assert.doesNotMatch(last, /@chatty_bot/);
  });

  it('a long reply is split at 4096 characters and sent in order', async () => {
    const long = Array.from({ length: 120 }, (_, i) => `Line ${i}: ${'lorem ipsum '.repeat(8).trim()}`).join('\n');
    assert.ok(long.length > 8192);
    h.model.enqueue(textReply(long, { chunks: 10 }));
    const before = tg.sentTo(501).length;
    await tg.userMessage({ chat: aliceChat, from: alice, text: 'Tell me a long story' });
    await tg.until(
      () =>
        tg
          .sentTo(501)
          .slice(before)
          .map((m) => m.text)
          .join('\n').length >= long.length,
      30_000,
      'all parts',
    );
    const parts = tg.sentTo(501).slice(before);
    assert.ok(parts.length >= 4, `parts: ${parts.length}`);
    for (const p of parts) assert.ok(p.text.length <= 4096);
    assert.equal(parts.map((p) => p.text).join('\n'), long);
  });

  it('a photo reaches the turn as an image, with its caption', async () => {
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    h.model.enqueue(textReply('A tiny picture.'));
    await tg.userMessage({ chat: aliceChat, from: alice, photo: png, caption: 'What is this?' });
    await tg.until(() => tg.sentTo(501).some((m) => m.text === 'A tiny picture.'), 20_000, 'the reply');
    const body = JSON.stringify(h.model.requests.at(-1)!.body);
    assert.ok(body.includes(png.toString('base64')), 'the image bytes go to the model');
    assert.ok(body.includes('What is this?'));
    assert.ok(tg.count('getFile') >= 1);
  });

  it('a platform down: replies retried until it answers; reconnect restarts polling', async () => {
    h.model.enqueue(textReply('Eventually.'));
    tg.failSends = 2;
    await tg.userMessage({ chat: aliceChat, from: alice, text: 'are you there?' });
    await tg.until(() => tg.sentTo(501).some((m) => m.text === 'Eventually.'), 30_000, 'the retried reply');
    const getMe = tg.count('getMe');
    okData(await api.post('/api/im-channels/reconnect', { instanceId }));
    await waitFor(
      async () => {
        const [s] = okData<Array<{ state: string }>>(await api.get(`/api/im-channels/status?instanceId=${instanceId}`));
        return tg.count('getMe') > getMe && s!.state === 'online';
      },
      20_000,
      'connected again',
    );
  });
});
