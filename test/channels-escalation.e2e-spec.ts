import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import request from 'supertest';
import { AgentHarness } from '#testing/agent-harness.js';
import { ChannelCallbackServer } from '#testing/channel-callback-server.js';
import { textReply } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { sleep, waitFor } from '#testing/wait.js';

const SECRET = 'escalation-s3cret';

const spec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: 'Asks its owner before it buys.',
  type: 'automation',
  system_prompt: 'You buy tea, but ask first.',
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
});

/** A digital human's escalation reaches its owner's direct chat on a channel, and a reply there answers it. */
describe(`message channels: escalations to the owner's chat (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let callback: ChannelCallbackServer;
  let appId: string;
  let instanceId: string;

  const deliver = (messageId: string, text: string, from: string, chatId: string) => {
    const raw = JSON.stringify({ messageId, chatId, chatType: 'direct', from: { id: from }, text });
    return request(h.server.url)
      .post(`/hooks/channels/${instanceId}`)
      .set('Content-Type', 'application/json')
      .set('X-Hub-Signature-256', `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`)
      .send(raw);
  };
  const report = (input: Record<string, unknown>) => ({ steps: [{ toolCall: { name: 'report_to_user', input } }] });
  const stateOf = async () =>
    okData<{ status: string; runningCount: number; pendingEscalationId: string | null }>(
      await api.get(`/api/apps/${appId}/state`),
    );

  before(async () => {
    callback = await ChannelCallbackServer.start(SECRET);
    await h.start({ SVC_CHANNEL_ALLOW: '127.0.0.1' });
    const spaceId = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Escalations' })).id;
    appId = okData<{ appId: string }>(await api.post('/api/apps/install', { spec: spec('Tea buyer'), spaceId })).appId;
    instanceId = okData<{ id: string }>(
      await api.post('/api/im-channels/instances', {
        type: 'webhook',
        name: 'Hook',
        appId,
        config: { secret: SECRET, callbackUrl: callback.url },
      }),
    ).id;
  });
  after(async () => {
    await h.stop();
    await callback?.close();
  });
  beforeEach(() => h.model.reset());

  it("sends the question with its choices to the owner's direct chat only; the owner's reply answers it and the follow-up run gets it", async () => {
    // The owner (first direct sender) and a guest have written to the bot.
    h.model.enqueue(textReply('Hello owner.'), textReply('Hello guest.'));
    assert.equal((await deliver('o-1', 'hi', 'u-owner', 'chat-owner')).status, 200);
    await callback.until((r) => r.some((x) => x.replyTo === 'o-1'), 20_000, 'the owner reply');
    assert.equal((await deliver('g-1', 'hi', 'u-guest', 'chat-guest')).status, 200);
    await callback.until((r) => r.some((x) => x.replyTo === 'g-1'), 20_000, 'the guest reply');

    h.model.enqueue(
      report({ type: 'escalation', summary: 'Buy the tea at 42?', choices: ['Buy it', 'Wait for a better price'] }),
      textReply('Asked.'),
    );
    okData(await api.post(`/api/apps/${appId}/trigger`));
    await callback.until((r) => r.some((x) => x.text.includes('Buy the tea at 42?')), 30_000, 'the question');
    await waitFor(async () => (await stateOf()).status === 'waiting_user', 10_000, 'waiting for the user');
    const entryId = (await stateOf()).pendingEscalationId!;
    assert.ok(entryId);
    await sleep(1000);
    const asked = callback.of('chat-owner').filter((x) => x.text.includes('Buy the tea at 42?'));
    assert.equal(asked.length, 1, 'once');
    assert.equal(asked[0]!.replyTo, null);
    assert.equal(
      asked[0]!.text,
      'A question needs your answer:\nBuy the tea at 42?\n\n1. Buy it\n2. Wait for a better price\n\n' +
        'Reply with a number or a choice, or write your own answer.',
    );
    assert.equal(callback.of('chat-guest').length, 1, 'a guest is not asked');

    // A guest cannot answer: their message is a chat turn of their own.
    h.model.enqueue(textReply('I cannot decide that.'));
    assert.equal((await deliver('g-2', '1', 'u-guest', 'chat-guest')).status, 200);
    await callback.until((r) => r.some((x) => x.replyTo === 'g-2'), 20_000, 'the guest turn');
    assert.equal((await stateOf()).pendingEscalationId, entryId);

    // The owner answers "2": the choice is recorded, and the follow-up run is told.
    h.model.enqueue(report({ type: 'complete', summary: 'Waiting then' }), textReply('Done.'));
    const before = h.model.requests.length;
    assert.equal((await deliver('o-2', '2', 'u-owner', 'chat-owner')).status, 200);
    await callback.until((r) => r.some((x) => x.replyTo === 'o-2'), 20_000, 'the confirmation');
    assert.equal(callback.replies.find((x) => x.replyTo === 'o-2')!.text, 'Thanks — answered: Wait for a better price');
    await waitFor(
      async () => {
        const s = await stateOf();
        return s.pendingEscalationId === null && s.runningCount === 0 && h.model.requests.length > before;
      },
      30_000,
      'the follow-up run',
    );
    const entry = okData<Array<{ id: string; content: Record<string, unknown> }>>(
      await api.get(`/api/apps/${appId}/activity`),
    ).find((a) => a.id === entryId)!;
    assert.equal((entry.content.userResponse as { choice?: string }).choice, 'Wait for a better price');
    assert.equal((entry.content.resolution as { reason: string }).reason, 'answered');
    const followUp = JSON.stringify(h.model.requests[before]!.body);
    assert.ok(followUp.includes('Wait for a better price'), 'the follow-up run gets the answer');
    // The answer is no chat turn of the owner's thread.
    const messages = okData<Array<{ content: string }>>(
      await api.get(`/api/apps/${appId}/im-chat/messages?instanceId=${instanceId}&chatType=direct&chatId=chat-owner`),
    );
    assert.ok(!messages.some((m) => m.content === '2'));

    // With nothing open, the owner's next message is an ordinary chat turn again.
    h.model.enqueue(textReply('Anything else?'));
    assert.equal((await deliver('o-3', '2', 'u-owner', 'chat-owner')).status, 200);
    await callback.until((r) => r.some((x) => x.replyTo === 'o-3'), 20_000, 'the chat reply');
    assert.equal(callback.replies.find((x) => x.replyTo === 'o-3')!.text, 'Anything else?');
  });
});
