import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, okData } from '#testing/api-client.js';
import type { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import type { TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

const spec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: 'Works on its own.',
  type: 'automation',
  system_prompt: 'Do the task, then report.',
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
});

describe('digital human runs across two replicas', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let replicas: Replicas;
  let model: ScriptedModelServer;
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    replicas = await startReplicas();
    ({ model, a, b } = replicas);
  });
  after(async () => {
    await replicas?.stop();
  });

  it('a run started on A is followed, skipped and stopped from B; both replicas agree on the state', async () => {
    const space = okData<{ id: string }>(await apiClient(a).post('/api/spaces', { name: 'replica runs' }));
    const appId = okData<{ appId: string }>(
      await apiClient(a).post('/api/apps/install', { spec: spec('Replica Runner'), spaceId: space.id }),
    ).appId;
    const onB = await WsTestClient.signedIn(b.wsUrl, b.password);
    onB.send({ type: 'subscribe', payload: { conversationId: `app-run:${appId}` } });
    await onB.roundTrip();
    model.enqueue({ steps: [{ text: 'working' }, { hang: true }] });
    const run = okData<{ outcome: string; runId: string }>(await apiClient(a).post(`/api/apps/${appId}/trigger`, {}));
    assert.equal(run.outcome, 'started');
    assert.equal((await onB.event('agent:message', 10_000)).data!.conversationId, `app-run:${appId}`);
    assert.equal(
      okData<{ outcome: string }>(await apiClient(b).post(`/api/apps/${appId}/trigger`, {})).outcome,
      'skipped',
    );
    assert.equal(okData<{ runningCount: number }>(await apiClient(b).get(`/api/apps/${appId}/state`)).runningCount, 1);
    const ended = onB.next(
      (f: Frame) =>
        f.channel === 'app:activity_entry:new' &&
        f.data?.appId === appId &&
        (f.data.entry as { type: string }).type === 'run_error',
      10_000,
    );
    okData(await apiClient(b).post('/api/agent/stop', { conversationId: `app-run:${appId}` }));
    assert.equal(((await ended).data!.entry as { runId: string }).runId, run.runId);
    for (const s of [a, b]) {
      await waitFor(
        async () =>
          okData<{ runningCount: number }>(await apiClient(s).get(`/api/apps/${appId}/state`)).runningCount === 0,
        10_000,
      );
    }
    const session = okData<{ messages: unknown[] }>(
      await apiClient(b).get(`/api/apps/${appId}/runs/${run.runId}/session`),
    );
    assert.ok(session.messages.length >= 1);
    onB.close();
  });

  it('a chat sent on A is followed, read and stopped from B, thread by thread', async () => {
    const space = okData<{ id: string }>(await apiClient(a).post('/api/spaces', { name: 'replica chat' }));
    const appId = okData<{ appId: string }>(
      await apiClient(a).post('/api/apps/install', { spec: spec('Replica Talker'), spaceId: space.id }),
    ).appId;
    const custom = `replica-user-${Date.now()}`;
    const defaultThread = `app-chat:${appId}`;
    const onB = await WsTestClient.signedIn(b.wsUrl, b.password);
    onB.send({ type: 'subscribe', payload: { conversationId: custom } });
    onB.send({ type: 'subscribe', payload: { conversationId: defaultThread } });
    await onB.roundTrip();
    const of = (channel: string, conversationId: string, timeoutMs = 10_000) =>
      onB.next((f: Frame) => f.channel === channel && f.data?.conversationId === conversationId, timeoutMs);

    model.enqueue({ steps: [{ text: 'Let me think' }, { hang: true }] });
    const im = onB.next((f: Frame) => f.channel === 'app:im-session-updated' && f.data?.chatId === custom, 10_000);
    okData(
      await apiClient(a).post(`/api/apps/${appId}/chat/send`, {
        spaceId: space.id,
        message: 'hold on',
        conversationId: custom,
      }),
    );
    const streamed = await of('agent:message', custom);
    assert.equal((await im).data!.appId, appId, 'B hears the thread got a message');
    assert.equal(streamed.data!.conversationId, custom, 'B follows the thread A started');
    await waitFor(
      async () =>
        okData<{ isGenerating: boolean }>(await apiClient(b).get(`/api/apps/${appId}/chat/status`)).isGenerating,
      10_000,
      'B sees the thread generating',
    );
    const stopped = await apiClient(b).post(`/api/apps/${appId}/chat/stop`, {});
    assert.deepEqual([stopped.status, stopped.body], [200, { success: true }]);
    assert.equal((await of('agent:error', custom)).data!.errorType, 'interrupted');
    await of('agent:complete', custom);
    for (const s of [a, b]) {
      await waitFor(
        async () =>
          !okData<{ isGenerating: boolean }>(await apiClient(s).get(`/api/apps/${appId}/chat/status`)).isGenerating,
        10_000,
        'nothing generates on either replica',
      );
    }

    model.enqueue({ steps: [{ text: 'Hello from the default thread.' }] });
    okData(await apiClient(a).post(`/api/apps/${appId}/chat/send`, { spaceId: space.id, message: 'hi' }));
    await of('agent:complete', defaultThread, 15_000);
    const messages = okData<Array<{ role: string; content: string }>>(
      await apiClient(b).get(`/api/apps/${appId}/chat/messages`),
    );
    assert.deepEqual(
      messages.map((m) => [m.role, m.content]),
      [
        ['user', 'hi'],
        ['assistant', 'Hello from the default thread.'],
      ],
      'B reads the default thread; the custom one stays apart',
    );
    onB.close();
  });

  it('a run whose replica is killed ends as an interrupted run_error, recorded for every replica', async () => {
    const space = okData<{ id: string }>(await apiClient(a).post('/api/spaces', { name: 'replica kill' }));
    const appId = okData<{ appId: string }>(
      await apiClient(a).post('/api/apps/install', { spec: spec('Replica Victim'), spaceId: space.id }),
    ).appId;
    const requestsBefore = model.requests.length;
    model.enqueue({ steps: [{ text: 'about to be killed' }, { hang: true }] });
    const run = okData<{ runId: string }>(await apiClient(a).post(`/api/apps/${appId}/trigger`, {}));
    await model.waitForRequests(requestsBefore + 1, 15_000);
    const conversationId = `app-run:${appId}`;
    await waitFor(
      async () => (await apiClient(a).get(`/api/agent/session/${conversationId}`)).body.data.replicaId !== null,
      10_000,
      'run claimed',
    );
    const replicaId = (await apiClient(a).get(`/api/agent/session/${conversationId}`)).body.data.replicaId as string;
    const pid = Number(replicaId.split('-')[0]);
    const [victim, survivor] = pid === a.process.pid ? [a, b] : [b, a];
    const watcher = await WsTestClient.signedIn(survivor.wsUrl, survivor.password);
    const ended = watcher.next(
      (f: Frame) =>
        f.channel === 'app:activity_entry:new' &&
        f.data?.appId === appId &&
        (f.data.entry as { type: string }).type === 'run_error',
      30_000,
    );
    victim.process.kill('SIGKILL');
    await victim.exited;
    const entry = (await ended).data!.entry as { runId: string; content: { interrupted?: boolean } };
    assert.equal(entry.runId, run.runId);
    assert.equal(entry.content.interrupted, true);
    const state = okData<{ runningCount: number; lastStatus: string }>(
      await apiClient(survivor).get(`/api/apps/${appId}/state`),
    );
    assert.equal(state.runningCount, 0);
    assert.equal(state.lastStatus, 'error');
    watcher.close();
    if (victim === a) a = await replicas.replace(a);
    else b = await replicas.replace(b);
  });
});
