import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgentHarness, toolResults } from '#testing/agent-harness.js';
import { apiClient, failure } from '#testing/api-client.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import { type ScriptedModelServer, textReply } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import type { TestServer } from '#testing/test-server.js';
import { sleep, waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

/** Tool approvals (docs/api/agent.md, "Tool approvals"), end to end over HTTP and WebSocket. */

const NOTHING_WAITS = 'No tool call is waiting for approval';
const bashCall = (id: string, file: string) => ({
  steps: [{ toolCall: { id, name: 'Bash', input: { command: `echo ran >> ${file}` } } }],
});
const isHeld = (f: Frame, toolId: string) =>
  f.type === 'event' && f.channel === 'agent:tool-call' && f.data?.id === toolId && f.data?.requiresApproval === true;

describe('tool approvals', () => {
  const h = new AgentHarness();
  const { api, okData, subscribed } = h;
  let model: ScriptedModelServer;
  let server: TestServer;
  let space: { id: string; path: string };
  /** Signed in, subscribed to nothing: sees what goes to every client. */
  let bystander: WsTestClient;

  const setPolicy = async (approvals: unknown) => okData(await api.post('/api/config', { approvals }));
  const newConversation = async () =>
    okData<{ id: string }>(await api.post(`/api/spaces/${space.id}/conversations`, { title: 'approvals' })).id;
  const send = (conversationId: string, message: string) =>
    api.post('/api/agent/message', { spaceId: space.id, conversationId, message });
  const session = async (conversationId: string) =>
    okData<Record<string, unknown>>(await api.get(`/api/agent/session/${conversationId}`));
  /** The thoughts stored with the conversation's last reply. */
  const storedThoughts = async (conversationId: string) => {
    const conv = okData<{ messages: Array<{ id: string; role: string }> }>(
      await api.get(`/api/spaces/${space.id}/conversations/${conversationId}`),
    );
    const last = conv.messages.filter((m) => m.role === 'assistant').at(-1)!;
    return okData<Array<Record<string, unknown>>>(
      await api.get(`/api/spaces/${space.id}/conversations/${conversationId}/messages/${last.id}/thoughts`),
    );
  };

  before(async () => {
    await h.start({ SVC_AGENT_RETRY_BASE_MS: '20', SVC_AGENT_MAX_RETRIES: '1' });
    ({ model, server } = h);
    space = okData(await api.post('/api/spaces', { name: 'Approvals' }));
    bystander = await WsTestClient.signedIn(server.wsUrl, server.password);
  });
  after(async () => {
    bystander?.close();
    await h.stop();
  });
  beforeEach(() => model.reset());

  it('without a policy, approve and reject stay the no-ops of the specification', async () => {
    const id = await newConversation();
    for (const path of ['/api/agent/approve', '/api/agent/reject']) {
      assert.deepEqual((await api.post(path, { conversationId: id })).body, { success: true });
      assert.deepEqual((await api.post(path, {})).body, { success: true });
      assert.deepEqual((await api.post(path, { conversationId: 7, toolId: [], reason: {} })).body, { success: true });
    }
    assert.equal((await session(id)).pendingApproval, null);
    // An empty tools list is no policy either.
    await setPolicy({ tools: [] });
    assert.deepEqual((await api.post('/api/agent/approve', { conversationId: id })).body, { success: true });
  });

  it('refuses a bad policy naming the field, in the configuration and in overrides', async () => {
    failure(await api.post('/api/config', { approvals: { tools: 'Bash' } }), 400, /^approvals\.tools must be a list/);
    failure(await api.post('/api/config', { approvals: { tools: ['Bash', 7] } }), 400, /^approvals\.tools\[1\]/);
    failure(
      await api.post('/api/config', { approvals: { tools: ['Bash'], timeoutSeconds: 0 } }),
      400,
      /^approvals\.timeoutSeconds/,
    );
    failure(await api.post('/api/config', { approvals: { tool: ['Bash'] } }), 400, /^approvals\.tool is not/);
    const stored = okData<Record<string, unknown>>(await api.get('/api/config'));
    assert.deepEqual(stored.approvals, { tools: [] }, 'nothing bad was written');
    const appId = okData<{ appId: string }>(
      await api.post('/api/apps/install', { spec: runnerSpec('Policy Check'), spaceId: space.id }),
    ).appId;
    const patch = (body: object) => api.patch(`/api/apps/${appId}/overrides`, body);
    failure(await patch({ approvals: { tools: [''] } }), 400, /^approvals\.tools\[0\]/);
    failure(
      await patch({ approvals: { tools: ['Write'], timeoutSeconds: 'soon' } }),
      400,
      /^approvals\.timeoutSeconds/,
    );
    okData(await patch({ approvals: { tools: ['Write'], timeoutSeconds: 30 } }));
  });

  it('a held Bash call runs nothing until approved, then runs once; everyone hears it is waiting', async () => {
    await setPolicy({ tools: ['Bash'] });
    const id = await newConversation();
    const ws = await subscribed(id);
    model.enqueue(bashCall('b1', 'approved.txt'), textReply('Done.'));
    okData(await send(id, 'run it'));
    const held = await bystander.next((f) => isHeld(f, 'b1'), 15_000);
    assert.equal(held.data!.conversationId, id, 'a client subscribed to nothing hears of the held call');
    assert.deepEqual(held.data!.input, { command: 'echo ran >> approved.txt' });
    const pending = (await session(id)).pendingApproval as Record<string, unknown>;
    assert.deepEqual(
      [pending.toolId, pending.name, pending.input],
      ['b1', 'Bash', { command: 'echo ran >> approved.txt' }],
    );
    assert.ok(Date.parse(pending.deadline as string) > Date.now() + 500_000, 'the default deadline is 600 s away');
    await sleep(300);
    assert.equal(existsSync(join(space.path, 'approved.txt')), false, 'nothing ran before the answer');
    assert.equal(model.requests.length, 1, 'the turn waits');
    failure(await api.post('/api/agent/approve', { conversationId: id, toolId: 'other' }), 409, NOTHING_WAITS);
    failure(await api.post('/api/agent/reject', { conversationId: id, reason: 7 }), 400, 'reason must be a string');
    assert.deepEqual(
      (await api.post('/api/agent/approve', { conversationId: id, toolId: 'b1' }).set('X-Svc-Client', 'web')).body,
      { success: true },
    );
    await ws.event('agent:complete', 15_000);
    await ws.roundTrip();
    assert.equal(readFileSync(join(space.path, 'approved.txt'), 'utf8'), 'ran\n', 'ran exactly once');
    const frames = ws.raw.map((r) => JSON.parse(r) as Frame).filter((f) => f.type === 'event');
    const calls = frames.filter((f) => f.channel === 'agent:tool-call' && f.data!.id === 'b1');
    assert.deepEqual(
      calls.map((f) => f.data!.requiresApproval ?? false),
      [true, false],
      'held, then announced as it starts',
    );
    assert.deepEqual(
      toolResults(frames).map((r) => r.isError),
      [false],
    );
    // Nothing waits any more: a second answer is a conflict, not a second run.
    failure(await api.post('/api/agent/approve', { conversationId: id }), 409, NOTHING_WAITS);
    failure(await api.post('/api/agent/reject', { conversationId: id }), 409, NOTHING_WAITS);
    assert.equal((await session(id)).pendingApproval, null);
    const thought = (await storedThoughts(id)).find((t) => t.toolName === 'Bash')!;
    const approval = thought.approval as Record<string, unknown>;
    assert.deepEqual([approval.outcome, approval.decidedBy], ['approved', 'web']);
    assert.equal(typeof approval.decidedAt, 'string');
    const metrics = (await api.get('/metrics')).text;
    assert.match(metrics, /svc_tool_approvals_total\{[^}]*outcome="approved"[^}]*\} 1/);
    ws.close();
  });

  it('a rejection reaches the model as the tool result and the turn goes on', async () => {
    await setPolicy({ tools: ['Bash'] });
    const id = await newConversation();
    model.enqueue(bashCall('r1', 'rejected.txt'), textReply('Understood, I will not.'));
    const frames = await h.turn(id, async () => {
      const sent = await send(id, 'run it');
      await bystander.next((f) => isHeld(f, 'r1'), 15_000);
      okData(await api.post('/api/agent/reject', { conversationId: id, reason: 'too risky' }));
      return sent;
    });
    assert.deepEqual(toolResults(frames), [{ result: 'The user rejected this tool call: too risky', isError: true }]);
    assert.ok(h.bodyOf(1).includes('The user rejected this tool call: too risky'), 'the model got the refusal');
    assert.equal(frames.at(-1)!.channel, 'agent:complete');
    assert.ok(!frames.some((f) => f.channel === 'agent:error'), 'the turn completed');
    assert.equal(existsSync(join(space.path, 'rejected.txt')), false);
    const approval = (await storedThoughts(id)).find((t) => t.toolName === 'Bash')!.approval as Record<string, unknown>;
    assert.deepEqual([approval.outcome, approval.decidedBy, approval.reason], ['rejected', 'api', 'too risky']);
    // Without a reason the model is told so.
    const other = await newConversation();
    model.enqueue(bashCall('r2', 'rejected.txt'), textReply('OK.'));
    const second = await h.turn(other, async () => {
      const sent = await send(other, 'again');
      await bystander.next((f) => isHeld(f, 'r2'), 15_000);
      okData(await api.post('/api/agent/reject', { conversationId: other, toolId: 'r2' }));
      return sent;
    });
    assert.deepEqual(toolResults(second), [
      { result: 'The user rejected this tool call: no reason given', isError: true },
    ]);
  });

  it('the deadline rejects an unanswered call', async () => {
    await setPolicy({ tools: ['Ba*'], timeoutSeconds: 1 });
    const id = await newConversation();
    model.enqueue(bashCall('t1', 'timeout.txt'), textReply('Nobody answered.'));
    const frames = await h.turn(id, () => send(id, 'run it'));
    assert.deepEqual(toolResults(frames), [
      { result: 'The user rejected this tool call: nobody answered within 1 seconds', isError: true },
    ]);
    assert.equal(existsSync(join(space.path, 'timeout.txt')), false);
    const approval = (await storedThoughts(id)).find((t) => t.toolName === 'Bash')!.approval as Record<string, unknown>;
    assert.deepEqual([approval.outcome, approval.decidedBy], ['timeout', 'server']);
    failure(await api.post('/api/agent/approve', { conversationId: id }), 409, NOTHING_WAITS);
  });

  it('a stop rejects the waiting call and ends the turn', async () => {
    await setPolicy({ tools: ['Bash'] });
    const id = await newConversation();
    model.enqueue(bashCall('s1', 'stopped.txt'));
    const frames = await h.turn(id, async () => {
      const sent = await send(id, 'run it');
      await bystander.next((f) => isHeld(f, 's1'), 15_000);
      okData(await api.post('/api/agent/stop', { conversationId: id }));
      return sent;
    });
    assert.deepEqual(toolResults(frames), [
      { result: 'The user rejected this tool call: the turn was stopped', isError: true },
    ]);
    assert.equal(frames.find((f) => f.channel === 'agent:error')!.data!.errorType, 'interrupted');
    assert.equal(existsSync(join(space.path, 'stopped.txt')), false);
    assert.equal(model.requests.length, 1, 'the model is not called again');
    assert.equal((await session(id)).pendingApproval, null);
  });

  it("a digital human's run waits as waiting_user under its own policy, and resumes on approval", async () => {
    // The configuration holds Bash; the digital human's own policy (Write) wins for its runs.
    await setPolicy({ tools: ['Bash'] });
    const appId = okData<{ appId: string }>(
      await api.post('/api/apps/install', { spec: runnerSpec('Careful Writer'), spaceId: space.id }),
    ).appId;
    okData(await api.patch(`/api/apps/${appId}/overrides`, { approvals: { tools: ['Write'] } }));
    const appEvent = (channel: string, match: (f: Frame) => boolean, timeoutMs = 15_000) =>
      bystander.next(
        (f) => f.type === 'event' && f.channel === channel && f.data?.appId === appId && match(f),
        timeoutMs,
      );
    const entryOf = (f: Frame) =>
      f.data!.entry as { id: string; type: string; runId: string; content: Record<string, unknown> };
    model.enqueue(
      { steps: [{ toolCall: { id: 'w1', name: 'Write', input: { file_path: 'report.txt', content: 'hello' } } }] },
      { steps: [{ toolCall: { name: 'report_to_user', input: { type: 'complete', summary: 'Wrote it' } } }] },
      textReply('Done.'),
    );
    const heldEntry = appEvent('app:activity_entry:new', (f) => entryOf(f).type === 'approval');
    const waiting = appEvent(
      'app:status_changed',
      (f) => (f.data!.state as { status: string }).status === 'waiting_user',
    );
    const run = okData<{ runId: string; conversationId: string }>(await api.post(`/api/apps/${appId}/trigger`));
    const entry = entryOf(await heldEntry);
    assert.equal(entry.runId, run.runId);
    assert.deepEqual([entry.content.name, entry.content.toolId], ['Write', 'w1']);
    assert.deepEqual(entry.content.input, { file_path: 'report.txt', content: 'hello' });
    await waiting;
    assert.equal(okData<{ status: string }>(await api.get(`/api/apps/${appId}/state`)).status, 'waiting_user');
    const pending = (await session(`app-run:${appId}`)).pendingApproval as Record<string, unknown>;
    assert.equal(pending.name, 'Write');
    assert.equal(existsSync(join(space.path, 'report.txt')), false);
    const decided = appEvent(
      'app:activity_entry:new',
      (f) => entryOf(f).id === entry.id && entryOf(f).content.outcome !== undefined,
    );
    const complete = appEvent('app:activity_entry:new', (f) => entryOf(f).type === 'run_complete');
    okData(await api.post('/api/agent/approve', { conversationId: `app-run:${appId}` }));
    const audit = entryOf(await decided).content;
    assert.deepEqual([audit.outcome, audit.decidedBy], ['approved', 'api']);
    assert.equal(typeof audit.decidedAt, 'string');
    assert.equal(entryOf(await complete).runId, run.runId);
    assert.equal(readFileSync(join(space.path, 'report.txt'), 'utf8'), 'hello');
    await waitFor(
      async () => okData<{ status: string }>(await api.get(`/api/apps/${appId}/state`)).status === 'idle',
      10_000,
      'the digital human is active again',
    );
  });
});

/** A digital human that runs on demand. */
function runnerSpec(name: string) {
  return {
    spec_version: '1',
    name,
    version: '1.0.0',
    author: 'approvals',
    description: 'Writes reports.',
    type: 'automation',
    system_prompt: 'You write reports.',
    subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
  };
}

describe('tool approvals across two replicas', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let replicas: Replicas;

  before(async () => {
    replicas = await startReplicas();
  });
  after(async () => {
    await replicas?.stop();
  });

  it('a call held on the replica running the turn is approved on the other one and runs once', async () => {
    const { a, b, model } = replicas;
    assert.equal((await apiClient(a).post('/api/config', { approvals: { tools: ['Bash'] } })).status, 200);
    const space = (await apiClient(a).post('/api/spaces', { name: `approvals ${Date.now()}` })).body.data;
    const conversationId = (await apiClient(a).post(`/api/spaces/${space.id}/conversations`, {})).body.data
      .id as string;
    const watchers = await Promise.all([a, b].map((s) => WsTestClient.signedIn(s.wsUrl, s.password)));
    model.enqueue(bashCall('x1', 'replicas.txt'), textReply('Done.'));
    assert.deepEqual(
      (await apiClient(a).post('/api/agent/message', { spaceId: space.id, conversationId, message: 'run it' })).body,
      { success: true },
    );
    // Every client of both replicas hears of the held call.
    await Promise.all(watchers.map((w) => w.next((f) => isHeld(f, 'x1'), 15_000)));
    const state = (await apiClient(a).get(`/api/agent/session/${conversationId}`)).body.data;
    const pid = Number((state.replicaId as string).split('-')[0]);
    const other = pid === a.process.pid ? b : a;
    assert.notEqual(other.process.pid, pid);
    assert.deepEqual((await apiClient(other).post('/api/agent/approve', { conversationId })).body, { success: true });
    await Promise.all(watchers.map((w) => w.event('agent:complete', 15_000)));
    assert.equal(readFileSync(join(space.path, 'replicas.txt'), 'utf8'), 'ran\n');
    const again = await apiClient(other).post('/api/agent/approve', { conversationId });
    assert.deepEqual([again.status, again.body.error], [409, NOTHING_WAITS]);
    for (const w of watchers) w.close();
  });
});
