import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, newConversation } from '#testing/api-client.js';
import type { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import type { TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

describe('agent turns across two replicas', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
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

  it('a turn started on A is followed from B, generating on B, and stopped from B', async () => {
    const { spaceId, conversationId } = await newConversation(a, `replicas ${Date.now()}`);
    const onB = await WsTestClient.signedIn(b.wsUrl, b.password);
    onB.send({ type: 'subscribe', payload: { conversationId } });
    await onB.roundTrip();
    model.enqueue({ steps: [{ text: 'streaming from somewhere' }, { hang: true }] });
    assert.deepEqual((await apiClient(a).post('/api/agent/message', { spaceId, conversationId, message: 'hi' })).body, {
      success: true,
    });
    await onB.event('agent:turn-start');
    assert.equal((await onB.event('agent:message', 10_000)).data!.isNewTextBlock, true);
    assert.equal((await apiClient(b).get(`/api/agent/generating/${conversationId}`)).body.data, true);
    assert.ok(((await apiClient(b).get('/api/agent/sessions')).body.data as string[]).includes(conversationId));
    assert.deepEqual((await apiClient(b).post('/api/agent/stop', { conversationId })).body, { success: true });
    const error = await onB.event('agent:error', 10_000);
    assert.equal(error.data!.errorType, 'interrupted');
    await onB.event('agent:complete');
    for (const s of [a, b])
      assert.equal((await apiClient(s).get(`/api/agent/generating/${conversationId}`)).body.data, false);
    onB.close();
  });

  it('when the replica running a turn is killed, the turn ends interrupted within 30 s, its streamed text kept', async () => {
    const { spaceId, conversationId } = await newConversation(a, `replicas ${Date.now()}`);
    // A watcher on each replica: whichever survives still has one, subscribed before the turn.
    const watchers = await Promise.all(
      [a, b].map(async (s) => {
        const w = await WsTestClient.signedIn(s.wsUrl, s.password);
        w.send({ type: 'subscribe', payload: { conversationId } });
        await w.roundTrip();
        return w;
      }),
    );
    model.enqueue({ steps: [{ text: 'about to be killed' }, { hang: true }] });
    await apiClient(a).post('/api/agent/message', { spaceId, conversationId, message: 'do not lose me' });
    // Kill only once the whole scripted text has been streamed (so it is in the event log to be
    // kept, and the scripted reply is not left for the next turn): seeing the model's request
    // alone raced the first delta.
    let streamed = '';
    while (streamed !== 'about to be killed') {
      const delta = await watchers[0]!.next(
        (f) => f.channel === 'agent:message' && typeof f.data?.delta === 'string',
        15_000,
      );
      streamed += delta.data!.delta as string;
    }
    await waitFor(
      async () => (await apiClient(a).get(`/api/agent/session/${conversationId}`)).body.data.replicaId !== null,
      10_000,
      'turn claimed',
    );
    const replicaId = (await apiClient(a).get(`/api/agent/session/${conversationId}`)).body.data.replicaId as string;
    const pid = Number(replicaId.split('-')[0]);
    const [victim, survivor] = pid === a.process.pid ? [a, b] : [b, a];
    assert.equal(victim.process.pid, pid, `replica ${replicaId} is one of the two servers`);
    const watcher = watchers[survivor === a ? 0 : 1]!;
    watchers[survivor === a ? 1 : 0]!.close();

    const killedAt = Date.now();
    victim.process.kill('SIGKILL');
    await victim.exited;
    const error = await watcher.event('agent:error', 30_000);
    assert.equal(error.data!.errorType, 'interrupted');
    await watcher.event('agent:complete', 5_000);
    const elapsed = Date.now() - killedAt;
    assert.ok(elapsed < 30_000, `took ${elapsed} ms`);
    assert.equal((await apiClient(survivor).get(`/api/agent/generating/${conversationId}`)).body.data, false);
    assert.ok(!((await apiClient(survivor).get('/api/agent/sessions')).body.data as string[]).includes(conversationId));
    const messages = (await apiClient(survivor).get(`/api/spaces/${spaceId}/conversations/${conversationId}`)).body.data
      .messages as Array<{ role: string; content: string }>;
    assert.equal(messages[0]!.content, 'do not lose me');
    // What the killed replica had streamed is kept as the interrupted reply (rebuilt from the event log).
    assert.deepEqual(
      messages.slice(1).map((m) => [m.role, m.content]),
      [['assistant', 'about to be killed']],
    );
    // The conversation keeps working on the survivor.
    model.enqueue({ steps: [{ text: 'back again' }] });
    const again = await apiClient(survivor).post('/api/agent/message', { spaceId, conversationId, message: 'again' });
    assert.deepEqual([again.status, again.body], [200, { success: true }]);
    const reply = await watcher.next((f) => f.channel === 'agent:message' && f.data?.isComplete === true, 20_000);
    assert.equal(reply.data!.content, 'back again');
    watcher.close();
    // Restart the killed replica so `after` stops two servers.
    if (victim === a) a = await replicas.replace(a);
    else b = await replicas.replace(b);
  });
});
