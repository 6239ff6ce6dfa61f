import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { apiClient } from '#testing/api-client.js';
import { AgentHarness } from '#testing/agent-harness.js';
import { type ScriptedModelServer, textReply } from '#testing/scripted-model-server.js';
import type { TestServer } from '#testing/test-server.js';
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
  const h = new AgentHarness();
  const { api, okData, subscribed } = h;
  /** The whole request the model got (prompt, settings, memory, history). */
  const systemOf = h.bodyOf;
  let model: ScriptedModelServer;
  let server: TestServer;
  let events: WsTestClient;
  let space: { id: string; path: string };
  let appId: string;

  const appEvent = (channel: string, id: string, match: (f: Frame) => boolean = () => true, timeoutMs = 10_000) =>
    events.next((f) => f.type === 'event' && f.channel === channel && f.data?.appId === id && match(f), timeoutMs);

  before(async () => {
    await h.start({
      SVC_AGENT_RETRY_BASE_MS: '20',
      SVC_AGENT_MAX_RETRIES: '1',
      SVC_APP_RUNS_PER_PROCESS: '1',
    });
    ({ model, server } = h);
    events = await WsTestClient.signedIn(server.wsUrl, server.password);
    space = okData(await api.post('/api/spaces', { name: 'Shop' }));
    appId = okData<{ appId: string }>(
      await api.post('/api/apps/install', { spec: helperSpec('Shop Helper'), spaceId: space.id }),
    ).appId;
  });
  after(async () => {
    events?.close();
    await h.stop();
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
    const replied = await appEvent('app:im-session-updated', appId, (f) => f.data!.lastMessage !== 'How are prices?');
    assert.deepEqual(
      [replied.data!.chatId, replied.data!.lastMessage],
      [threadId, 'Prices look fine today.'],
      'the reply updates the thread too',
    );
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

  // ── runs ──────────────────────────────────────────────────────────────────────────────

  const report = (input: Record<string, unknown>) => ({ steps: [{ toolCall: { name: 'report_to_user', input } }] });
  const activityOf = (id: string, type: string, timeoutMs = 15_000) =>
    appEvent('app:activity_entry:new', id, (f) => (f.data!.entry as { type: string }).type === type, timeoutMs);
  const stateOf = async (id: string) => okData<Record<string, unknown>>(await api.get(`/api/apps/${id}/state`));
  /**
   * The run is over: its state says so and its turn has ended. The state is written while the
   * turn ends, so a trigger sent on the state alone can still find the turn and be skipped.
   */
  const runEnds = (id: string, what = 'the run ends') =>
    waitFor(
      async () =>
        (await stateOf(id)).runningCount === 0 &&
        (await api.get(`/api/agent/generating/app-run:${id}`)).body.data === false,
      10_000,
      what,
    );

  it('runs on trigger: milestone then complete, activity and state events, the transcript by run id', async () => {
    model.enqueue(
      report({ type: 'milestone', summary: 'Checked 3 shops' }),
      report({ type: 'complete', summary: 'All prices are below 100', data: { cheapest: 42 } }),
      textReply('Done.'),
    );
    const running = appEvent(
      'app:status_changed',
      appId,
      (f) => (f.data!.state as { runningCount: number }).runningCount === 1,
    );
    const milestone = activityOf(appId, 'milestone');
    const complete = activityOf(appId, 'run_complete');
    const started = okData<{ outcome: string; runId: string }>(await api.post(`/api/apps/${appId}/trigger`));
    assert.equal(started.outcome, 'started');
    assert.match(started.runId, /^[0-9a-f-]{36}$/);
    const runningState = (await running).data!.state as Record<string, unknown>;
    assert.equal(runningState.status, 'running');
    assert.equal(typeof runningState.lastRunAtMs, 'number');
    const m = (await milestone).data!.entry as Record<string, unknown>;
    assert.equal(m.runId, started.runId);
    assert.deepEqual(m.content, { summary: 'Checked 3 shops' });
    assert.deepEqual(Object.keys(m).sort(), ['content', 'id', 'runId', 'ts', 'type']);
    const c = (await complete).data!.entry as Record<string, unknown>;
    assert.deepEqual(c.content, { summary: 'All prices are below 100', data: { cheapest: 42 } });
    await runEnds(appId);
    const state = await stateOf(appId);
    assert.equal(state.status, 'idle');
    assert.equal(state.lastStatus, 'ok');
    assert.equal(state.lastError, null);
    const body = systemOf(0);
    assert.ok(body.includes('You watch the shop prices for the user.'));
    assert.ok(body.includes('report_to_user'));
    assert.ok(!body.includes('AskUserQuestion'), 'nobody answers questions in a run');
    assert.ok(body.includes('manual trigger'));
    const activity = okData<Array<{ type: string; runId: string }>>(await api.get(`/api/apps/${appId}/activity`));
    assert.deepEqual(
      activity.filter((a) => a.runId === started.runId).map((a) => a.type),
      ['run_complete', 'milestone'],
    );
    await waitFor(
      async () => (await api.get(`/api/apps/${appId}/runs/${started.runId}/session`)).body.data?.active === false,
      5000,
    );
    const session = okData<{ runId: string; messages: Array<{ role: string; content: string }> }>(
      await api.get(`/api/apps/${appId}/runs/${started.runId}/session`),
    );
    assert.equal(session.messages[0]!.role, 'user');
    assert.match(session.messages[0]!.content, /manual trigger/);
    assert.equal(session.messages.at(-1)!.content, 'Done.');
    assert.equal((await api.get(`/api/apps/${appId}/runs/nope/session`)).status, 404);
  });

  it('nudges a run that does not report, then fails it as run_error with lastError', async () => {
    model.enqueue(textReply('I looked.'), textReply('Still looking.'), textReply('Nothing to say.'));
    const error = activityOf(appId, 'run_error');
    const started = okData<{ runId: string }>(await api.post(`/api/apps/${appId}/trigger`));
    const entry = (await error).data!.entry as Record<string, unknown>;
    assert.equal(entry.runId, started.runId);
    assert.match((entry.content as { error: string }).error, /report_to_user/);
    assert.equal(model.requests.length, 3, 'two reminders, then the run fails');
    assert.ok(JSON.stringify(model.requests[1]!.body).includes('You have not reported yet'));
    await runEnds(appId);
    const state = await stateOf(appId);
    assert.equal(state.lastStatus, 'error');
    assert.match(state.lastError as string, /report_to_user/);
  });

  it('inject and continue act on an ended run (same runId); bad input names the field; another active run is a conflict', async () => {
    model.enqueue(report({ type: 'complete', summary: 'Checked the red one' }), textReply('Done.'));
    const first = activityOf(appId, 'run_complete');
    const run = okData<{ runId: string }>(await api.post(`/api/apps/${appId}/trigger`));
    await first;
    await runEnds(appId);

    model.enqueue(report({ type: 'complete', summary: 'Checked the blue one' }), textReply('Done again.'));
    const injected = activityOf(appId, 'run_complete');
    assert.deepEqual(
      okData(await api.post(`/api/apps/${appId}/runs/${run.runId}/inject`, { text: 'Check the blue one too' })),
      { runId: run.runId },
    );
    const second = (await injected).data!.entry as { runId: string; content: { summary: string } };
    assert.deepEqual([second.runId, second.content.summary], [run.runId, 'Checked the blue one']);
    assert.ok(JSON.stringify(model.requests[2]!.body).includes('Check the blue one too'), 'the run gets the text');
    await runEnds(appId);

    model.enqueue(report({ type: 'complete', summary: 'Carried on' }), textReply('Done at last.'));
    const continued = activityOf(appId, 'run_complete');
    assert.deepEqual(okData(await api.post(`/api/apps/${appId}/runs/${run.runId}/continue`)), { runId: run.runId });
    assert.equal(((await continued).data!.entry as { runId: string }).runId, run.runId);
    await runEnds(appId);
    const transcript = okData<{ messages: Array<{ content: string }> }>(
      await api.get(`/api/apps/${appId}/runs/${run.runId}/session`),
    ).messages.map((m) => m.content);
    assert.ok(transcript.includes('Check the blue one too') && transcript.includes('Continue.'), 'one transcript');

    const noText = await api.post(`/api/apps/${appId}/runs/${run.runId}/inject`, {});
    assert.equal(noText.status, 400);
    assert.match(noText.body.error, /text/);
    assert.equal((await api.post(`/api/apps/${appId}/runs/nope/continue`)).status, 404);
    model.enqueue({ steps: [{ hang: true }] });
    const other = okData<{ runId: string }>(await api.post(`/api/apps/${appId}/trigger`));
    await model.waitForRequests(7);
    assert.equal((await api.post(`/api/apps/${appId}/runs/${run.runId}/continue`)).status, 409);
    const stopped = activityOf(appId, 'run_error');
    okData(await api.post('/api/agent/stop', { conversationId: `app-run:${appId}` }));
    assert.equal(((await stopped).data!.entry as { runId: string }).runId, other.runId);
    await runEnds(appId);
  });

  it('a failing model ends the run as run_error with the reason; never stuck running', async () => {
    model.enqueue({ status: 400, error: 'model exploded' });
    const error = activityOf(appId, 'run_error');
    assert.equal(okData<{ outcome: string }>(await api.post(`/api/apps/${appId}/trigger`)).outcome, 'started');
    const entry = (await error).data!.entry as { content: { error: string } };
    assert.match(entry.content.error, /model exploded/);
    await runEnds(appId);
    assert.match((await stateOf(appId)).lastError as string, /model exploded/);
  });

  it('skips a run while one is running and while paused; resumes', async () => {
    model.enqueue({ steps: [{ hang: true }] });
    const first = okData<{ outcome: string; runId: string }>(await api.post(`/api/apps/${appId}/trigger`));
    assert.equal(first.outcome, 'started');
    await model.waitForRequests(1);
    const skipped = activityOf(appId, 'run_skipped');
    const second = okData<{ outcome: string; runId: null; reason: string }>(
      await api.post(`/api/apps/${appId}/trigger`),
    );
    assert.equal(second.outcome, 'skipped');
    assert.match(second.reason, /already running/);
    assert.match(((await skipped).data!.entry as { content: { reason: string } }).content.reason, /already running/);
    assert.equal((await api.post(`/api/apps/${appId}/chat/stop`)).status, 200);
    // Stopping the run: recorded as an interrupted run_error.
    const stoppedRun = activityOf(appId, 'run_error');
    okData(await api.post('/api/agent/stop', { conversationId: `app-run:${appId}` }));
    const interrupted = (await stoppedRun).data!.entry as { runId: string; content: { interrupted?: boolean } };
    assert.equal(interrupted.runId, first.runId);
    assert.equal(interrupted.content.interrupted, true);
    await runEnds(appId);

    okData(await api.post(`/api/apps/${appId}/pause`));
    const paused = okData<{ outcome: string; reason: string }>(await api.post(`/api/apps/${appId}/trigger`));
    assert.equal(paused.outcome, 'skipped');
    assert.match(paused.reason, /not active/);
    okData(await api.post(`/api/apps/${appId}/resume`));
    model.enqueue(report({ type: 'output', summary: 'Back at work' }), textReply('ok'));
    const output = activityOf(appId, 'output');
    assert.equal(okData<{ outcome: string }>(await api.post(`/api/apps/${appId}/trigger`)).outcome, 'started');
    assert.deepEqual(((await output).data!.entry as { content: unknown }).content, { summary: 'Back at work' });
    await runEnds(appId);
  });

  it("uses the app's model choice (userOverrides) for runs and chat, else the current model", async () => {
    const added = okData<{ sources: Array<{ id: string; name: string }> }>(
      await api.post('/api/ai-sources/sources', {
        name: 'For the shop',
        provider: 'anthropic',
        apiUrl: model.url,
        apiKey: 'sk-second',
        model: 'second-default',
      }),
    );
    const second = added.sources.find((s) => s.name === 'For the shop')!;
    const patch = (body: object) => apiClient(server).patch(`/api/apps/${appId}/overrides`, body);
    okData(await patch({ modelSourceId: second.id, modelId: 'shop-model', chatReasoningEffort: 'high' }));
    const runEnded = async () => {
      await activityOf(appId, 'run_complete');
      await runEnds(appId);
    };
    try {
      model.enqueue(report({ type: 'complete', summary: 'ok' }), textReply('Done.'));
      okData(await api.post(`/api/apps/${appId}/trigger`));
      await model.waitForRequests(2);
      assert.equal(model.requests[0]!.body.model, 'shop-model', 'the run uses the chosen model');
      await runEnded();

      const thread = `model-choice-${Date.now()}`;
      const ws = await subscribed(thread);
      model.enqueue(textReply('Hello.'));
      okData(
        await api.post(`/api/apps/${appId}/chat/send`, { spaceId: space.id, message: 'hi', conversationId: thread }),
      );
      await ws.next((f) => f.channel === 'agent:complete' && f.data?.conversationId === thread, 15_000);
      ws.close();
      assert.equal(model.requests[2]!.body.model, 'shop-model', 'the chat uses the chosen model');
      assert.ok((model.requests[2]!.body as Record<string, unknown>).thinking, 'and the chosen chat effort');

      // The source alone: its own default model. A source that is gone: the current one.
      okData(await patch({ modelId: null, chatReasoningEffort: null }));
      model.enqueue(report({ type: 'complete', summary: 'ok' }), textReply('Done.'));
      okData(await api.post(`/api/apps/${appId}/trigger`));
      await model.waitForRequests(4);
      assert.equal(model.requests[3]!.body.model, 'second-default');
      await runEnded();
      okData(await patch({ modelSourceId: '00000000-0000-4000-8000-00000000beef' }));
      model.enqueue(report({ type: 'complete', summary: 'ok' }), textReply('Done.'));
      okData(await api.post(`/api/apps/${appId}/trigger`));
      await model.waitForRequests(6);
      assert.equal(model.requests[5]!.body.model, 'scripted-model');
      await runEnded();
    } finally {
      okData(await patch({ modelSourceId: null, modelId: null, chatReasoningEffort: null }));
    }
  });

  it("uninstall stops the app's chat and runs; its threads stay out of the space's list; permanent delete removes them and its data", async () => {
    const busyId = okData<{ appId: string }>(
      await api.post('/api/apps/install', { spec: helperSpec('Busy Helper'), spaceId: space.id }),
    ).appId;
    const ordinary = okData<{ id: string }>(await api.post(`/api/spaces/${space.id}/conversations`, { title: 'Mine' }));
    const defaultThread = `app-chat:${busyId}`;
    const custom = `busy-${Date.now()}`;
    const runThread = `app-run:${busyId}`;
    model.enqueue(textReply('Hello there.'));
    const first = await subscribed(defaultThread);
    okData(await api.post(`/api/apps/${busyId}/chat/send`, { spaceId: space.id, message: 'hi' }));
    await first.next((f) => f.channel === 'agent:complete' && f.data?.conversationId === defaultThread, 15_000);
    first.close();

    const ws = await subscribed(custom);
    model.enqueue({ steps: [{ hang: true }] }, { steps: [{ hang: true }] });
    okData(
      await api.post(`/api/apps/${busyId}/chat/send`, { spaceId: space.id, message: 'wait', conversationId: custom }),
    );
    const run = okData<{ runId: string }>(await api.post(`/api/apps/${busyId}/trigger`));
    await model.waitForRequests(3);
    const listed = okData<Array<{ id: string }>>(await api.get(`/api/spaces/${space.id}/conversations`)).map(
      (c) => c.id,
    );
    assert.ok(listed.includes(ordinary.id), "the space's own conversation is listed");
    for (const id of [defaultThread, custom, runThread]) assert.ok(!listed.includes(id), `${id} is not listed`);

    const stoppedRun = activityOf(busyId, 'run_error');
    const removed = await apiClient(server).del(`/api/apps/${busyId}`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    const error = await ws.next((f) => f.channel === 'agent:error' && f.data?.conversationId === custom, 10_000);
    assert.equal(error.data!.errorType, 'interrupted', 'the chat thread stopped');
    const runError = (await stoppedRun).data!.entry as { runId: string; content: { interrupted?: boolean } };
    assert.deepEqual([runError.runId, runError.content.interrupted], [run.runId, true], 'the run stopped');
    ws.close();
    await waitFor(
      async () => (await api.get(`/api/apps/${busyId}/chat/status`)).body.data.isGenerating === false,
      10_000,
      'nothing generates',
    );
    await waitFor(async () => (await stateOf(busyId)).runningCount === 0, 10_000, 'no run counted');

    // A reinstall finds its threads again.
    okData(await api.post(`/api/apps/${busyId}/reinstall`));
    const kept = okData<Array<{ content: string }>>(await api.get(`/api/apps/${busyId}/chat/messages`));
    assert.deepEqual(
      kept.map((m) => m.content),
      ['hi', 'Hello there.'],
    );
    // A caller cannot take over another conversation as a thread.
    const taken = await api.post(`/api/apps/${busyId}/chat/send`, {
      spaceId: space.id,
      message: 'mine now',
      conversationId: ordinary.id,
    });
    assert.equal(taken.status, 409);
    assert.match(taken.body.error, /conversationId/);

    const dataDir = join(space.path, '.svc', 'apps', busyId);
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'notes.md'), 'remember');
    const deleted = appEvent('app:deleted', busyId);
    const gone = await apiClient(server).del(`/api/apps/${busyId}/permanent`);
    assert.equal(gone.status, 200, JSON.stringify(gone.body));
    await deleted;
    for (const id of [defaultThread, custom, runThread]) {
      const res = await api.get(`/api/spaces/${space.id}/conversations/${encodeURIComponent(id)}`);
      assert.equal(res.status, 404, `${id} is deleted with the app`);
    }
    assert.equal(existsSync(dataDir), false, 'its data folder is deleted');
    assert.equal((await api.get(`/api/spaces/${space.id}/conversations/${ordinary.id}`)).status, 200);
  });

  it('a run past SVC_APP_RUNS_PER_PROCESS waits for a slot (chats do not), then runs', async () => {
    const ids = [];
    for (const name of ['Slot Holder', 'Slot Waiter']) {
      ids.push(
        okData<{ appId: string }>(await api.post('/api/apps/install', { spec: helperSpec(name), spaceId: space.id }))
          .appId,
      );
    }
    const [holder, waiter] = ids as [string, string];
    model.enqueue({ steps: [{ hang: true }] });
    okData(await api.post(`/api/apps/${holder}/trigger`));
    await model.waitForRequests(1);
    const waiting = okData<{ outcome: string; runId: string }>(await api.post(`/api/apps/${waiter}/trigger`));
    assert.equal(waiting.outcome, 'started', 'the run is accepted and waits');
    await waitFor(
      async () => (await api.get(`/api/agent/session/app-run:${waiter}`)).body.data.status === 'running',
      10_000,
      'the waiting run was picked up',
    );
    // A chat is not held up by runs: it gets the next reply, not the waiting run.
    const thread = `slots-${Date.now()}`;
    const ws = await subscribed(thread);
    model.enqueue(textReply('Chats go on.'));
    okData(
      await api.post(`/api/apps/${waiter}/chat/send`, {
        spaceId: space.id,
        message: 'still there?',
        conversationId: thread,
      }),
    );
    await ws.next((f) => f.channel === 'agent:complete' && f.data?.conversationId === thread, 15_000);
    ws.close();
    assert.equal(model.requests.length, 2, 'the waiting run has not called the model');
    assert.ok(JSON.stringify(model.requests[1]!.body).includes('still there?'));

    model.enqueue(report({ type: 'complete', summary: 'My turn came' }), textReply('Done.'));
    const done = activityOf(waiter, 'run_complete');
    const stopped = activityOf(holder, 'run_error');
    okData(await api.post('/api/agent/stop', { conversationId: `app-run:${holder}` }));
    await stopped;
    assert.equal(((await done).data!.entry as { runId: string }).runId, waiting.runId);
    await waitFor(async () => (await stateOf(waiter)).runningCount === 0, 10_000);
  });

  // ── escalation ────────────────────────────────────────────────────────────────────────

  it('escalates: question event, waiting_user; the answer resolves it and starts a follow-up run with it', async () => {
    model.enqueue(
      report({ type: 'escalation', summary: 'Buy the tea at 42?', choices: ['yes', 'no'] }),
      textReply('Asked.'),
    );
    const asked = appEvent('app:escalation:new', appId);
    const started = okData<{ runId: string }>(await api.post(`/api/apps/${appId}/trigger`));
    const question = (await asked).data!;
    assert.deepEqual(
      { ...question, entryId: undefined },
      { appId, entryId: undefined, question: 'Buy the tea at 42?', choices: ['yes', 'no'] },
    );
    const entryId = question.entryId as string;
    await waitFor(async () => (await stateOf(appId)).status === 'waiting_user', 10_000, 'waiting for the user');
    await runEnds(appId);
    const state = await stateOf(appId);
    assert.equal(state.pendingEscalationId, entryId);
    const activity = okData<Array<{ id: string; type: string; runId: string }>>(
      await api.get(`/api/apps/${appId}/activity`),
    );
    assert.ok(activity.some((a) => a.id === entryId && a.type === 'escalation' && a.runId === started.runId));
    // While waiting, a trigger is skipped.
    assert.equal(okData<{ outcome: string }>(await api.post(`/api/apps/${appId}/trigger`)).outcome, 'skipped');

    const bad = await api.post(`/api/apps/${appId}/escalation/${entryId}/respond`, {});
    assert.equal(bad.status, 400);
    assert.equal((await api.post(`/api/apps/${appId}/escalation/nope/respond`, { choice: 'yes' })).status, 404);

    model.enqueue(report({ type: 'complete', summary: 'Bought it' }), textReply('Done.'));
    const resolved = appEvent('app:escalation:resolved', appId);
    const done = activityOf(appId, 'run_complete');
    const answered = appEvent('app:activity_entry:new', appId, (f) => {
      const e = f.data!.entry as { id: string; content: object };
      return e.id === entryId && 'resolution' in e.content;
    });
    const answer = okData<{ outcome: string; runId: string; response: unknown }>(
      await api.post(`/api/apps/${appId}/escalation/${entryId}/respond`, { choice: 'yes', text: 'at most 40' }),
    );
    assert.equal(answer.outcome, 'started');
    assert.notEqual(answer.runId, started.runId);
    assert.deepEqual(answer.response, { choice: 'yes', text: 'at most 40' });
    assert.deepEqual((await resolved).data, { appId, entryId, response: { choice: 'yes', text: 'at most 40' } });
    // The question's entry records the answer, and clients hear the update.
    const updated = (await answered).data!.entry as { type: string; runId: string; content: Record<string, unknown> };
    assert.equal(updated.type, 'escalation');
    assert.equal(updated.runId, started.runId);
    const userResponse = updated.content.userResponse as Record<string, unknown>;
    assert.deepEqual({ ...userResponse, ts: undefined }, { choice: 'yes', text: 'at most 40', ts: undefined });
    assert.equal(typeof userResponse.ts, 'number');
    assert.equal((updated.content.resolution as { reason: string }).reason, 'answered');
    assert.equal(updated.content.question, 'Buy the tea at 42?');
    assert.equal(typeof updated.content.deadlineAt, 'number', 'timeout_hours gives the question a deadline');
    const stored = okData<Array<{ id: string; content: Record<string, unknown> }>>(
      await api.get(`/api/apps/${appId}/activity`),
    ).find((a) => a.id === entryId)!;
    assert.deepEqual(stored.content, updated.content);
    assert.equal(((await done).data!.entry as { runId: string }).runId, answer.runId);
    const followUp = JSON.stringify(model.requests.at(-2)!.body);
    assert.ok(
      followUp.includes('Buy the tea at 42?') && followUp.includes('yes') && followUp.includes('at most 40'),
      'the follow-up run gets the answer',
    );
    await runEnds(appId);
    const after = await stateOf(appId);
    assert.equal(after.status, 'idle');
    assert.equal(after.pendingEscalationId, null);
    assert.equal((await api.post(`/api/apps/${appId}/escalation/${entryId}/respond`, { choice: 'no' })).status, 404);
  });

  it('expires an unanswered question after escalation.timeout_hours: run_error, active again', async () => {
    const quickSpec = { ...helperSpec('Quick Asker'), escalation: { timeout_hours: 0.0005 } }; // 1.8 s
    const quickId = okData<{ appId: string }>(
      await api.post('/api/apps/install', { spec: quickSpec, spaceId: space.id }),
    ).appId;
    model.enqueue(report({ type: 'escalation', summary: 'Anyone there?' }), textReply('Asked.'));
    const asked = appEvent('app:escalation:new', quickId);
    const started = okData<{ runId: string }>(await api.post(`/api/apps/${quickId}/trigger`));
    const entryId = (await asked).data!.entryId as string;
    const closed = appEvent(
      'app:activity_entry:new',
      quickId,
      (f) => {
        const e = f.data!.entry as { id: string; content: object };
        return e.id === entryId && 'resolution' in e.content;
      },
      20_000,
    );
    const expired = await activityOf(quickId, 'run_error', 20_000);
    const closedEntry = (await closed).data!.entry as { content: { resolution?: { reason: string } } };
    assert.equal(closedEntry.content.resolution?.reason, 'expired', 'the question is closed as expired');
    const entry = expired.data!.entry as { runId: string; content: { error: string; entryId: string } };
    assert.equal(entry.runId, started.runId);
    assert.equal(entry.content.entryId, entryId);
    await waitFor(async () => (await stateOf(quickId)).status === 'idle', 10_000, 'active again');
    const state = await stateOf(quickId);
    assert.equal(state.pendingEscalationId, null);
    assert.equal(state.lastStatus, 'error');
    assert.equal(
      (await api.post(`/api/apps/${quickId}/escalation/${entryId}/respond`, { choice: 'late' })).status,
      404,
    );
  });
});
