import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgentHarness } from '#testing/agent-harness.js';
import { FakeSlackServer, type MessageOptions } from '#testing/fake-slack-server.js';
import { textReply } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { sleep, waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

const BOT_TOKEN = 'xoxb-1111-2222-fakeBotToken';
const APP_TOKEN = 'xapp-1-A0APP0001-3333-fakeAppToken';
const SIGNING_SECRET = 'slack-signing-s3cret';

const spec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: 'Answers on Slack.',
  type: 'automation',
  system_prompt: 'You help the user from Slack.',
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
});

/** The Slack channel against a loopback Slack of our own (Web API, Events API, Socket Mode). */
describe(`message channels: Slack (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let slack: FakeSlackServer;
  let events: WsTestClient;
  let appId: string;
  let instanceId: string;
  let hook: string;
  const alice = 'U0ALICE01';
  const bob = 'U0BOB0001';
  const aliceDm = 'D0ALICE01';
  const bobDm = 'D0BOB0001';
  const room = 'C0ROOM001';
  const event = (channel: string, match: (f: Frame) => boolean, timeoutMs = 20_000) =>
    events.next((f) => f.type === 'event' && f.channel === channel && match(f), timeoutMs);
  const stateIs = (id: string, state: string) => (f: Frame) =>
    f.data!.instanceId === id && (f.data!.instance as { state?: string } | null)?.state === state;
  /** An instance, by its name, reaching a state. */
  const named = (name: string, state: string) => (f: Frame) => {
    const i = f.data!.instance as { name?: string; state?: string } | null;
    return i?.name === name && i.state === state;
  };
  const requestsWith = (text: string) =>
    h.model.requests.filter((r) => JSON.stringify(r.body.messages?.at(-1) ?? '').includes(text));
  const send = (o: MessageOptions) => slack.deliver(hook, SIGNING_SECRET, slack.event(o));
  const dm = (text: string, user = alice, channel = aliceDm) => send({ channel, channelType: 'im', user, text });
  const threadOf = (chatType: string, chatId: string) => `app-chat:${appId}:slack:${chatType}:${chatId}`;

  before(async () => {
    slack = await FakeSlackServer.start(BOT_TOKEN, APP_TOKEN);
    slack.users.set(alice, { id: alice, name: 'alice', real_name: 'Alice Liddell' });
    slack.users.set(bob, { id: bob, name: 'bob' });
    slack.channels.set(room, 'team-room');
    await h.start({ SVC_CHANNEL_ALLOW: '127.0.0.1' });
    events = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    const spaceId = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Slack' })).id;
    appId = okData<{ appId: string }>(await api.post('/api/apps/install', { spec: spec('Chatty'), spaceId })).appId;
  });
  after(async () => {
    events?.close();
    await h.stop();
    await slack?.close();
  });
  beforeEach(() => h.model.reset());

  it('is listed with its fields; a token Slack rejects: offline with its reason, and no retry storm', async () => {
    const providers = okData<Array<{ type: string; configFields: Array<{ key: string; type: string }> }>>(
      await api.get('/api/im-channels/providers'),
    );
    const provider = providers.find((p) => p.type === 'slack');
    assert.ok(provider);
    assert.deepEqual(
      provider.configFields.map((f) => [f.key, f.type]),
      [
        ['botToken', 'secret'],
        ['mode', 'string'],
        ['signingSecret', 'secret'],
        ['appToken', 'secret'],
        ['apiRoot', 'url'],
      ],
    );
    const noSecret = await api.post('/api/im-channels/instances', {
      type: 'slack',
      name: 'x',
      appId,
      config: { botToken: BOT_TOKEN },
    });
    assert.deepEqual(
      [noSecret.status, noSecret.body.error],
      [400, 'config.signingSecret is required for the Events API (mode "events")'],
    );
    const offline = event('im-channels:instance-updated', named('Wrong token', 'offline'));
    const bad = okData<{ id: string; config: Record<string, unknown> }>(
      await api.post('/api/im-channels/instances', {
        type: 'slack',
        name: 'Wrong token',
        appId,
        config: { botToken: 'xoxb-0000-wrong', signingSecret: SIGNING_SECRET, apiRoot: slack.apiRoot },
      }),
    );
    assert.deepEqual(bad.config, {
      mode: 'events',
      botToken: '***',
      signingSecret: '***',
      apiRoot: slack.apiRoot,
    });
    const e = await offline;
    assert.equal(e.data!.instanceId, bad.id);
    assert.equal((e.data!.instance as { reason: string }).reason, 'Slack auth.test: invalid_auth');
    assert.doesNotMatch(JSON.stringify(e.data), /xoxb-0000-wrong|slack-signing/);
    const calls = slack.count('auth.test');
    await sleep(3000);
    assert.equal(slack.count('auth.test'), calls, 'no retry until the instance is changed or reconnected');
    const [status] = okData<Array<{ state: string; connected: boolean; reason: string }>>(
      await api.get(`/api/im-channels/status?instanceId=${bad.id}`),
    );
    assert.deepEqual(
      [status!.state, status!.connected, status!.reason],
      ['offline', false, 'Slack auth.test: invalid_auth'],
    );
    okData(await api.delete(`/api/im-channels/instances/${bad.id}`));
  });

  it('Events API: online after auth.test; the URL challenge answered; a bad signature or old timestamp is 401', async () => {
    const online = event('im-channels:instance-updated', named('Chatty on Slack', 'online'));
    instanceId = okData<{ id: string }>(
      await api.post('/api/im-channels/instances', {
        type: 'slack',
        name: 'Chatty on Slack',
        appId,
        config: { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiRoot: slack.apiRoot },
      }),
    ).id;
    await online;
    hook = `${h.server.url}/hooks/channels/${instanceId}`;
    const challenge = await slack.deliver(hook, SIGNING_SECRET, {
      token: 'deprecated-verification-token',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    });
    assert.deepEqual(challenge, {
      status: 200,
      body: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' },
    });
    const body = slack.event({ channel: aliceDm, channelType: 'im', user: alice, text: 'forged hello' });
    const wrong = await slack.deliver(hook, 'not-the-secret', body);
    assert.deepEqual(wrong, { status: 401, body: { success: false, error: 'Invalid Slack request signature' } });
    const old = await slack.deliver(hook, SIGNING_SECRET, body, { timestamp: Math.floor(Date.now() / 1000) - 360 });
    assert.deepEqual(old, { status: 401, body: { success: false, error: 'Slack request timestamp is too old' } });
    const unsigned = await fetch(hook, { method: 'POST', body: JSON.stringify(body) });
    assert.equal(unsigned.status, 401);
    await sleep(500);
    assert.equal(h.model.requests.length, 0, 'nothing started');
    assert.equal(slack.posted.length, 0);
  });

  it('a direct message delivered three times (Slack retries) is one turn; the sender becomes owner', async () => {
    h.model.enqueue(textReply('Hi Alice!'));
    const payload = slack.event({ channel: aliceDm, channelType: 'im', user: alice, text: 'Hello bot &amp; friends' });
    for (const retryNum of [undefined, 1, 2]) {
      const res = await slack.deliver(hook, SIGNING_SECRET, payload, retryNum === undefined ? {} : { retryNum });
      assert.equal(res.status, 200);
    }
    await slack.until(() => slack.postedTo(aliceDm).length >= 1, 20_000, 'the reply');
    await sleep(1500);
    assert.deepEqual(
      slack.postedTo(aliceDm).map((p) => [p.text, p.thread_ts]),
      [['Hi Alice!', undefined]],
    );
    assert.equal(requestsWith('Hello bot & friends').length, 1, 'one turn, entities decoded');
    const instance = okData<Array<{ id: string; owners: string[] }>>(await api.get('/api/im-channels/instances')).find(
      (i) => i.id === instanceId,
    )!;
    assert.deepEqual(instance.owners, [alice]);
    const sessions = okData<Array<{ chatId: string; chatType: string; channel: string; displayName: string }>>(
      await api.get(`/api/im-sessions?appId=${appId}`),
    );
    assert.deepEqual(
      sessions.map((s) => [s.channel, s.chatType, s.chatId, s.displayName]),
      [['slack', 'direct', aliceDm, 'Alice Liddell']],
    );
    const messages = okData<Array<{ role: string; content: string }>>(
      await api.get(`/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=direct&chatId=${aliceDm}`),
    );
    assert.deepEqual(
      messages.map((m) => [m.role, m.content]),
      [
        ['user', 'Hello bot & friends'],
        ['assistant', 'Hi Alice!'],
      ],
    );
  });

  it('in a channel: only a mention counts, stripped; app_mention and its twin message are one turn; the reply is threaded', async () => {
    h.model.enqueue(textReply('Channel hello.'));
    assert.equal((await send({ channel: room, channelType: 'channel', user: bob, text: 'nobody asked' })).status, 200);
    const ts = slack.ts();
    const asked = {
      channel: room,
      channelType: 'channel' as const,
      user: alice,
      ts,
      text: `<@${slack.bot.userId}> what is new?`,
    };
    assert.equal((await send({ ...asked, type: 'app_mention' })).status, 200);
    assert.equal((await send({ ...asked, type: 'message' })).status, 200);
    await slack.until(() => slack.postedTo(room).length >= 1, 20_000, 'the channel reply');
    await sleep(1000);
    assert.deepEqual(
      slack.postedTo(room).map((p) => [p.text, p.thread_ts]),
      [['Channel hello.', ts]],
    );
    assert.equal(requestsWith('nobody asked').length, 0);
    assert.equal(requestsWith('what is new?').length, 1);
    const last = JSON.stringify(h.model.requests.at(-1)!.body.messages!.at(-1));
    assert.match(last, /\[Alice Liddell\] what is new\?/);
    assert.doesNotMatch(last, /<@U0BOT/);
    const sessions = okData<Array<{ chatId: string; chatType: string; displayName: string }>>(
      await api.get(`/api/im-sessions?appId=${appId}`),
    );
    assert.deepEqual(
      sessions.filter((s) => s.chatId === room).map((s) => [s.chatType, s.displayName]),
      [['group', '#team-room']],
    );
    // A reply inside a Slack thread stays in that thread.
    h.model.enqueue(textReply('In the thread.'));
    await send({
      channel: room,
      channelType: 'channel',
      user: alice,
      threadTs: ts,
      text: `<@${slack.bot.userId}> and more?`,
    });
    await slack.until(() => slack.postedTo(room).length >= 2, 20_000, 'the thread reply');
    assert.deepEqual(slack.postedTo(room).map((p) => [p.text, p.thread_ts])[1], ['In the thread.', ts]);
  });

  it('/stop stops the running turn; /clear starts the thread afresh', async () => {
    h.model.enqueue({ steps: [{ text: 'Working on it' }, { hang: true }] });
    const ws = await h.subscribed(threadOf('direct', aliceDm));
    const before = slack.postedTo(aliceDm).length;
    await dm('Write me an essay');
    await ws.event('agent:message', 15_000);
    await dm('/stop');
    const error = await ws.event('agent:error', 15_000);
    assert.equal(error.data!.errorType, 'interrupted');
    await slack.until(() => slack.postedTo(aliceDm).some((p) => p.text === 'Stopped.'), 20_000, 'the stop answer');
    ws.close();
    await dm('/clear');
    await slack.until(
      () => slack.postedTo(aliceDm).some((p) => p.text.startsWith('Cleared.')),
      20_000,
      'the clear answer',
    );
    assert.ok(slack.postedTo(aliceDm).length > before);
    const messages = okData<unknown[]>(
      await api.get(`/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=direct&chatId=${aliceDm}`),
    );
    assert.deepEqual(messages, []);
  });

  it('a guest chats without tools that write or run; under "deny" a guest gets a refusal and no turn', async () => {
    h.model.enqueue(textReply('Hello guest.'));
    await dm('Who are you?', bob, bobDm);
    await slack.until(() => slack.postedTo(bobDm).length >= 1, 20_000, 'the guest reply');
    const tools = (h.model.requests.at(-1)!.body as { tools?: Array<{ name: string }> }).tools ?? [];
    const names = tools.map((t) => t.name);
    for (const forbidden of ['Write', 'Edit', 'Bash']) assert.ok(!names.includes(forbidden), names.join());
    assert.ok(names.includes('Read'));
    okData(await api.patch(`/api/im-channels/instances/${instanceId}`, { guestPolicy: 'deny' }));
    const before = h.model.requests.length;
    await dm('Hello?', bob, bobDm);
    await slack.until(() => slack.postedTo(bobDm).length >= 2, 20_000, 'the refusal');
    assert.equal(slack.postedTo(bobDm)[1]!.text, 'Sorry, I only answer my owners here.');
    await sleep(500);
    assert.equal(h.model.requests.length, before);
    okData(await api.patch(`/api/im-channels/instances/${instanceId}`, { guestPolicy: 'chat-only' }));
  });

  it("a long reply is split at Slack's 4,000 characters and sent in order; Slack down is retried", async () => {
    const long = Array.from({ length: 120 }, (_, i) => `Line ${i}: ${'lorem ipsum '.repeat(8).trim()}`).join('\n');
    assert.ok(long.length > 8000);
    h.model.enqueue(textReply(long, { chunks: 10 }));
    const before = slack.postedTo(aliceDm).length;
    slack.failSends = 2;
    await dm('Tell me a long story');
    await slack.until(
      () =>
        slack
          .postedTo(aliceDm)
          .slice(before)
          .map((p) => p.text)
          .join('\n').length >= long.length,
      30_000,
      'all parts',
    );
    const parts = slack.postedTo(aliceDm).slice(before);
    assert.ok(parts.length >= 3, `parts: ${parts.length}`);
    for (const p of parts) assert.ok(p.text.length <= 4000);
    assert.equal(parts.map((p) => p.text).join('\n'), long);
  });

  it("pushes a run's result once to a thread marked proactive, as a top-level message", async () => {
    okData(await api.post('/api/im-sessions/set-proactive', { appId, instanceId, chatId: aliceDm, proactive: true }));
    const report = (input: Record<string, unknown>) => ({ steps: [{ toolCall: { name: 'report_to_user', input } }] });
    h.model.enqueue(
      report({ type: 'output', summary: 'Prices dropped 10%' }),
      report({ type: 'complete', summary: 'Done checking' }),
      textReply('Done.'),
    );
    const before = slack.postedTo(aliceDm).length;
    okData(await api.post(`/api/apps/${appId}/trigger`));
    await slack.until(() => slack.posted.some((p) => p.text === 'Prices dropped 10%'), 30_000, 'the push');
    await waitFor(async () => {
      const state = okData<{ runningCount: number }>(await api.get(`/api/apps/${appId}/state`));
      return state.runningCount === 0;
    }, 20_000);
    await sleep(1000);
    assert.deepEqual(
      slack
        .postedTo(aliceDm)
        .slice(before)
        .map((p) => [p.text, p.thread_ts]),
      [['Prices dropped 10%', undefined]],
      'once per run',
    );
    assert.ok(!slack.postedTo(room).some((p) => p.text === 'Prices dropped 10%'), 'not proactive: nothing');
    okData(await api.post('/api/im-sessions/set-proactive', { appId, instanceId, chatId: aliceDm, proactive: false }));
  });

  it('Socket Mode: hello → online; envelopes acknowledged, a retried one is one turn; a disconnect reconnects', async () => {
    const dmSocket = 'D0SOCKET1';
    const online = event('im-channels:instance-updated', named('Socket Chatty', 'online'));
    const socketId = okData<{ id: string; config: Record<string, unknown> }>(
      await api.post('/api/im-channels/instances', {
        type: 'slack',
        name: 'Socket Chatty',
        appId,
        config: { botToken: BOT_TOKEN, appToken: APP_TOKEN, mode: 'socket', apiRoot: slack.apiRoot },
      }),
    );
    assert.deepEqual(socketId.config, { mode: 'socket', botToken: '***', appToken: '***', apiRoot: slack.apiRoot });
    await online;
    assert.equal(slack.openSockets, 1);
    h.model.enqueue(textReply('Over the socket.'));
    const payload = slack.event({ channel: dmSocket, channelType: 'im', user: alice, text: 'socket hello' });
    const first = slack.socketEvent(payload);
    const retried = slack.socketEvent(payload, 1);
    await slack.until(() => slack.postedTo(dmSocket).length >= 1, 20_000, 'the socket reply');
    await waitFor(async () => slack.acks.includes(first) && slack.acks.includes(retried), 10_000, 'both acknowledged');
    await sleep(1000);
    assert.deepEqual(
      slack.postedTo(dmSocket).map((p) => p.text),
      ['Over the socket.'],
    );
    assert.equal(requestsWith('socket hello').length, 1);
    const opens = slack.count('apps.connections.open');
    slack.disconnectSockets();
    await waitFor(
      async () => slack.count('apps.connections.open') > opens && slack.openSockets === 1,
      20_000,
      'reconnected',
    );
    h.model.enqueue(textReply('Still here.'));
    slack.socketEvent(slack.event({ channel: dmSocket, channelType: 'im', user: alice, text: 'after the refresh' }));
    await slack.until(
      () => slack.postedTo(dmSocket).some((p) => p.text === 'Still here.'),
      20_000,
      'the reply after reconnect',
    );
    // An app token Slack refuses: offline with its reason.
    const offline = event('im-channels:instance-updated', stateIs(socketId.id, 'offline'));
    okData(
      await api.patch(`/api/im-channels/instances/${socketId.id}`, { config: { appToken: 'xapp-1-A0-0-revoked' } }),
    );
    const e = await offline;
    assert.equal((e.data!.instance as { reason: string }).reason, 'Slack apps.connections.open: invalid_auth');
    await waitFor(async () => slack.openSockets === 0, 10_000, 'the old socket closed');
    okData(await api.delete(`/api/im-channels/instances/${socketId.id}`));
  });
});
