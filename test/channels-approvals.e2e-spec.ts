import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import request from 'supertest';
import { AgentHarness } from '#testing/agent-harness.js';
import { ChannelCallbackServer } from '#testing/channel-callback-server.js';
import { FakeTelegramServer, type SentMessage, type TgUpdate } from '#testing/fake-telegram-server.js';
import { textReply } from '#testing/scripted-model-server.js';
import { freePort, testMode } from '#testing/test-env.js';
import { sleep } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

/**
 * Tool approvals answered from a message channel's thread (docs/api/channels.md, "Tool approvals
 * in a thread"): Telegram's inline keyboard against the loopback Bot API, and the generic
 * webhook's reply words.
 */

const TOKEN = '777000:TEST-token_abc';
const SECRET = 'channel-s3cret';
const REFUSAL = 'The user rejected this tool call:';

const spec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: 'Runs commands for its owner.',
  type: 'automation',
  system_prompt: 'You run commands for the user.',
  permissions: ['bash'],
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
});
const bashCall = (id: string, file: string) => ({
  steps: [{ toolCall: { id, name: 'Bash', input: { command: `echo ran >> ${file}` } } }],
});

describe(`tool approvals from a chat thread (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let tg: FakeTelegramServer;
  let callback: ChannelCallbackServer;
  let events: WsTestClient;
  let space: { id: string; path: string };
  let appId: string;
  let tgInstance: string;
  const alice = { id: 501, first_name: 'Alice' };
  const bob = { id: 502, first_name: 'Bob' };
  const aliceChat = { id: 501, type: 'private' as const, first_name: 'Alice' };
  const group = { id: -100300, type: 'supergroup' as const, title: 'Ops room' };

  const held = (conversationId: string, toolId: string) =>
    events.next(
      (f: Frame) =>
        f.type === 'event' &&
        f.channel === 'agent:tool-call' &&
        f.data?.conversationId === conversationId &&
        f.data?.id === toolId &&
        f.data?.requiresApproval === true,
      20_000,
    );
  const pendingOf = async (conversationId: string) =>
    okData<{ pendingApproval: Record<string, unknown> | null }>(
      await api.get(`/api/agent/session/${encodeURIComponent(conversationId)}`),
    ).pendingApproval;
  /** The bot's message to `chatId` that carries buttons, the `n`-th one (0-based). */
  const buttonsMessage = async (chatId: number, n: number): Promise<SentMessage> => {
    await tg.until(() => tg.sentTo(chatId).filter((m) => m.reply_markup).length > n, 20_000, 'the buttons');
    return tg.sentTo(chatId).filter((m) => m.reply_markup)[n]!;
  };
  const answered = (update: TgUpdate) =>
    tg.until(() => tg.answerOf(update) !== undefined, 20_000, 'answerCallbackQuery');
  const file = (name: string) => join(space.path, name);
  const lastRequestHas = (text: string) => JSON.stringify(h.model.requests.at(-1)?.body ?? '').includes(text);

  before(async () => {
    tg = await FakeTelegramServer.start(TOKEN);
    callback = await ChannelCallbackServer.start(SECRET);
    await h.start({ SVC_CHANNEL_ALLOW: '127.0.0.1' });
    events = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    space = okData(await api.post('/api/spaces', { name: 'Approvals from chat' }));
    appId = okData<{ appId: string }>(
      await api.post('/api/apps/install', { spec: spec('Operator'), spaceId: space.id }),
    ).appId;
    // The digital human's own policy: Bash waits for a person.
    okData(await api.patch(`/api/apps/${appId}/overrides`, { approvals: { tools: ['Bash'] } }));
    const online = events.next(
      (f) =>
        f.type === 'event' &&
        f.channel === 'im-channels:instance-updated' &&
        (f.data!.instance as { state?: string } | null)?.state === 'online',
      20_000,
    );
    tgInstance = okData<{ id: string }>(
      await api.post('/api/im-channels/instances', {
        type: 'telegram',
        name: 'Operator bot',
        appId,
        config: { botToken: TOKEN, apiRoot: tg.apiRoot },
      }),
    ).id;
    await online;
  });
  after(async () => {
    events?.close();
    await h.stop();
    await tg?.close();
    await callback?.close();
  });
  beforeEach(() => h.model.reset());

  it("Telegram: the owner's thread gets Approve / Reject; nothing runs until Approve, then once", async () => {
    const thread = `app-chat:${appId}:telegram:direct:501`;
    h.model.enqueue(bashCall('t1', 'tg-approved.txt'), textReply('Done, it ran.'));
    const heldCall = held(thread, 't1');
    await tg.userMessage({ chat: aliceChat, from: alice, text: 'please run it' });
    await heldCall;
    const prompt = await buttonsMessage(501, 0);
    assert.match(prompt.text, /Operator wants to run the tool Bash with:/);
    assert.ok(prompt.text.includes('"command": "echo ran >> tg-approved.txt"'), prompt.text);
    assert.deepEqual(
      prompt.reply_markup!.inline_keyboard.flat().map((b) => b.text),
      ['Approve', 'Reject'],
    );
    assert.ok(tg.allowedUpdates?.includes('callback_query'), 'polling asks for button presses');
    await sleep(300);
    assert.equal(existsSync(file('tg-approved.txt')), false, 'nothing ran before the answer');
    assert.equal(h.model.requests.length, 1, 'the turn waits');

    const press = await tg.press({ from: alice, message: prompt, label: 'Approve' });
    // The same press delivered again (a lost confirmation) is handled once.
    await tg.push({ ...press, update_id: press.update_id + 100 });
    await answered(press);
    assert.equal(tg.answerOf(press)!.text, 'Approved.');
    await tg.until(() => tg.sentTo(501).some((m) => m.text === 'Done, it ran.'), 20_000, 'the reply');
    assert.equal(readFileSync(file('tg-approved.txt'), 'utf8'), 'ran\n', 'ran exactly once');
    const edited = tg.sentTo(501).find((m) => m.message_id === prompt.message_id)!;
    assert.match(edited.text, /Approved by Alice: Bash runs now\.$/);
    assert.equal(edited.reply_markup, undefined, 'the buttons are gone');
    assert.equal(tg.callbackAnswers.filter((a) => a.callback_query_id === press.callback_query!.id).length, 1);

    // Audit: the thought says a channel user decided, and who; the metric counts it.
    const conv = okData<{ messages: Array<{ id: string; role: string }> }>(
      await api.get(`/api/spaces/${space.id}/conversations/${encodeURIComponent(thread)}`),
    );
    const last = conv.messages.filter((m) => m.role === 'assistant').at(-1)!;
    const thoughts = okData<Array<{ toolName?: string; approval?: Record<string, unknown> }>>(
      await api.get(`/api/spaces/${space.id}/conversations/${encodeURIComponent(thread)}/messages/${last.id}/thoughts`),
    );
    const approval = thoughts.find((t) => t.toolName === 'Bash')!.approval!;
    assert.deepEqual(
      [approval.outcome, approval.decidedBy, approval.channelUser],
      ['approved', 'channel', { channel: 'telegram', instanceId: tgInstance, userId: '501', name: 'Alice' }],
    );
    assert.match((await api.get('/metrics')).text, /svc_tool_approvals_total\{[^}]*outcome="approved"[^}]*\} 1/);

    // The button pressed again later: nothing is waiting, nothing runs.
    const stale = await tg.press({ from: alice, message: prompt, data: press.callback_query!.data! });
    await answered(stale);
    assert.equal(tg.answerOf(stale)!.text, 'Nothing is waiting for approval.');
    await sleep(500);
    assert.equal(readFileSync(file('tg-approved.txt'), 'utf8'), 'ran\n');
  });

  it("Telegram in a group: a guest's press is refused; the owner's Reject gives the model the refusal", async () => {
    const thread = `app-chat:${appId}:telegram:group:${group.id}`;
    h.model.enqueue(bashCall('t2', 'tg-rejected.txt'), textReply('Understood, I did not run it.'));
    const heldCall = held(thread, 't2');
    await tg.userMessage({ chat: group, from: alice, text: '@chatty_bot run the cleanup' });
    await heldCall;
    const prompt = await buttonsMessage(group.id, 0);
    const approveData = prompt.reply_markup!.inline_keyboard[0]![0]!.callback_data!;

    const guest = await tg.press({ from: bob, message: prompt, label: 'Approve' });
    await answered(guest);
    assert.equal(tg.answerOf(guest)!.text, 'Only the owner of this channel can approve or reject.');
    assert.ok((await pendingOf(thread)) !== null, 'still waiting');
    assert.ok(tg.sentTo(group.id).find((m) => m.message_id === prompt.message_id)!.reply_markup, 'buttons kept');
    assert.equal(h.model.requests.length, 1);

    const reject = await tg.press({ from: alice, message: prompt, label: 'Reject' });
    await answered(reject);
    assert.equal(tg.answerOf(reject)!.text, 'Rejected.');
    await tg.until(
      () => tg.sentTo(group.id).some((m) => m.text === 'Understood, I did not run it.'),
      20_000,
      'the reply',
    );
    assert.ok(lastRequestHas(`${REFUSAL} no reason given`), 'the model got the refusal');
    assert.equal(existsSync(file('tg-rejected.txt')), false);
    assert.match(
      tg.sentTo(group.id).find((m) => m.message_id === prompt.message_id)!.text,
      /Rejected by Alice: Bash does not run\.$/,
    );
    // Approve on the decided call afterwards: nothing waits, nothing runs.
    const late = await tg.press({ from: alice, message: prompt, data: approveData });
    await answered(late);
    assert.equal(tg.answerOf(late)!.text, 'Nothing is waiting for approval.');
  });

  it("a digital human's run holding a call: waiting_user, approved from the owner's proactive Telegram thread", async () => {
    okData(
      await api.post('/api/im-sessions/set-proactive', {
        appId,
        instanceId: tgInstance,
        chatId: '501',
        proactive: true,
      }),
    );
    const waiting = events.next(
      (f) =>
        f.type === 'event' &&
        f.channel === 'app:status_changed' &&
        f.data?.appId === appId &&
        (f.data.state as { status: string }).status === 'waiting_user',
      20_000,
    );
    h.model.enqueue(
      bashCall('r1', 'run-approved.txt'),
      { steps: [{ toolCall: { name: 'report_to_user', input: { type: 'complete', summary: 'The run ran it' } } }] },
      textReply('Done.'),
    );
    const before = tg.sentTo(501).filter((m) => m.reply_markup).length;
    okData(await api.post(`/api/apps/${appId}/trigger`));
    await waiting;
    const prompt = await buttonsMessage(501, before);
    assert.match(prompt.text, /Operator wants to run the tool Bash/);
    assert.equal(existsSync(file('run-approved.txt')), false);
    const press = await tg.press({ from: alice, message: prompt, label: 'Approve' });
    await answered(press);
    assert.equal(tg.answerOf(press)!.text, 'Approved.');
    await tg.until(() => tg.sentTo(501).some((m) => m.text === 'The run ran it'), 30_000, 'the run result');
    assert.equal(readFileSync(file('run-approved.txt'), 'utf8'), 'ran\n');
    const activity = okData<Array<{ type: string; content: Record<string, unknown> }>>(
      await api.get(`/api/apps/${appId}/activity`),
    );
    const entry = activity.find((e) => e.type === 'approval' && e.content.toolId === 'r1')!;
    assert.deepEqual(
      [entry.content.outcome, entry.content.decidedBy, (entry.content.channelUser as { userId: string }).userId],
      ['approved', 'channel', '501'],
    );
    okData(
      await api.post('/api/im-sessions/set-proactive', {
        appId,
        instanceId: tgInstance,
        chatId: '501',
        proactive: false,
      }),
    );
  });

  it('the generic webhook has no buttons: the owner answers with the words reject <reason> and approve', async () => {
    const instanceId = okData<{ id: string }>(
      await api.post('/api/im-channels/instances', {
        type: 'webhook',
        name: 'Desk',
        appId,
        config: { secret: SECRET, callbackUrl: callback.url },
      }),
    ).id;
    const deliver = (messageId: string, text: string, from = 'w-owner') => {
      const raw = JSON.stringify({
        messageId,
        chatId: 'desk-1',
        chatType: 'direct',
        from: { id: from, name: from === 'w-owner' ? 'Wendy' : 'Guest' },
        text,
      });
      return request(h.server.url)
        .post(`/hooks/channels/${instanceId}`)
        .set('Content-Type', 'application/json')
        .set('X-Hub-Signature-256', `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`)
        .send(raw);
    };
    const thread = `app-chat:${appId}:webhook:direct:desk-1`;
    h.model.enqueue(bashCall('w1', 'desk-rejected.txt'), textReply('Fine, skipped.'));
    const first = held(thread, 'w1');
    assert.equal((await deliver('m1', 'run the first')).status, 200);
    await first;
    await callback.until((r) => r.some((x) => x.chatId === 'desk-1' && x.text.includes('wants to run')), 20_000);
    const prompt = callback.of('desk-1').find((x) => x.text.includes('wants to run'))!;
    assert.match(prompt.text, /Reply "approve" to run it, or "reject"/);
    assert.ok(prompt.text.includes('echo ran >> desk-rejected.txt'));
    assert.equal(prompt.signed, true);
    assert.equal((await deliver('m2', 'reject too risky today')).status, 200);
    await callback.until((r) => r.some((x) => x.text === 'Fine, skipped.'), 20_000, 'the reply');
    assert.ok(lastRequestHas(`${REFUSAL} too risky today`), 'the reason reaches the model');
    assert.ok(callback.of('desk-1').some((x) => x.text === 'Rejected by Wendy: Bash does not run (too risky today).'));
    assert.equal(existsSync(file('desk-rejected.txt')), false);

    h.model.reset();
    h.model.enqueue(bashCall('w2', 'desk-approved.txt'), textReply('It ran.'));
    const second = held(thread, 'w2');
    assert.equal((await deliver('m3', 'run the second')).status, 200);
    await second;
    // Somebody else writing "approve" in the thread (a guest, as the owner is Wendy) decides nothing.
    assert.equal((await deliver('m4', 'approve', 'w-guest')).status, 200);
    await callback.until(
      (r) => r.some((x) => x.text === 'Only the owner of this channel can approve or reject.'),
      20_000,
    );
    assert.ok((await pendingOf(thread)) !== null, 'still waiting');
    assert.equal((await deliver('m5', 'Approve')).status, 200);
    await callback.until((r) => r.some((x) => x.text === 'It ran.'), 20_000, 'the reply');
    assert.equal(readFileSync(file('desk-approved.txt'), 'utf8'), 'ran\n');
    assert.ok(callback.of('desk-1').some((x) => x.text === 'Approved by Wendy: Bash runs now.'));
  });
});

/**
 * A loopback stand-in for the server's public address: started before the server (whose port is
 * not known yet), it forwards each request to `target` once set.
 */
interface Relay {
  url: string;
  target: string | null;
  close(): Promise<void>;
}

async function startRelay(): Promise<Relay> {
  const port = await freePort();
  const relay: Relay = { url: `http://127.0.0.1:${port}`, target: null, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!relay.target) return void res.writeHead(503).end();
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      fetch(`${relay.target}${req.url ?? '/'}`, { method: req.method ?? 'POST', headers, body: Buffer.concat(chunks) })
        .then(async (r) => res.writeHead(r.status, { 'Content-Type': 'application/json' }).end(await r.text()))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  relay.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return relay;
}

describe(`tool approvals from Telegram in webhook mode (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let tg: FakeTelegramServer;
  let relay: Relay;
  let space: { id: string; path: string };
  const carol = { id: 601, first_name: 'Carol' };
  const carolChat = { id: 601, type: 'private' as const, first_name: 'Carol' };

  before(async () => {
    tg = await FakeTelegramServer.start(TOKEN);
    relay = await startRelay();
    await h.start({ SVC_CHANNEL_ALLOW: '127.0.0.1', SVC_PUBLIC_URL: relay.url });
    relay.target = h.server.url;
    space = okData(await api.post('/api/spaces', { name: 'Webhook mode' }));
    const appId = okData<{ appId: string }>(
      await api.post('/api/apps/install', { spec: spec('Hooked'), spaceId: space.id }),
    ).appId;
    okData(await api.patch(`/api/apps/${appId}/overrides`, { approvals: { tools: ['Bash'] } }));
    okData(
      await api.post('/api/im-channels/instances', {
        type: 'telegram',
        name: 'Hooked bot',
        appId,
        config: { botToken: TOKEN, apiRoot: tg.apiRoot },
      }),
    );
    await tg.until(() => tg.webhook !== null, 20_000, 'setWebhook');
  });
  after(async () => {
    await h.stop();
    await tg?.close();
    await relay?.close();
  });

  it('a press delivered to the webhook approves the held call once', async () => {
    assert.ok(tg.webhook!.url.startsWith(`${relay.url}/hooks/channels/`));
    assert.ok(tg.webhook!.allowed_updates?.includes('callback_query'), 'the webhook asks for button presses');
    h.model.enqueue(bashCall('h1', 'hooked.txt'), textReply('Ran it for you.'));
    await tg.userMessage({ chat: carolChat, from: carol, text: 'run it please' });
    await tg.until(() => tg.sentTo(601).some((m) => m.reply_markup), 20_000, 'the buttons');
    const prompt = tg.sentTo(601).find((m) => m.reply_markup)!;
    assert.equal(existsSync(join(space.path, 'hooked.txt')), false);
    const press = await tg.press({ from: carol, message: prompt, label: 'Approve' });
    await tg.push(press);
    await tg.until(() => tg.answerOf(press) !== undefined, 20_000, 'answerCallbackQuery');
    assert.equal(tg.answerOf(press)!.text, 'Approved.');
    await tg.until(() => tg.sentTo(601).some((m) => m.text === 'Ran it for you.'), 20_000, 'the reply');
    assert.equal(readFileSync(join(space.path, 'hooked.txt'), 'utf8'), 'ran\n', 'ran exactly once');
    assert.match(tg.sentTo(601).find((m) => m.message_id === prompt.message_id)!.text, /Approved by Carol/);
  });
});
