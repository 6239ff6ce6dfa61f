import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import request from 'supertest';
import { AgentHarness } from '#testing/agent-harness.js';
import { ChannelCallbackServer } from '#testing/channel-callback-server.js';
import { textReply } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { sleep, waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

const SECRET = 'channel-s3cret';
const sign = (raw: string, secret = SECRET) => createHmac('sha256', secret).update(raw).digest('hex');

const spec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: 'Answers in chat.',
  type: 'automation',
  system_prompt: 'You help the user from their chat app.',
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
});

interface Inbound {
  messageId: string;
  chatId: string;
  chatType: 'direct' | 'group';
  from: { id: string; name?: string };
  text: string;
  mentioned?: boolean;
}

describe(`message channels: the generic webhook (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let callback: ChannelCallbackServer;
  let events: WsTestClient;
  let appId: string;
  let instanceId: string;
  let spaceId: string;

  const deliver = (id: string, body: Inbound | Record<string, unknown>, secret: string | null = SECRET) => {
    const raw = JSON.stringify(body);
    const req = request(h.server.url).post(`/hooks/channels/${id}`).set('Content-Type', 'application/json');
    if (secret !== null) req.set('X-Hub-Signature-256', `sha256=${sign(raw, secret)}`);
    return req.send(raw);
  };
  const direct = (messageId: string, text: string, from = 'u-owner', chatId = 'chat-owner'): Inbound => ({
    messageId,
    chatId,
    chatType: 'direct',
    from: { id: from, name: from.toUpperCase() },
    text,
  });
  const threadOf = (chatType: string, chatId: string) => `app-chat:${appId}:webhook:${chatType}:${chatId}`;
  const event = (channel: string, match: (f: Frame) => boolean = () => true, timeoutMs = 15_000) =>
    events.next((f) => f.type === 'event' && f.channel === channel && match(f), timeoutMs);
  /** The model requests whose last user message includes `text`. */
  const requestsWith = (text: string) =>
    h.model.requests.filter((r) => JSON.stringify(r.body.messages?.at(-1) ?? '').includes(text));

  before(async () => {
    callback = await ChannelCallbackServer.start(SECRET);
    await h.start({ SVC_CHANNEL_ALLOW: '127.0.0.1' });
    events = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    spaceId = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Channels' })).id;
    appId = okData<{ appId: string }>(await api.post('/api/apps/install', { spec: spec('Chatty'), spaceId })).appId;
  });
  after(async () => {
    events?.close();
    await h.stop();
    await callback?.close();
  });
  beforeEach(() => h.model.reset());

  it('lists the webhook provider with its fields; an instance answers its credentials masked, in events too', async () => {
    const providers = okData<Array<{ type: string; configFields: Array<{ key: string; type: string }> }>>(
      await api.get('/api/im-channels/providers'),
    );
    const webhook = providers.find((p) => p.type === 'webhook');
    assert.ok(webhook);
    assert.deepEqual(
      webhook.configFields.map((f) => [f.key, f.type]),
      [
        ['secret', 'secret'],
        ['callbackUrl', 'url'],
      ],
    );
    const updated = event('im-channels:instance-updated');
    const created = okData<Record<string, unknown>>(
      await api.post('/api/im-channels/instances', {
        type: 'webhook',
        name: 'My hook',
        appId,
        config: { secret: SECRET, callbackUrl: callback.url },
      }),
    );
    instanceId = created.id as string;
    assert.deepEqual(created.config, { secret: '***', callbackUrl: callback.url });
    assert.equal(created.state, 'online');
    assert.deepEqual(created.owners, []);
    assert.equal(created.replyScope, 'all');
    assert.equal(created.guestPolicy, 'chat-only');
    const e = await updated;
    assert.equal(e.data!.instanceId, instanceId);
    assert.doesNotMatch(JSON.stringify(e.data), new RegExp(SECRET));
    const listed = okData<Array<Record<string, unknown>>>(await api.get('/api/im-channels/instances'));
    assert.doesNotMatch(JSON.stringify(listed), new RegExp(SECRET));
    const status = okData<Array<Record<string, unknown>>>(
      await api.get(`/api/im-channels/status?instanceId=${instanceId}`),
    );
    assert.deepEqual(status, [
      {
        id: instanceId,
        type: 'webhook',
        enabled: true,
        connected: true,
        state: 'online',
        appId,
        appName: 'Chatty',
        reason: null,
      },
    ]);
    // Bad input: unknown type, missing credential, unknown app, unknown instance.
    assert.equal(
      (await api.post('/api/im-channels/instances', { type: 'fax', name: 'x', appId, config: {} })).status,
      400,
    );
    const missing = await api.post('/api/im-channels/instances', {
      type: 'webhook',
      name: 'x',
      appId,
      config: { secret: 's' },
    });
    assert.deepEqual([missing.status, missing.body.error], [400, 'config.callbackUrl is required']);
    const noApp = await api.post('/api/im-channels/instances', {
      type: 'webhook',
      name: 'x',
      appId: '00000000-0000-4000-8000-000000000000',
      config: { secret: 's', callbackUrl: callback.url },
    });
    assert.equal(noApp.status, 404);
    assert.equal((await api.patch('/api/im-channels/instances/00000000-0000-4000-8000-000000000000', {})).status, 404);
    // A PATCH answering "***" keeps the stored secret.
    const patched = okData<Record<string, unknown>>(
      await api.patch(`/api/im-channels/instances/${instanceId}`, { config: { secret: '***' }, name: 'Renamed' }),
    );
    assert.equal(patched.name, 'Renamed');
  });

  it('a bad or missing signature answers 401 and starts nothing; an unknown instance 404', async () => {
    const body = direct('m-forged', 'hello');
    const wrong = await deliver(instanceId, body, 'guess');
    assert.deepEqual([wrong.status, wrong.body.error], [401, 'Invalid webhook signature']);
    assert.equal((await deliver(instanceId, body, null)).status, 401);
    assert.equal((await deliver('00000000-0000-4000-8000-000000000000', body)).status, 404);
    await sleep(500);
    assert.equal(h.model.requests.length, 0);
  });

  it('a direct message: the first sender becomes owner, one turn for three deliveries, the signed reply goes back', async () => {
    h.model.enqueue(textReply('Hello from Chatty.'));
    const session = event('app:im-session-updated', (f) => f.data!.instanceId === instanceId);
    const body = direct('m-1', 'Hi there');
    for (let i = 0; i < 3; i++) {
      const res = await deliver(instanceId, body);
      assert.deepEqual([res.status, res.body], [200, { ok: true, received: true }]);
    }
    await callback.until((r) => r.some((x) => x.replyTo === 'm-1'), 20_000, 'the reply');
    const s = await session;
    assert.deepEqual(s.data, {
      appId,
      channel: 'webhook',
      chatId: 'chat-owner',
      chatType: 'direct',
      instanceId,
      lastMessage: 'Hi there',
    });
    const reply = callback.of('chat-owner').find((r) => r.replyTo === 'm-1')!;
    assert.deepEqual(reply, {
      instanceId,
      chatId: 'chat-owner',
      chatType: 'direct',
      replyTo: 'm-1',
      text: 'Hello from Chatty.',
      signed: true,
      deliveryId: reply.deliveryId,
    });
    assert.match(reply.deliveryId ?? '', /^turn:[0-9a-f-]{36}:0$/);
    await sleep(1000);
    assert.equal(requestsWith('Hi there').length, 1, 'one turn for the three deliveries');
    assert.equal(callback.of('chat-owner').length, 1);
    const instance = okData<Array<{ id: string; owners: string[] }>>(await api.get('/api/im-channels/instances')).find(
      (i) => i.id === instanceId,
    )!;
    assert.deepEqual(instance.owners, ['u-owner']);
    const sessions = okData<Array<Record<string, unknown>>>(await api.get(`/api/im-sessions?appId=${appId}`));
    assert.equal(sessions.length, 1);
    assert.deepEqual(
      { ...sessions[0], lastMessageAt: typeof sessions[0]!.lastMessageAt },
      {
        appId,
        channel: 'webhook',
        instanceId,
        chatType: 'direct',
        chatId: 'chat-owner',
        displayName: 'U-OWNER',
        customName: null,
        proactive: false,
        lastMessageAt: 'string',
      },
    );
    const messages = okData<Array<{ role: string; content: string }>>(
      await api.get(`/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=direct&chatId=chat-owner`),
    );
    assert.deepEqual(
      messages.map((m) => [m.role, m.content]),
      [
        ['user', 'Hi there'],
        ['assistant', 'Hello from Chatty.'],
      ],
    );
    // The HTTP chat never writes into a channel thread.
    const http = await api.post(`/api/apps/${appId}/chat/send`, {
      spaceId,
      message: 'sneaky',
      conversationId: threadOf('direct', 'chat-owner'),
    });
    assert.equal(http.status, 409);
  });

  it('a group message needs a mention, which is stripped; the group is a thread of its own', async () => {
    h.model.enqueue(textReply('Group answer.'));
    const group = (messageId: string, text: string, mentioned: boolean): Inbound => ({
      messageId,
      chatId: 'room-1',
      chatType: 'group',
      from: { id: 'u-owner', name: 'Olive' },
      text,
      mentioned,
    });
    assert.equal((await deliver(instanceId, group('g-1', 'just chatting', false))).status, 200);
    assert.equal((await deliver(instanceId, group('g-2', '@chatty what time is it?', true))).status, 200);
    await callback.until((r) => r.some((x) => x.replyTo === 'g-2'), 20_000, 'the group reply');
    assert.deepEqual(
      callback.of('room-1').map((r) => [r.chatType, r.replyTo, r.text]),
      [['group', 'g-2', 'Group answer.']],
    );
    assert.equal(requestsWith('just chatting').length, 0, 'not mentioned: no turn');
    const last = JSON.stringify(h.model.requests.at(-1)!.body.messages!.at(-1));
    assert.match(last, /\[Olive\] what time is it\?/);
    assert.doesNotMatch(last, /@chatty/);
    const messages = okData<Array<{ content: string }>>(
      await api.get(`/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=group&chatId=room-1`),
    );
    assert.equal(messages.length, 2);
  });

  it('/stop stops the running turn; a message meanwhile is acknowledged; /clear starts the thread afresh', async () => {
    h.model.enqueue({ steps: [{ text: 'Working on it' }, { hang: true }] });
    const ws = await h.subscribed(threadOf('direct', 'chat-owner'));
    assert.equal((await deliver(instanceId, direct('s-1', 'Write me an essay'))).status, 200);
    await ws.event('agent:message', 15_000);
    assert.equal((await deliver(instanceId, direct('s-2', 'make it short'))).status, 200);
    await callback.until((r) => r.some((x) => x.replyTo === 's-2'), 20_000, 'the acknowledgement');
    assert.equal(callback.replies.find((x) => x.replyTo === 's-2')!.text, 'Got it — I will take this into account.');
    assert.equal((await deliver(instanceId, direct('s-3', '/stop'))).status, 200);
    const error = await ws.event('agent:error', 15_000);
    assert.equal(error.data!.errorType, 'interrupted');
    await callback.until((r) => r.some((x) => x.replyTo === 's-3'), 20_000, 'the stop answer');
    assert.equal(callback.replies.find((x) => x.replyTo === 's-3')!.text, 'Stopped.');
    ws.close();
    assert.equal((await deliver(instanceId, direct('s-4', '/clear'))).status, 200);
    await callback.until((r) => r.some((x) => x.replyTo === 's-4'), 20_000, 'the clear answer');
    const messages = okData<unknown[]>(
      await api.get(`/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=direct&chatId=chat-owner`),
    );
    assert.deepEqual(messages, []);
  });

  it('a guest chats without tools that write or run; under "deny" a guest gets a refusal and no turn', async () => {
    h.model.enqueue(textReply('Hello guest.'));
    assert.equal((await deliver(instanceId, direct('guest-1', 'Who are you?', 'u-guest', 'chat-guest'))).status, 200);
    await callback.until((r) => r.some((x) => x.replyTo === 'guest-1'), 20_000, 'the guest reply');
    const tools = (h.model.requests.at(-1)!.body as { tools?: Array<{ name: string }> }).tools ?? [];
    const names = tools.map((t) => t.name);
    for (const forbidden of ['Write', 'Edit', 'Bash', 'AskUserQuestion'])
      assert.ok(!names.includes(forbidden), names.join());
    assert.ok(names.includes('Read'));
    okData(await api.patch(`/api/im-channels/instances/${instanceId}`, { guestPolicy: 'deny' }));
    const before = h.model.requests.length;
    assert.equal((await deliver(instanceId, direct('guest-2', 'Hello?', 'u-guest', 'chat-guest'))).status, 200);
    await callback.until((r) => r.some((x) => x.replyTo === 'guest-2'), 20_000, 'the refusal');
    assert.equal(callback.replies.find((x) => x.replyTo === 'guest-2')!.text, 'Sorry, I only answer my owners here.');
    await sleep(500);
    assert.equal(h.model.requests.length, before);
    okData(await api.patch(`/api/im-channels/instances/${instanceId}`, { guestPolicy: 'chat-only' }));
  });

  it('a long reply is split to the limit and sent in order; a callback that is down is retried', async () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(60).trim()}.`);
    const long = paragraphs.join('\n\n');
    h.model.enqueue(textReply(long, { chunks: 20 }));
    callback.failNext = 2;
    assert.equal((await deliver(instanceId, direct('long-1', 'Tell me everything'))).status, 200);
    await callback.until(
      (r) =>
        r
          .filter((x) => x.replyTo === 'long-1')
          .map((x) => x.text)
          .join('\n\n').length >= long.length,
      30_000,
      'every part',
    );
    const parts = callback.replies.filter((x) => x.replyTo === 'long-1');
    assert.ok(parts.length >= 3, `parts: ${parts.length}`);
    for (const p of parts) assert.ok(p.text.length <= 4000);
    assert.equal(parts.map((p) => p.text).join('\n\n'), long);
    // Each part has its own delivery id, the reply's key and the part's index: a resend keeps it.
    const ids = parts.map((p) => p.deliveryId ?? '');
    assert.deepEqual(
      ids.map((id) => id.split(':').at(-1)),
      parts.map((_, i) => String(i)),
      JSON.stringify(ids),
    );
    assert.equal(new Set(ids.map((id) => id.replace(/:\d+$/, ''))).size, 1, 'one reply key for all parts');
    const status = okData<Array<{ state: string }>>(await api.get(`/api/im-channels/status?instanceId=${instanceId}`));
    assert.equal(status[0]!.state, 'online');
  });

  it('a turn that fails tells the chat what it had written and why, once', async () => {
    h.model.enqueue({
      steps: [
        { text: 'Half an ans' },
        { streamError: { type: 'invalid_request_error', message: 'the model fell over' } },
      ],
    });
    const failed = event(
      'agent:error',
      (f) => f.data?.conversationId === threadOf('direct', 'chat-owner') && /fell over/.test(String(f.data?.error)),
    );
    assert.equal((await deliver(instanceId, direct('fail-1', 'Answer this'))).status, 200);
    const error = (await failed).data!.error as string;
    await callback.until((r) => r.some((x) => x.replyTo === 'fail-1'), 15_000, 'the failure notice');
    await sleep(500);
    const notices = callback.replies.filter((x) => x.replyTo === 'fail-1');
    assert.deepEqual(
      notices.map((x) => x.text),
      [`Half an ans\n\n(${error})`],
    );
  });

  it("pushes a run's result once to each thread marked proactive; im-sessions set and remove", async () => {
    const key = { appId, instanceId, chatId: 'chat-owner' };
    assert.equal(
      (await api.post('/api/im-sessions/set-proactive', { ...key, chatId: 'nobody', proactive: true })).status,
      404,
    );
    okData(await api.post('/api/im-sessions/set-proactive', { ...key, proactive: true }));
    okData(await api.post('/api/im-sessions/set-custom-name', { ...key, name: 'Owner chat' }));
    const report = (input: Record<string, unknown>) => ({ steps: [{ toolCall: { name: 'report_to_user', input } }] });
    h.model.enqueue(
      report({ type: 'output', summary: 'Prices dropped 10%' }),
      report({ type: 'complete', summary: 'Done checking' }),
      textReply('Done.'),
    );
    const before = callback.of('chat-owner').length;
    okData(await api.post(`/api/apps/${appId}/trigger`));
    await callback.until((r) => r.some((x) => x.text === 'Prices dropped 10%'), 30_000, 'the push');
    await waitFor(async () => {
      const state = okData<{ runningCount: number }>(await api.get(`/api/apps/${appId}/state`));
      return state.runningCount === 0;
    }, 20_000);
    await sleep(1000);
    const pushed = callback.of('chat-owner').slice(before);
    assert.deepEqual(
      pushed.map((r) => [r.replyTo, r.text]),
      [[null, 'Prices dropped 10%']],
      'once per run',
    );
    assert.equal(callback.of('chat-guest').length, 2, 'threads not marked proactive get nothing');
    const sessions = okData<Array<{ chatId: string; customName: string | null; proactive: boolean }>>(
      await api.get(`/api/im-sessions?appId=${appId}`),
    );
    const owner = sessions.find((s) => s.chatId === 'chat-owner')!;
    assert.deepEqual([owner.customName, owner.proactive], ['Owner chat', true]);
    okData(await api.post('/api/im-sessions/remove', { appId, instanceId, chatId: 'chat-guest' }));
    const left = okData<Array<{ chatId: string }>>(await api.get(`/api/im-sessions?appId=${appId}`));
    assert.ok(!left.some((s) => s.chatId === 'chat-guest'));
  });

  it('a callback address on loopback is refused unless SVC_CHANNEL_ALLOW names it; delete removes the instance', async () => {
    // This server allows 127.0.0.1 only; 127.0.0.2 (loopback too) is refused and the instance goes offline.
    const blocked = okData<{ id: string }>(
      await api.post('/api/im-channels/instances', {
        type: 'webhook',
        name: 'Blocked',
        appId,
        config: { secret: SECRET, callbackUrl: callback.url.replace('127.0.0.1', '127.0.0.2') },
      }),
    );
    h.model.enqueue(textReply('You will not see this.'));
    const offline = event(
      'im-channels:instance-updated',
      (f) => f.data!.instanceId === blocked.id && (f.data!.instance as { state?: string } | null)?.state === 'offline',
      30_000,
    );
    assert.equal((await deliver(blocked.id, direct('b-1', 'hello', 'u-b', 'chat-b'))).status, 200);
    const e = await offline;
    assert.match((e.data!.instance as { reason: string }).reason, /blocked by the channel policy/);
    assert.equal(callback.of('chat-b').length, 0);
    okData(await api.delete(`/api/im-channels/instances/${blocked.id}`));
    assert.equal((await deliver(blocked.id, direct('b-2', 'hello', 'u-b', 'chat-b'))).status, 404);
  });
});
