import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import request from 'supertest';
import { ScriptedModelServer, textReply } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

/** A digital human that chats and runs: the catalog's shape, trimmed. */
const helperSpec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: 'Keeps an eye on the shop.',
  type: 'automation',
  system_prompt: 'You watch the shop prices for the user.',
  config_schema: [{ key: 'max', label: 'Max price', type: 'number', default: 100 }],
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
  escalation: { timeout_hours: 24 },
});

describe('digital humans at work (chat, runs, escalation)', () => {
  let model: ScriptedModelServer;
  let server: TestServer;
  let events: WsTestClient;
  let space: { id: string; path: string };
  let appId: string;

  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${server.password}`);
  const api = {
    get: (p: string) => auth(request(server.url).get(p)),
    post: (p: string, body: object = {}) => auth(request(server.url).post(p)).send(body),
  };
  const okData = <T>(res: request.Response): T => {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.success, true, JSON.stringify(res.body));
    return res.body.data as T;
  };
  const appEvent = (channel: string, id: string, match: (f: Frame) => boolean = () => true, timeoutMs = 10_000) =>
    events.next((f) => f.type === 'event' && f.channel === channel && f.data?.appId === id && match(f), timeoutMs);
  async function subscribed(conversationId: string): Promise<WsTestClient> {
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    ws.send({ type: 'subscribe', payload: { conversationId } });
    await ws.roundTrip();
    return ws;
  }
  const systemOf = (i: number): string => JSON.stringify(model.requests[i]!.body);

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({
      env: {
        SVC_AI_PROVIDER: 'anthropic',
        SVC_AI_API_URL: model.url,
        SVC_AI_API_KEY: 'sk-scripted',
        SVC_AI_MODEL: 'scripted-model',
        SVC_AGENT_RETRY_BASE_MS: '20',
        SVC_AGENT_MAX_RETRIES: '1',
      },
    });
    events = await WsTestClient.signedIn(server.wsUrl, server.password);
    space = okData(await api.post('/api/spaces', { name: 'Shop' }));
    appId = okData<{ appId: string }>(
      await api.post('/api/apps/install', { spec: helperSpec('Shop Helper'), spaceId: space.id }),
    ).appId;
  });
  after(async () => {
    events?.close();
    await server?.stop();
    await model?.close();
  });
  beforeEach(() => model.reset());

  it('chats in the default thread: app prompt, settings and memory; events as for any chat', async () => {
    const memoryDir = join(space.path, '.svc', 'apps', appId);
    mkdirSync(memoryDir, { recursive: true });
    writeFileSync(join(memoryDir, 'memory.md'), 'The user likes green tea.');
    const threadId = `app-chat:${appId}`;
    const ws = await subscribed(threadId);
    model.enqueue(textReply('Prices look fine today.'));
    const sent = okData<{ conversationId: string }>(
      await api.post(`/api/apps/${appId}/chat/send`, { spaceId: space.id, message: 'How are prices?' }),
    );
    assert.deepEqual(sent, { conversationId: threadId });
    const im = await appEvent('app:im-session-updated', appId);
    assert.deepEqual(im.data, {
      appId,
      channel: 'app-chat',
      chatId: threadId,
      chatType: 'direct',
      instanceId: null,
      lastMessage: 'How are prices?',
    });
    const complete = await ws.event('agent:complete', 15_000);
    assert.equal(complete.data!.conversationId, threadId);
    const prompt = systemOf(0);
    assert.ok(prompt.includes('You watch the shop prices for the user.'), 'the app system prompt');
    assert.ok(prompt.includes('max: 100'), 'the config values');
    assert.ok(prompt.includes('The user likes green tea.'), 'the memory');
    assert.ok(prompt.includes('How are prices?'));
    const messages = okData<Array<{ role: string; content: string }>>(
      await api.get(`/api/apps/${appId}/chat/messages`),
    );
    assert.deepEqual(
      messages.map((m) => [m.role, m.content]),
      [
        ['user', 'How are prices?'],
        ['assistant', 'Prices look fine today.'],
      ],
    );
    assert.deepEqual(okData(await api.get(`/api/apps/${appId}/chat/status`)), {
      isGenerating: false,
      conversationId: threadId,
    });
    assert.deepEqual(okData(await api.get(`/api/apps/${appId}/chat/session-state`)), {
      isActive: false,
      thoughts: [],
      spaceId: space.id,
    });
    ws.close();
  });

  it('keeps a caller-chosen thread apart: its own history and events; status and stop cover it', async () => {
    const custom = `user-42-${Date.now()}`;
    const ws = await subscribed(custom);
    const defaultWs = await subscribed(`app-chat:${appId}`);
    model.enqueue({ steps: [{ text: 'Thinking' }, { hang: true }] });
    const sent = okData<{ conversationId: string }>(
      await api.post(`/api/apps/${appId}/chat/send`, {
        spaceId: space.id,
        message: 'Hi from 42',
        conversationId: custom,
      }),
    );
    assert.deepEqual(sent, { conversationId: `app-chat:${appId}` }, 'the default id is echoed');
    await ws.event('agent:turn-start');
    await model.waitForRequests(1);
    assert.ok(!systemOf(0).includes('How are prices?'), 'the custom thread has its own history');
    await waitFor(
      async () => (await api.get(`/api/apps/${appId}/chat/status`)).body.data.isGenerating === true,
      5000,
      'generating covers the custom thread',
    );
    assert.deepEqual(okData(await api.post(`/api/apps/${appId}/chat/restart`)), { sessionsClosed: 1 });
    await ws.event('agent:complete', 10_000);
    assert.equal(
      defaultWs.raw.some((r) => {
        const f = JSON.parse(r) as Frame;
        return f.channel === 'agent:message' && f.data?.conversationId === custom;
      }),
      false,
      'the default thread hears nothing of the custom one',
    );
    const history = okData<Array<{ role: string; content: string }>>(await api.get(`/api/apps/${appId}/chat/messages`));
    assert.equal(history.length, 2, 'the default thread is untouched');
    assert.equal((await api.get(`/api/apps/${appId}/chat/status`)).body.data.isGenerating, false);
    ws.close();
    defaultWs.close();
  });

  it('stop ends every thread; clear starts the default thread afresh; im-chat is empty; bad input names the field', async () => {
    const custom = `stop-me-${Date.now()}`;
    const ws = await subscribed(custom);
    model.enqueue({ steps: [{ hang: true }] });
    okData(
      await api.post(`/api/apps/${appId}/chat/send`, { spaceId: space.id, message: 'wait', conversationId: custom }),
    );
    await model.waitForRequests(1);
    const stopped = await api.post(`/api/apps/${appId}/chat/stop`);
    assert.deepEqual([stopped.status, stopped.body], [200, { success: true }]);
    const error = await ws.event('agent:error', 10_000);
    assert.equal(error.data!.errorType, 'interrupted');
    await ws.event('agent:complete', 10_000);
    ws.close();

    assert.deepEqual(okData(await api.get(`/api/apps/${appId}/im-chat/messages`)), []);
    assert.equal((await api.post(`/api/apps/${appId}/im-chat/clear`)).status, 200);
    const clearedWithout = await api.post(`/api/apps/${appId}/chat/clear`, {});
    assert.equal(clearedWithout.status, 400);
    assert.match(clearedWithout.body.error, /spaceId/);
    assert.equal((await api.post(`/api/apps/${appId}/chat/clear`, { spaceId: space.id })).status, 200);
    assert.deepEqual(okData(await api.get(`/api/apps/${appId}/chat/messages`)), []);

    const missing = await api.post(`/api/apps/${appId}/chat/send`, { spaceId: space.id });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /message/);
    const noSpace = await api.post(`/api/apps/${appId}/chat/send`, { message: 'hi' });
    assert.equal(noSpace.status, 400);
    assert.match(noSpace.body.error, /spaceId/);
    const unknown = '00000000-0000-4000-8000-000000000000';
    assert.equal((await api.get(`/api/apps/${unknown}/chat/messages`)).status, 404);
    assert.equal((await api.post(`/api/apps/${unknown}/chat/send`, { spaceId: space.id, message: 'x' })).status, 404);
    assert.equal(model.requests.length, 1, 'nothing ran for the bad requests');
  });
});
