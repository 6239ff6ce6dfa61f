import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { apiClient, okData } from '#testing/api-client.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { sleep, waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

for (const provider of ['anthropic', 'openai'] as const) {
  describe(`agent turns (${provider})`, () => {
    let model: ScriptedModelServer;
    let server: TestServer;
    let spaceId: string;
    let spacePath: string;
    const api = () => apiClient(server);
    const post = (path: string, body: object) => api().post(path, body);
    const get = (path: string) => api().get(path);

    async function conversation(): Promise<string> {
      return okData<{ id: string }>(await post(`/api/spaces/${spaceId}/conversations`, { title: 't' })).id;
    }
    async function subscribed(conversationId: string): Promise<WsTestClient> {
      const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
      ws.send({ type: 'subscribe', payload: { conversationId } });
      await ws.roundTrip();
      return ws;
    }
    /** The conversation's stored messages as [role, content] pairs, in order. */
    const storedMessages = async (conversationId: string): Promise<Array<[string, string]>> =>
      (
        (await get(`/api/spaces/${spaceId}/conversations/${conversationId}`)).body.data.messages as Array<{
          role: string;
          content: string;
        }>
      ).map((m) => [m.role, m.content]);
    const send = (conversationId: string, message: string, extra: object = {}) =>
      post('/api/agent/message', { spaceId, conversationId, message, ...extra });
    /** Frames of one conversation's events, up to and including agent:complete. */
    async function turnEvents(ws: WsTestClient, timeoutMs = 15_000): Promise<Frame[]> {
      await ws.event('agent:complete', timeoutMs);
      await ws.roundTrip();
      return ws.raw.map((r) => JSON.parse(r) as Frame).filter((f) => f.type === 'event');
    }

    before(async () => {
      model = await ScriptedModelServer.start();
      server = await startServer({
        env: {
          SVC_AI_PROVIDER: provider,
          SVC_AI_API_URL: model.url,
          SVC_AI_API_KEY: 'sk-scripted',
          SVC_AI_MODEL: 'scripted-model',
          SVC_AGENT_RETRY_BASE_MS: '20',
          SVC_AGENT_MAX_RETRIES: '2',
        },
      });
      const space = await post('/api/spaces', { name: 'agent space' });
      spaceId = space.body.data.id;
      spacePath = space.body.data.path;
    });
    after(async () => {
      await server.stop();
      await model.close();
    });
    beforeEach(() => model.reset());

    it('accepts a message at once and streams a reply whose deltas make the final content', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue({
        steps: [
          { text: 'Hello' },
          { delayMs: 20 },
          { text: ', wor' },
          { text: 'ld!' },
          { usage: { input: 120, output: 7 } },
        ],
      });
      const res = await send(id, 'Say hello');
      assert.deepEqual([res.status, res.body], [200, { success: true }]);
      const events = await turnEvents(ws);
      const channels = events.map((e) => e.channel);
      assert.equal(channels[0], 'agent:turn-start');
      assert.deepEqual(events[0]!.data, { type: 'turn-start', spaceId, conversationId: id, seq: events[0]!.data!.seq });
      assert.ok(channels.includes('agent:session-info'));
      const messages = events.filter((e) => e.channel === 'agent:message').map((e) => e.data!);
      assert.deepEqual(messages[0], {
        content: '',
        isNewTextBlock: true,
        isStreaming: false,
        isComplete: false,
        spaceId,
        conversationId: id,
        seq: messages[0]!.seq,
      });
      const deltas = messages.filter((m) => typeof m.delta === 'string');
      assert.ok(deltas.every((d) => d.isStreaming === true && d.isComplete === false));
      const final = messages.find((m) => m.isComplete === true)!;
      assert.equal(deltas.map((d) => d.delta).join(''), 'Hello, world!');
      assert.equal(final.content, 'Hello, world!');
      // Assembling as the spec says gives the same text.
      let text = '';
      for (const m of messages) text = typeof m.delta === 'string' ? text + m.delta : (m.content as string);
      assert.equal(text, 'Hello, world!');
      const complete = events[events.length - 1]!;
      assert.equal(complete.channel, 'agent:complete');
      assert.equal(typeof complete.data!.duration, 'number');
      const usage = complete.data!.tokenUsage as Record<string, number>;
      assert.equal(usage.inputTokens, 120);
      assert.equal(usage.outputTokens, 7);
      for (const k of ['cacheReadTokens', 'cacheCreationTokens', 'totalCostUsd', 'contextWindow'])
        assert.equal(typeof usage[k], 'number');
      // seq increases per conversation.
      const seqs = events.map((e) => e.data!.seq as number);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
      );
      assert.equal(new Set(seqs).size, seqs.length);
      // Stored: the user message and the reply.
      assert.deepEqual(await storedMessages(id), [
        ['user', 'Say hello'],
        ['assistant', 'Hello, world!'],
      ]);
      assert.equal((await get(`/api/agent/generating/${id}`)).body.data, false);
      // The model got the user's message and the tools.
      const [sent] = model.requests;
      assert.ok(JSON.stringify(sent!.body).includes('Say hello'));
      assert.ok(JSON.stringify(sent!.body).includes('AskUserQuestion'));
      ws.close();
    });

    it("sends session-info only on a conversation's first turn", async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      await send(id, 'one');
      assert.equal((await turnEvents(ws)).filter((e) => e.channel === 'agent:session-info').length, 1);
      ws.raw.length = 0;
      await send(id, 'two');
      assert.equal((await turnEvents(ws)).filter((e) => e.channel === 'agent:session-info').length, 0);
      ws.close();
    });

    it('runs a Write tool call: file created, tool events, thoughts stored', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue(
        {
          steps: [
            { thinking: 'I should write the file.' },
            { text: 'Writing it.' },
            {
              toolCall: { id: 'toolu_w1', name: 'Write', input: { file_path: 'notes/hello.txt', content: 'hi there' } },
            },
          ],
        },
        { steps: [{ text: 'Done: created notes/hello.txt.' }] },
      );
      await send(id, 'create a file');
      const events = await turnEvents(ws);
      assert.equal(readFileSync(join(spacePath, 'notes', 'hello.txt'), 'utf8'), 'hi there');
      const call = events.find((e) => e.channel === 'agent:tool-call')!.data!;
      assert.deepEqual(
        [call.id, call.name, call.status, call.input],
        ['toolu_w1', 'Write', 'running', { file_path: 'notes/hello.txt', content: 'hi there' }],
      );
      const result = events.find((e) => e.channel === 'agent:tool-result')!.data!;
      assert.equal(result.toolId, 'toolu_w1');
      assert.equal(result.isError, false);
      assert.match(result.result as string, /Created/);
      const thoughtStarts = events
        .filter((e) => e.channel === 'agent:thought')
        .map((e) => e.data!.thought as Record<string, unknown>);
      assert.ok(thoughtStarts.some((t) => t.type === 'thinking' && String(t.id).startsWith('thought-thinking-')));
      const toolThought = thoughtStarts.find((t) => t.type === 'tool_use')!;
      assert.ok(String(toolThought.id).startsWith('thought-tool-'));
      assert.equal(toolThought.toolName, 'Write');
      const deltas = events.filter((e) => e.channel === 'agent:thought-delta').map((e) => e.data!);
      assert.ok(
        deltas.some(
          (d) =>
            d.isToolInput === true &&
            d.isComplete === true &&
            (d.toolInput as Record<string, unknown>).file_path === 'notes/hello.txt',
        ),
      );
      assert.ok(
        deltas.some((d) => d.isToolResult === true && (d.toolResult as Record<string, unknown>).isError === false),
      );
      assert.ok(deltas.some((d) => d.isComplete === true && d.content === 'I should write the file.'));
      const final = events.find((e) => e.channel === 'agent:message' && e.data!.isComplete === true)!.data!;
      assert.equal(final.content, 'Writing it.\n\nDone: created notes/hello.txt.');
      // The second model call carried the tool result.
      const second = JSON.stringify(model.requests[1]!.body);
      assert.ok(second.includes('toolu_w1') && second.includes('Created'));
      // Thoughts of the reply are readable.
      const stored = (await get(`/api/spaces/${spaceId}/conversations/${id}`)).body.data.messages as Array<{
        id: string;
        role: string;
      }>;
      const reply = stored.find((m) => m.role === 'assistant')!;
      const thoughts = (await get(`/api/spaces/${spaceId}/conversations/${id}/messages/${reply.id}/thoughts`)).body
        .data as Array<Record<string, unknown>>;
      assert.ok(
        thoughts.some((t) => t.type === 'tool_use' && t.toolName === 'Write' && typeof t.toolOutput === 'string'),
      );
      ws.close();
    });

    it('keeps tools inside the workspace: a path outside is refused to the model', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue(
        {
          steps: [
            {
              toolCall: {
                id: 'toolu_x',
                name: 'Write',
                input: { file_path: '/tmp/svc-escape-test.txt', content: 'no' },
              },
            },
          ],
        },
        { steps: [{ text: 'Could not.' }] },
      );
      await send(id, 'escape');
      const events = await turnEvents(ws);
      const result = events.find((e) => e.channel === 'agent:tool-result')!.data!;
      assert.equal(result.isError, true);
      assert.match(result.result as string, /outside the workspace/);
      assert.ok(!existsSync('/tmp/svc-escape-test.txt'));
      ws.close();
    });

    it('asks a question, refuses a wrong id, and resumes with the answer', async () => {
      const id = await conversation();
      const observer = await WsTestClient.signedIn(server.wsUrl, server.password); // not subscribed
      const ws = await subscribed(id);
      const questions = [
        {
          question: 'Which color?',
          header: 'Color',
          options: [
            { label: 'Red', description: 'warm' },
            { label: 'Blue', description: 'cool' },
          ],
          multiSelect: false,
        },
      ];
      model.enqueue(
        { steps: [{ toolCall: { id: 'toolu_q', name: 'AskUserQuestion', input: { questions } } }] },
        { steps: [{ text: 'Blue it is.' }] },
      );
      await send(id, 'pick a color with me');
      const asked = await observer.event('agent:ask-question', 10_000);
      assert.match(asked.data!.id as string, /^ask-\d+-[a-z0-9]+$/);
      assert.deepEqual(asked.data!.questions, questions);
      const state = (await get(`/api/agent/session/${id}`)).body.data;
      assert.equal(state.active, true);
      assert.equal(state.pendingQuestion.id, asked.data!.id);
      const wrong = await post('/api/agent/answer-question', {
        conversationId: id,
        id: 'ask-0-nope',
        answers: { Color: 'Blue' },
      });
      assert.deepEqual(wrong.body, { success: false, error: 'No pending question found for id: ask-0-nope' });
      assert.equal((await post('/api/agent/answer-question', { conversationId: id, id: asked.data!.id })).status, 400);
      const right = await post('/api/agent/answer-question', {
        conversationId: id,
        id: asked.data!.id,
        answers: { Color: 'Blue' },
      });
      assert.deepEqual(right.body, { success: true });
      const events = await turnEvents(ws);
      assert.equal(
        events.find((e) => e.channel === 'agent:message' && e.data!.isComplete)!.data!.content,
        'Blue it is.',
      );
      assert.ok(JSON.stringify(model.requests[1]!.body).includes('Blue'));
      const again = await post('/api/agent/answer-question', {
        conversationId: id,
        id: asked.data!.id,
        answers: { Color: 'Red' },
      });
      assert.equal(again.body.success, false);
      observer.close();
      ws.close();
    });

    it('stops mid-stream: interrupted error, complete, not generating, partial reply kept', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue({ steps: [{ text: 'Partial ' }, { text: 'answer' }, { hang: true }] });
      await send(id, 'long answer please');
      await waitFor(
        () => ws.frames.filter((f) => f.channel === 'agent:message' && typeof f.data?.delta === 'string').length >= 2,
        10_000,
        'deltas',
      );
      assert.equal((await get(`/api/agent/generating/${id}`)).body.data, true);
      assert.deepEqual((await get('/api/agent/sessions')).body.data, [id]);
      const stopped = await post('/api/agent/stop', { conversationId: id });
      assert.deepEqual(stopped.body, { success: true });
      const error = await ws.event('agent:error', 10_000);
      assert.equal(error.data!.errorType, 'interrupted');
      await ws.event('agent:complete');
      assert.equal((await get(`/api/agent/generating/${id}`)).body.data, false);
      assert.deepEqual((await post('/api/agent/stop', { conversationId: id })).body, { success: true });
      assert.deepEqual((await post('/api/agent/stop', {})).body, { success: true });
      await waitFor(() => model.requests[0]?.outcome === 'client_closed', 5000, 'model stream closed');
      const stored = (await get(`/api/spaces/${spaceId}/conversations/${id}`)).body.data.messages as Array<{
        role: string;
        content: string;
      }>;
      assert.deepEqual(
        stored.map((m) => m.role),
        ['user', 'assistant'],
      );
      assert.equal(stored[1]!.content, 'Partial answer', 'what streamed before the stop is kept');
      ws.close();
    });

    it('a stop cancels a pending question; a late answer is refused', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue({
        steps: [
          {
            toolCall: {
              id: 'toolu_q2',
              name: 'AskUserQuestion',
              input: { questions: [{ question: 'Go?', header: 'Go', options: [], multiSelect: false }] },
            },
          },
        ],
      });
      await send(id, 'ask me');
      const asked = await ws.event('agent:ask-question', 10_000);
      await post('/api/agent/stop', { conversationId: id });
      assert.equal((await ws.event('agent:error', 10_000)).data!.errorType, 'interrupted');
      await ws.event('agent:complete');
      const late = await post('/api/agent/answer-question', {
        conversationId: id,
        id: asked.data!.id,
        answers: { Go: 'yes' },
      });
      assert.deepEqual(late.body, { success: false, error: `No pending question found for id: ${asked.data!.id}` });
      ws.close();
    });

    it('retries 429 and 500 with agent:api-retry events, then {retry:null}', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue(
        { status: 429, headers: { 'retry-after': '0' } },
        { status: 500 },
        { steps: [{ text: 'Recovered.' }] },
      );
      await send(id, 'flaky');
      const events = await turnEvents(ws);
      const retries = events
        .filter((e) => e.channel === 'agent:api-retry')
        .map((e) => e.data!.retry as Record<string, unknown> | null);
      assert.equal(retries.length, 3);
      assert.deepEqual(
        { ...retries[0], delayMs: 0 },
        {
          attempt: 1,
          maxRetries: 2,
          delayMs: 0,
          errorStatus: 429,
          errorKind: 'rate_limit',
          errorMessage: retries[0]!.errorMessage,
        },
      );
      assert.equal(retries[1]!.attempt, 2);
      assert.equal(retries[1]!.errorStatus, 500);
      assert.equal(retries[1]!.errorKind, 'server_error');
      assert.equal(retries[2], null);
      assert.equal(
        events.find((e) => e.channel === 'agent:message' && e.data!.isComplete)!.data!.content,
        'Recovered.',
      );
      assert.equal(model.requests.length, 3);
      ws.close();
    });

    it('gives up after the retries with agent:error, then agent:complete', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue({ status: 503 }, { status: 503 }, { status: 503 });
      await send(id, 'doomed');
      const events = await turnEvents(ws);
      const error = events.find((e) => e.channel === 'agent:error')!.data!;
      assert.equal(error.errorCode, 'server_error');
      assert.equal(events[events.length - 1]!.channel, 'agent:complete');
      assert.equal((await get(`/api/agent/generating/${id}`)).body.data, false);
      ws.close();
    });

    it('records input sent while generating and gives it to the model at the next step', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue(
        {
          steps: [
            { text: 'Working' },
            { delayMs: 600 },
            {
              toolCall: {
                id: 'toolu_t',
                name: 'TodoWrite',
                input: { todos: [{ content: 'a', status: 'in_progress' }] },
              },
            },
          ],
        },
        { steps: [{ text: 'Got your addition.' }] },
      );
      await send(id, 'start');
      await ws.event('agent:turn-start');
      await waitFor(() => model.requests.length >= 1, 5000);
      const res = await send(id, 'also do B');
      assert.deepEqual(res.body, { success: true });
      const arrived = await ws.event('agent:input-arrived');
      assert.equal(arrived.data!.live, true);
      assert.deepEqual(
        (arrived.data!.messages as Array<{ content: string }>).map((m) => m.content),
        ['also do B'],
      );
      await ws.event('agent:complete', 15_000);
      assert.ok(JSON.stringify(model.requests[1]!.body).includes('also do B'));
      assert.equal(ws.frames.filter((f) => f.channel === 'agent:turn-start').length, 0, 'no second turn');
      ws.close();
    });

    it('answers input sent during the last model call with a follow-up turn, after the reply it missed', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue(
        { steps: [{ text: 'First answer.' }, { delayMs: 700 }] },
        { steps: [{ text: 'Answer to the late one.' }] },
      );
      await send(id, 'start');
      await ws.event('agent:message');
      // The model is answering without a tool call: no later step of this turn reads input.
      assert.deepEqual((await send(id, 'late one')).body, { success: true });
      await ws.event('agent:input-arrived');
      await ws.event('agent:complete', 15_000);
      await ws.event('agent:turn-start', 15_000);
      await ws.event('agent:complete', 15_000);
      const lastMessage = (model.requests[1]!.body.messages as Array<{ role: string }>).at(-1)!;
      assert.equal(lastMessage.role, 'user');
      assert.ok(JSON.stringify(lastMessage).includes('late one'), JSON.stringify(lastMessage));
      assert.deepEqual(await storedMessages(id), [
        ['user', 'start'],
        ['assistant', 'First answer.'],
        ['user', 'late one'],
        ['assistant', 'Answer to the late one.'],
      ]);
      assert.equal((await get(`/api/agent/generating/${id}`)).body.data, false);
      ws.close();
    });

    it('a stop voids unhandled input with agent:input-stopped', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue({ steps: [{ text: 'x' }, { hang: true }] });
      await send(id, 'first');
      await ws.event('agent:message');
      await send(id, 'second, never handled');
      await ws.event('agent:input-arrived');
      await post('/api/agent/stop', { conversationId: id });
      const voided = await ws.event('agent:input-stopped', 10_000);
      assert.deepEqual(
        (voided.data!.messages as Array<{ content: string }>).map((m) => m.content),
        ['second, never handled'],
      );
      await ws.event('agent:complete');
      ws.close();
    });

    it('compacts a conversation near the context window and continues coherently', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue({ steps: [{ text: 'First answer.' }, { usage: { input: 120_000, output: 10 } }] });
      await send(id, 'remember: the code word is PELICAN');
      await turnEvents(ws);
      ws.raw.length = 0;
      model.enqueue(
        { steps: [{ text: 'Summary: the user set the code word PELICAN.' }] },
        { steps: [{ text: 'The code word is PELICAN.' }] },
      );
      await send(id, 'what is the code word?');
      const events = await turnEvents(ws);
      const compact = events.find((e) => e.channel === 'agent:compact')!;
      assert.equal(compact.data!.trigger, 'auto');
      assert.ok((compact.data!.preTokens as number) >= 120_000);
      const main = JSON.stringify(model.requests[model.requests.length - 1]!.body);
      assert.ok(main.includes('Summary: the user set the code word PELICAN.'));
      assert.ok(main.includes('what is the code word?'));
      assert.ok(!main.includes('First answer.'), 'older turns were replaced by the summary');
      ws.close();
    });

    it('replays missed events after a reconnect, and sends stream:gap when the log cannot', async () => {
      const id = await conversation();
      const first = await subscribed(id);
      model.enqueue({ steps: [{ text: 'one' }, { text: ' two' }] });
      await send(id, 'go');
      const events = await turnEvents(first);
      first.close();
      const seqs = events.map((e) => e.data!.seq as number);
      const midway = seqs[2]!;
      const again = await WsTestClient.signedIn(server.wsUrl, server.password);
      again.send({ type: 'subscribe', payload: { conversationId: id, afterSeq: midway } });
      await again.roundTrip();
      const replayed = again.frames.filter((f) => f.type === 'event').map((f) => f.data!.seq as number);
      assert.deepEqual(
        replayed,
        seqs.filter((s) => s > midway),
      );
      const last = seqs[seqs.length - 1]!;
      const future = await WsTestClient.signedIn(server.wsUrl, server.password);
      future.send({ type: 'subscribe', payload: { conversationId: id, afterSeq: last + 1000 } });
      const gap = await future.event('stream:gap');
      assert.deepEqual(gap.data, { conversationId: id, fromSeq: last + 1 });
      // Without afterSeq: exactly the spec's behaviour (nothing replayed).
      const plain = await WsTestClient.signedIn(server.wsUrl, server.password);
      plain.send({ type: 'subscribe', payload: { conversationId: id } });
      await plain.roundTrip();
      assert.equal(plain.frames.length, 0);
      for (const ws of [again, future, plain]) ws.close();
    });

    it('shows the workspace memory to the model from the start of a conversation', async () => {
      mkdirSync(join(spacePath, '.svc'), { recursive: true });
      writeFileSync(join(spacePath, '.svc', 'memory.md'), '# now\nThe deploy target is ALBATROSS.\n');
      try {
        const id = await conversation();
        const ws = await subscribed(id);
        await send(id, 'where do we deploy?');
        await turnEvents(ws);
        ws.raw.length = 0;
        await send(id, 'and again?');
        await turnEvents(ws);
        for (const req of model.requests)
          assert.ok(JSON.stringify(req.body).includes('ALBATROSS'), 'memory in every call of the conversation');
        assert.ok(
          JSON.stringify(model.requests[0]!.body).includes('.svc/memory.md'),
          'the system prompt explains the memory file',
        );
        ws.close();
        // The snapshot is kept with the conversation's first message only.
        const userMessages = async (conversationId: string) =>
          (
            (await get(`/api/spaces/${spaceId}/conversations/${conversationId}`)).body.data.messages as Array<{
              role: string;
              memorySnapshot?: unknown;
            }>
          ).filter((m) => m.role === 'user');
        const kept = await userMessages(id);
        assert.equal(kept.length, 2);
        assert.match(String(kept[0]!.memorySnapshot), /ALBATROSS/);
        assert.equal(kept[1]!.memorySnapshot, undefined);
        // A first message the server does not expect to be the first (here the conversation's
        // first submission went to another space and was not found; likewise one created before
        // a restart or on another replica) finds out with its write and still keeps the snapshot.
        const later = await conversation();
        const elsewhere = (await post('/api/spaces', { name: 'memory elsewhere' })).body.data.id as string;
        try {
          const lost = await post('/api/agent/message', { spaceId: elsewhere, conversationId: later, message: 'x' });
          assert.equal(lost.status, 404);
        } finally {
          await api().del(`/api/spaces/${elsewhere}`);
        }
        const laterWs = await subscribed(later);
        await send(later, 'where, again?');
        await turnEvents(laterWs);
        laterWs.close();
        const laterKept = await userMessages(later);
        assert.equal(laterKept.length, 1);
        assert.match(String(laterKept[0]!.memorySnapshot), /ALBATROSS/);
        // With memory turned off (the space as the request sees it follows the change), none.
        assert.equal(
          (await api().put(`/api/spaces/${spaceId}/preferences`, { memory: { enabled: false } })).status,
          200,
        );
        try {
          const off = await conversation();
          const offWs = await subscribed(off);
          await send(off, 'and now?');
          await turnEvents(offWs);
          offWs.close();
          assert.equal((await userMessages(off))[0]!.memorySnapshot, undefined);
        } finally {
          await api().put(`/api/spaces/${spaceId}/preferences`, { memory: { enabled: true } });
        }
      } finally {
        rmSync(join(spacePath, '.svc', 'memory.md'), { force: true });
      }
    });

    it('validates messages and answers the small operations', async () => {
      const id = await conversation();
      const missing = await post('/api/agent/message', { spaceId, conversationId: id });
      assert.equal(missing.status, 400);
      assert.match(missing.body.error, /message/);
      assert.equal(
        (await post('/api/agent/message', { spaceId, conversationId: id, message: 'x', reasoningEffort: 'extreme' }))
          .status,
        400,
      );
      assert.equal(
        (
          await post('/api/agent/message', {
            spaceId,
            conversationId: '9b3e0e52-0000-4000-8000-000000000000',
            message: 'x',
          })
        ).status,
        404,
      );
      // A conversation of another space is not found either; an unknown space is.
      const elsewhere = (await post('/api/spaces', { name: 'agent elsewhere' })).body.data.id as string;
      const notThere = await post('/api/agent/message', { spaceId: elsewhere, conversationId: id, message: 'x' });
      assert.equal(notThere.status, 404);
      assert.equal(notThere.body.error, 'Conversation not found');
      const noSpace = await post('/api/agent/message', {
        spaceId: '9b3e0e52-0000-4000-8000-000000000001',
        conversationId: id,
        message: 'x',
      });
      assert.equal(noSpace.status, 404);
      assert.equal(noSpace.body.error, 'Space not found');
      assert.equal((await api().del(`/api/spaces/${elsewhere}`)).status, 200);
      const gone = await post('/api/agent/message', { spaceId: elsewhere, conversationId: id, message: 'x' });
      assert.equal(gone.status, 404);
      assert.equal(gone.body.error, 'Space not found');
      const big = await post('/api/agent/message', {
        spaceId,
        conversationId: id,
        message: 'x',
        images: ['a'.repeat(110 * 1024)],
      });
      assert.equal(big.status, 413);
      assert.deepEqual((await post('/api/agent/approve', { conversationId: id })).body, { success: true });
      assert.deepEqual((await post('/api/agent/reject', { conversationId: id })).body, { success: true });
      const toolsets = (await post('/api/agent/toolsets/list', { spaceId, conversationId: id })).body.data as Array<
        Record<string, unknown>
      >;
      assert.ok(
        toolsets.every(
          (t) =>
            typeof t.id === 'string' &&
            typeof t.displayName === 'string' &&
            typeof t.summary === 'string' &&
            typeof t.open === 'boolean',
        ),
      );
      const caps = (await get('/api/agent/engine-capabilities')).body.data;
      assert.ok((caps.tools as string[]).includes('Bash'));
      const state = (await get(`/api/agent/session/${id}`)).body.data;
      assert.deepEqual([state.active, state.pendingQuestion, state.pendingRetry], [false, null, null]);
      assert.equal((await get('/api/agent/generating/nope')).body.data, false);
    });

    it('runs Bash in the workspace folder and Read/Edit/Glob/Grep on its files', async () => {
      const id = await conversation();
      const ws = await subscribed(id);
      model.enqueue(
        {
          steps: [{ toolCall: { id: 't1', name: 'Bash', input: { command: 'pwd && echo hello > bash.txt && env' } } }],
        },
        {
          steps: [
            {
              toolCall: {
                id: 't2',
                name: 'Edit',
                input: { file_path: 'bash.txt', old_string: 'hello', new_string: 'goodbye' },
              },
            },
          ],
        },
        { steps: [{ toolCall: { id: 't3', name: 'Read', input: { file_path: `${spacePath}/bash.txt` } } }] },
        { steps: [{ toolCall: { id: 't4', name: 'Glob', input: { pattern: '**/*.txt' } } }] },
        { steps: [{ toolCall: { id: 't5', name: 'Grep', input: { pattern: 'good', output_mode: 'content' } } }] },
        { steps: [{ text: 'All done.' }] },
      );
      await send(id, 'use the tools');
      const events = await turnEvents(ws, 20_000);
      const results = Object.fromEntries(
        events.filter((e) => e.channel === 'agent:tool-result').map((e) => [e.data!.toolId, e.data!]),
      );
      assert.match(results.t1!.result as string, new RegExp(spacePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      assert.equal(readFileSync(join(spacePath, 'bash.txt'), 'utf8'), 'goodbye\n');
      const commandEnv = results.t1!.result as string;
      for (const secret of [server.password, 'sk-scripted', 'SVC_REMOTE_PASSWORD', 'DATABASE_URL']) {
        assert.ok(!commandEnv.includes(secret), `the command's environment exposes ${secret}`);
      }
      assert.match(results.t3!.result as string, /1\tgoodbye/);
      assert.match(results.t4!.result as string, /bash\.txt/);
      assert.match(results.t5!.result as string, /bash\.txt:1:goodbye/);
      for (const r of Object.values(results) as Array<Record<string, unknown>>)
        assert.equal(r.isError, false, JSON.stringify(r));
      ws.close();
    });
  });
}

describe('agent without a model source', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.stop());

  it('accepts the message, then ends the turn with an error saying how to configure a model', async () => {
    const api = apiClient(server);
    const space = (await api.get('/api/spaces/svc')).body.data;
    const conv = (await api.post(`/api/spaces/${space.id}/conversations`, {})).body.data;
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    const res = await api.post('/api/agent/message', { spaceId: space.id, conversationId: conv.id, message: 'hi' });
    assert.deepEqual(res.body, { success: true });
    const error = await ws.event('agent:error', 10_000);
    assert.match(error.data!.error as string, /No model is configured/);
    assert.match(error.data!.error as string, /\/api\/ai-sources\/sources/);
    await ws.event('agent:complete');
    await sleep(100);
    assert.equal((await api.get(`/api/agent/generating/${conv.id}`)).body.data, false);
    ws.close();
  });
});

describe('SIGTERM during a turn', () => {
  it('ends the running turn as interrupted, tells the socket, exits 0 within 10 s, and the record stays consistent', async () => {
    const model = await ScriptedModelServer.start();
    const env = {
      SVC_AI_PROVIDER: 'anthropic',
      SVC_AI_API_URL: model.url,
      SVC_AI_API_KEY: 'k',
      SVC_AI_MODEL: 'scripted-model',
    };
    const services = testMode() === 'services' ? await createSharedServices() : undefined;
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-sigterm-'));
    try {
      const server = await startServer({ env, dataDir, services });
      const api = apiClient(server);
      const space = (await api.get('/api/spaces/svc')).body.data;
      const conv = (await api.post(`/api/spaces/${space.id}/conversations`, {})).body.data;
      const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
      ws.send({ type: 'subscribe', payload: { conversationId: conv.id } });
      await ws.roundTrip();
      model.enqueue({ steps: [{ text: 'half a reply' }, { hang: true }] });
      await api.post('/api/agent/message', { spaceId: space.id, conversationId: conv.id, message: 'long job' });
      await ws.event('agent:message', 10_000);
      const sent = Date.now();
      server.process.kill('SIGTERM');
      const error = await ws.event('agent:error', 10_000);
      assert.equal(error.data!.errorType, 'interrupted');
      await ws.event('agent:complete', 5_000);
      const { code } = await server.exited;
      assert.equal(code, 0);
      assert.ok(Date.now() - sent < 10_000);
      await server.stop();

      const again = await startServer({ env, dataDir, services });
      const againApi = apiClient(again);
      assert.equal((await againApi.get(`/api/agent/generating/${conv.id}`)).body.data, false);
      const messages = (await againApi.get(`/api/spaces/${space.id}/conversations/${conv.id}`)).body.data
        .messages as Array<{ role: string; content: string }>;
      assert.deepEqual(
        messages.map((m) => [m.role, m.content]),
        [
          ['user', 'long job'],
          ['assistant', 'half a reply'],
        ],
      );
      ws.close();
      await again.stop();
    } finally {
      await model.close();
      await services?.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
