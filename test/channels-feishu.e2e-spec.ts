import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgentHarness } from '#testing/agent-harness.js';
import { FakeFeishuServer, type FeishuMessageOptions } from '#testing/fake-feishu-server.js';
import { textReply } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { sleep, waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

const APP_ID = 'cli_a5fake0000000001';
const APP_SECRET = 'feishu-app-s3cret-0001';
const VERIFICATION_TOKEN = 'v3rificationTokenFake01';
const ENCRYPT_KEY = 'encryptKeyFake-0001';

const spec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: 'Answers on Feishu.',
  type: 'automation',
  system_prompt: 'You help the user from Feishu.',
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
});

/** The Feishu/Lark channel against a loopback Feishu of our own (event callbacks, Open API). */
describe(`message channels: Feishu (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let feishu: FakeFeishuServer;
  let events: WsTestClient;
  let appId: string;
  let instanceId: string;
  let hook: string;
  const alice = 'ou_alice000000000000000000000001';
  const bob = 'ou_bob00000000000000000000000001';
  const aliceDm = 'oc_alicedm0000000000000000000001';
  const bobDm = 'oc_bobdm000000000000000000000001';
  const room = 'oc_room00000000000000000000000001';
  const event = (channel: string, match: (f: Frame) => boolean, timeoutMs = 20_000) =>
    events.next((f) => f.type === 'event' && f.channel === channel && match(f), timeoutMs);
  /** An instance, by its name, reaching a state. */
  const named = (name: string, state: string) => (f: Frame) => {
    const i = f.data!.instance as { name?: string; state?: string } | null;
    return i?.name === name && i.state === state;
  };
  const requestsWith = (text: string) =>
    h.model.requests.filter((r) => JSON.stringify(r.body.messages?.at(-1) ?? '').includes(text));
  const send = (o: FeishuMessageOptions) => feishu.deliver(hook, feishu.message(o, VERIFICATION_TOKEN));
  const dm = (text: string, from = alice, chatId = aliceDm) => send({ chatId, chatType: 'p2p', from, text });
  const threadOf = (chatType: string, chatId: string) => `app-chat:${appId}:feishu:${chatType}:${chatId}`;

  before(async () => {
    feishu = await FakeFeishuServer.start(APP_ID, APP_SECRET);
    feishu.users.set(alice, 'Alice Liddell');
    feishu.chatNames.set(room, 'Team room');
    await h.start({ SVC_CHANNEL_ALLOW: '127.0.0.1' });
    events = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    const spaceId = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Feishu' })).id;
    appId = okData<{ appId: string }>(await api.post('/api/apps/install', { spec: spec('Chatty'), spaceId })).appId;
  });
  after(async () => {
    events?.close();
    await h.stop();
    await feishu?.close();
  });
  beforeEach(() => h.model.reset());

  it("is listed with its fields; a wrong app secret: offline with Feishu's reason, and no retry storm", async () => {
    const providers = okData<
      Array<{ type: string; displayName: string; configFields: Array<{ key: string; type: string }> }>
    >(await api.get('/api/im-channels/providers'));
    const provider = providers.find((p) => p.type === 'feishu');
    assert.ok(provider);
    assert.equal(provider.displayName, 'Feishu / Lark');
    assert.deepEqual(
      provider.configFields.map((f) => [f.key, f.type]),
      [
        ['appId', 'string'],
        ['appSecret', 'secret'],
        ['verificationToken', 'secret'],
        ['encryptKey', 'secret'],
        ['baseUrl', 'url'],
      ],
    );
    const noToken = await api.post('/api/im-channels/instances', {
      type: 'feishu',
      name: 'x',
      appId,
      config: { appId: APP_ID, appSecret: APP_SECRET },
    });
    assert.deepEqual([noToken.status, noToken.body.error], [400, 'config.verificationToken is required']);
    const offline = event('im-channels:instance-updated', named('Wrong secret', 'offline'));
    const bad = okData<{ id: string; config: Record<string, unknown> }>(
      await api.post('/api/im-channels/instances', {
        type: 'feishu',
        name: 'Wrong secret',
        appId,
        config: {
          appId: APP_ID,
          appSecret: 'not-the-secret',
          verificationToken: VERIFICATION_TOKEN,
          baseUrl: feishu.baseUrl,
        },
      }),
    );
    assert.deepEqual(bad.config, {
      appId: APP_ID,
      appSecret: '***',
      verificationToken: '***',
      baseUrl: feishu.baseUrl,
    });
    const e = await offline;
    assert.equal(e.data!.instanceId, bad.id);
    assert.equal(
      (e.data!.instance as { reason: string }).reason,
      'Feishu tenant_access_token: 10014 app secret invalid',
    );
    assert.doesNotMatch(JSON.stringify(e.data), /not-the-secret|v3rification/);
    const calls = feishu.count('token');
    await sleep(3000);
    assert.equal(feishu.count('token'), calls, 'no retry until the instance is changed or reconnected');
    const [status] = okData<Array<{ state: string; connected: boolean; reason: string }>>(
      await api.get(`/api/im-channels/status?instanceId=${bad.id}`),
    );
    assert.deepEqual(
      [status!.state, status!.connected, status!.reason],
      ['offline', false, 'Feishu tenant_access_token: 10014 app secret invalid'],
    );
    okData(await api.delete(`/api/im-channels/instances/${bad.id}`));
  });

  it('online once the credentials hold; the URL challenge answered; a wrong verification token is 401', async () => {
    const online = event('im-channels:instance-updated', named('Chatty on Feishu', 'online'));
    instanceId = okData<{ id: string }>(
      await api.post('/api/im-channels/instances', {
        type: 'feishu',
        name: 'Chatty on Feishu',
        appId,
        config: {
          appId: APP_ID,
          appSecret: APP_SECRET,
          verificationToken: VERIFICATION_TOKEN,
          baseUrl: feishu.baseUrl,
        },
      }),
    ).id;
    await online;
    hook = `${h.server.url}/hooks/channels/${instanceId}`;
    assert.deepEqual(await feishu.deliver(hook, feishu.challenge(VERIFICATION_TOKEN)), {
      status: 200,
      body: { challenge: 'ajls384kdjx98XX' },
    });
    assert.deepEqual(await feishu.deliver(hook, feishu.challenge('wrong-token')), {
      status: 401,
      body: { success: false, error: 'Invalid Feishu verification token' },
    });
    const forged = feishu.message(
      { chatId: aliceDm, chatType: 'p2p', from: alice, text: 'forged hello' },
      'wrong-token',
    );
    assert.deepEqual(await feishu.deliver(hook, forged), {
      status: 401,
      body: { success: false, error: 'Invalid Feishu verification token' },
    });
    // An encrypted body for an instance without an Encrypt Key is refused too.
    const encrypted = await feishu.deliver(
      hook,
      feishu.message({ chatId: aliceDm, chatType: 'p2p', from: alice, text: 'x' }, VERIFICATION_TOKEN),
      {
        encryptKey: ENCRYPT_KEY,
      },
    );
    assert.deepEqual(encrypted, {
      status: 401,
      body: { success: false, error: 'Feishu event is encrypted but the instance has no Encrypt Key' },
    });
    await sleep(500);
    assert.equal(h.model.requests.length, 0, 'nothing started');
    assert.equal(feishu.sent.length, 0);
  });

  it('a direct (p2p) message delivered three times is one turn, answered by a reply; the sender becomes owner', async () => {
    h.model.enqueue(textReply('Hi Alice!'));
    const payload = feishu.message(
      { chatId: aliceDm, chatType: 'p2p', from: alice, text: 'Hello bot' },
      VERIFICATION_TOKEN,
    );
    const messageId = (payload.event as { message: { message_id: string } }).message.message_id;
    for (let i = 0; i < 3; i++) {
      const res = await feishu.deliver(hook, payload);
      assert.deepEqual(res, { status: 200, body: { ok: true, received: true } });
    }
    await feishu.until(() => feishu.sentTo(aliceDm).length >= 1, 20_000, 'the reply');
    await sleep(1500);
    assert.deepEqual(
      feishu.sentTo(aliceDm).map((s) => [s.kind, s.replyTo, s.text]),
      [['reply', messageId, 'Hi Alice!']],
    );
    assert.equal(requestsWith('Hello bot').length, 1, 'one turn');
    const instance = okData<Array<{ id: string; owners: string[] }>>(await api.get('/api/im-channels/instances')).find(
      (i) => i.id === instanceId,
    )!;
    assert.deepEqual(instance.owners, [alice]);
    const sessions = okData<Array<{ chatId: string; chatType: string; channel: string; displayName: string }>>(
      await api.get(`/api/im-sessions?appId=${appId}`),
    );
    assert.deepEqual(
      sessions.map((s) => [s.channel, s.chatType, s.chatId, s.displayName]),
      [['feishu', 'direct', aliceDm, 'Alice Liddell']],
    );
    const messages = okData<Array<{ role: string; content: string }>>(
      await api.get(`/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=direct&chatId=${aliceDm}`),
    );
    assert.deepEqual(
      messages.map((m) => [m.role, m.content]),
      [
        ['user', 'Hello bot'],
        ['assistant', 'Hi Alice!'],
      ],
    );
  });

  it('in a group only an @mention of the bot counts, and it is stripped', async () => {
    h.model.enqueue(textReply('Group hello.'));
    assert.equal((await send({ chatId: room, chatType: 'group', from: bob, text: 'nobody asked' })).status, 200);
    const asked = feishu.message(
      { chatId: room, chatType: 'group', from: alice, text: 'what is new?', mentionBot: true },
      VERIFICATION_TOKEN,
    );
    const messageId = (asked.event as { message: { message_id: string } }).message.message_id;
    assert.equal((await feishu.deliver(hook, asked)).status, 200);
    await feishu.until(() => feishu.sentTo(room).length >= 1, 20_000, 'the group reply');
    await sleep(1000);
    assert.deepEqual(
      feishu.sentTo(room).map((s) => [s.kind, s.replyTo, s.text]),
      [['reply', messageId, 'Group hello.']],
    );
    assert.equal(requestsWith('nobody asked').length, 0);
    assert.equal(requestsWith('what is new?').length, 1);
    const last = JSON.stringify(h.model.requests.at(-1)!.body.messages!.at(-1));
    assert.match(last, /\[Alice Liddell\] what is new\?/);
    assert.doesNotMatch(last, /@_user_1/);
    const sessions = okData<Array<{ chatId: string; chatType: string; displayName: string }>>(
      await api.get(`/api/im-sessions?appId=${appId}`),
    );
    assert.deepEqual(
      sessions.filter((s) => s.chatId === room).map((s) => [s.chatType, s.displayName]),
      [['group', 'Team room']],
    );
  });

  it('/stop stops the running turn; /clear starts the thread afresh', async () => {
    h.model.enqueue({ steps: [{ text: 'Working on it' }, { hang: true }] });
    const ws = await h.subscribed(threadOf('direct', aliceDm));
    await dm('Write me an essay');
    await ws.event('agent:message', 15_000);
    await dm('/stop');
    const error = await ws.event('agent:error', 15_000);
    assert.equal(error.data!.errorType, 'interrupted');
    await feishu.until(() => feishu.sentTo(aliceDm).some((s) => s.text === 'Stopped.'), 20_000, 'the stop answer');
    ws.close();
    await dm('/clear');
    await feishu.until(
      () => feishu.sentTo(aliceDm).some((s) => s.text.startsWith('Cleared.')),
      20_000,
      'the clear answer',
    );
    const messages = okData<unknown[]>(
      await api.get(`/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=direct&chatId=${aliceDm}`),
    );
    assert.deepEqual(messages, []);
  });

  it('a guest chats without tools that write or run; under "deny" a guest gets a refusal and no turn', async () => {
    h.model.enqueue(textReply('Hello guest.'));
    await dm('Who are you?', bob, bobDm);
    await feishu.until(() => feishu.sentTo(bobDm).length >= 1, 20_000, 'the guest reply');
    const tools = (h.model.requests.at(-1)!.body as { tools?: Array<{ name: string }> }).tools ?? [];
    const names = tools.map((t) => t.name);
    for (const forbidden of ['Write', 'Edit', 'Bash']) assert.ok(!names.includes(forbidden), names.join());
    assert.ok(names.includes('Read'));
    okData(await api.patch(`/api/im-channels/instances/${instanceId}`, { guestPolicy: 'deny' }));
    const before = h.model.requests.length;
    await dm('Hello?', bob, bobDm);
    await feishu.until(() => feishu.sentTo(bobDm).length >= 2, 20_000, 'the refusal');
    assert.equal(feishu.sentTo(bobDm)[1]!.text, 'Sorry, I only answer my owners here.');
    await sleep(500);
    assert.equal(h.model.requests.length, before);
    okData(await api.patch(`/api/im-channels/instances/${instanceId}`, { guestPolicy: 'chat-only' }));
  });

  it('a long reply is split at 10,000 characters and sent in order while Feishu fails twice; a stale token is renewed', async () => {
    const long = Array.from({ length: 250 }, (_, i) => `Line ${i}: ${'lorem ipsum '.repeat(8).trim()}`).join('\n');
    assert.ok(long.length > 20_000);
    h.model.enqueue(textReply(long, { chunks: 10 }));
    const before = feishu.sentTo(aliceDm).length;
    const tokens = feishu.count('token');
    feishu.failSends = 2;
    feishu.revokeTokens();
    await dm('Tell me a long story');
    await feishu.until(
      () =>
        feishu
          .sentTo(aliceDm)
          .slice(before)
          .map((s) => s.text)
          .join('\n').length >= long.length,
      40_000,
      'all parts',
    );
    const parts = feishu.sentTo(aliceDm).slice(before);
    assert.ok(parts.length >= 3, `parts: ${parts.length}`);
    for (const p of parts) assert.ok(p.text.length <= 10_000);
    assert.equal(parts.map((p) => p.text).join('\n'), long);
    assert.ok(feishu.count('token') > tokens, 'a fresh tenant_access_token after 99991663');
  });

  it("pushes a run's result once to a thread marked proactive, as a new message in the chat", async () => {
    okData(await api.post('/api/im-sessions/set-proactive', { appId, instanceId, chatId: aliceDm, proactive: true }));
    const report = (input: Record<string, unknown>) => ({ steps: [{ toolCall: { name: 'report_to_user', input } }] });
    h.model.enqueue(
      report({ type: 'output', summary: 'Prices dropped 10%' }),
      report({ type: 'complete', summary: 'Done checking' }),
      textReply('Done.'),
    );
    const before = feishu.sentTo(aliceDm).length;
    okData(await api.post(`/api/apps/${appId}/trigger`));
    await feishu.until(() => feishu.sent.some((s) => s.text === 'Prices dropped 10%'), 30_000, 'the push');
    await waitFor(async () => {
      const state = okData<{ runningCount: number }>(await api.get(`/api/apps/${appId}/state`));
      return state.runningCount === 0;
    }, 20_000);
    await sleep(1000);
    assert.deepEqual(
      feishu
        .sentTo(aliceDm)
        .slice(before)
        .map((s) => [s.kind, s.text]),
      [['send', 'Prices dropped 10%']],
      'once per run',
    );
    assert.ok(!feishu.sentTo(room).some((s) => s.text === 'Prices dropped 10%'), 'not proactive: nothing');
    okData(await api.post('/api/im-sessions/set-proactive', { appId, instanceId, chatId: aliceDm, proactive: false }));
  });

  it('with an Encrypt Key: the encrypted challenge answered, X-Lark-Signature checked, events decrypted', async () => {
    const online = event('im-channels:instance-updated', named('Encrypted Chatty', 'online'));
    const created = okData<{ id: string; config: Record<string, unknown> }>(
      await api.post('/api/im-channels/instances', {
        type: 'feishu',
        name: 'Encrypted Chatty',
        appId,
        config: {
          appId: APP_ID,
          appSecret: APP_SECRET,
          verificationToken: VERIFICATION_TOKEN,
          encryptKey: ENCRYPT_KEY,
          baseUrl: feishu.baseUrl,
        },
      }),
    );
    assert.equal(created.config.encryptKey, '***');
    await online;
    const encHook = `${h.server.url}/hooks/channels/${created.id}`;
    const secretDm = 'oc_secretdm00000000000000000001';
    assert.deepEqual(
      await feishu.deliver(encHook, feishu.challenge(VERIFICATION_TOKEN, 'enc-challenge-1'), {
        encryptKey: ENCRYPT_KEY,
        unsigned: true,
      }),
      { status: 200, body: { challenge: 'enc-challenge-1' } },
    );
    const payload = feishu.message(
      { chatId: secretDm, chatType: 'p2p', from: alice, text: 'sealed hello' },
      VERIFICATION_TOKEN,
    );
    assert.deepEqual(await feishu.deliver(encHook, payload, { encryptKey: ENCRYPT_KEY, signature: 'ab'.repeat(32) }), {
      status: 401,
      body: { success: false, error: 'Invalid Feishu request signature' },
    });
    assert.equal((await feishu.deliver(encHook, payload, { encryptKey: ENCRYPT_KEY, unsigned: true })).status, 401);
    assert.deepEqual(await feishu.deliver(encHook, payload), {
      status: 401,
      body: { success: false, error: 'Invalid Feishu request signature (X-Lark-Signature missing)' },
    });
    // Signed with the right key but encrypted with another: refused.
    assert.equal((await feishu.deliver(encHook, payload, { encryptKey: 'another-key' })).status, 401);
    await sleep(500);
    assert.equal(requestsWith('sealed hello').length, 0, 'nothing started');
    h.model.enqueue(textReply('Sealed reply.'));
    assert.deepEqual(await feishu.deliver(encHook, payload, { encryptKey: ENCRYPT_KEY }), {
      status: 200,
      body: { ok: true, received: true },
    });
    await feishu.until(() => feishu.sentTo(secretDm).length >= 1, 20_000, 'the reply');
    assert.deepEqual(
      feishu.sentTo(secretDm).map((s) => s.text),
      ['Sealed reply.'],
    );
    assert.equal(requestsWith('sealed hello').length, 1);
    okData(await api.delete(`/api/im-channels/instances/${created.id}`));
  });
});
