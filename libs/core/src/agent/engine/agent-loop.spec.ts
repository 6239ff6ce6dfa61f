import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentChannels, type ApprovalRecord } from '#contracts/agent.js';
import type { ApprovalDecision } from '../../ports/turn.repository.port.js';
import {
  failedResponse,
  FakeModelProvider,
  hangingResponse,
  textResponse,
  toolUseResponse,
} from '#testing/fake-model-provider.js';
import { FakeClock } from '#testing/fakes.js';
import { RecordingTurn } from '#testing/recording-turn.js';
import { ModelCallError } from '../../ports/model-provider.port.js';
import { askUserQuestionTool } from '../tools/ask-user-question-tool.js';
import { type AgentTool, ToolInputError } from '../../kernel/tool.js';
import { TurnTexts } from '../turn-endings.js';
import { AgentLoop, type LoopLimits } from './agent-loop.js';
import { ToolSet } from './tool-set.js';

const LIMITS: LoopLimits = { maxSteps: 10, maxRetries: 2, retryBaseMs: 1, maxOutputTokens: 4096 };

function loopWith(provider: FakeModelProvider, limits: Partial<LoopLimits> = {}): AgentLoop {
  return new AgentLoop(provider, new FakeClock(), { ...LIMITS, ...limits });
}

/** A tool that records its inputs and answers with them. */
function echoTool(calls: Array<Record<string, unknown>> = []): AgentTool {
  return {
    name: 'Echo',
    description: 'Echoes its input',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    async run(input) {
      calls.push(input);
      if (typeof input.text !== 'string') throw new ToolInputError('text is required');
      return { output: `echo: ${input.text}`, isError: false };
    },
  };
}

describe('AgentLoop', () => {
  it('a text reply streams as message events, goes to onComplete and ends completed with its usage', async () => {
    const provider = new FakeModelProvider().respond(textResponse('Hi there'));
    const turn = new RecordingTurn({ tools: new ToolSet([echoTool()]) });
    const outcome = await loopWith(provider).run(turn.plan);

    assert.equal(outcome.status, 'completed');
    assert.deepEqual(turn.eventsOn(AgentChannels.message), [
      { content: '', isNewTextBlock: true, isStreaming: false, isComplete: false },
      { delta: 'Hi there', isStreaming: true, isComplete: false },
      { content: 'Hi there', isStreaming: false, isComplete: false },
      { content: 'Hi there', isComplete: true },
    ]);
    assert.equal(turn.completed?.reply, 'Hi there');
    assert.equal(turn.completed?.model, 'fake-model');
    assert.equal(turn.completed?.contextTokens, 120);
    assert.deepEqual(turn.completed?.tokenUsage, {
      inputTokens: 100,
      outputTokens: 20,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      // 100 × $3 + 20 × $15 per million tokens
      totalCostUsd: 0.0006,
      contextWindow: 200_000,
    });
    assert.equal(turn.failed, null);
    const [request] = provider.requests;
    assert.equal(request?.system, 'You are a test assistant.');
    assert.deepEqual(
      request?.tools.map((t) => t.name),
      ['Echo'],
    );
    assert.deepEqual(request?.messages, turn.plan.history);
  });

  it('a tool call round trip: the tool runs, its result is announced and fed back, thoughts are saved', async () => {
    const calls: Array<Record<string, unknown>> = [];
    const provider = new FakeModelProvider().respond(
      toolUseResponse([
        { id: 'tu-1', name: 'Echo', input: { text: 'ping' } },
        { id: 'tu-2', name: 'Missing', input: {} },
        { id: 'tu-3', name: 'Echo', input: {} },
      ]),
      textResponse('Done'),
    );
    const turn = new RecordingTurn({ tools: new ToolSet([echoTool(calls)]) });
    const outcome = await loopWith(provider).run(turn.plan);

    assert.equal(outcome.status, 'completed');
    assert.deepEqual(calls, [{ text: 'ping' }, {}]);
    assert.deepEqual(turn.eventsOn(AgentChannels.toolCall)[0], {
      id: 'tu-1',
      name: 'Echo',
      status: 'running',
      input: { text: 'ping' },
    });
    assert.deepEqual(turn.eventsOn(AgentChannels.toolResult), [
      { toolId: 'tu-1', result: 'echo: ping', isError: false },
      { toolId: 'tu-2', result: 'Unknown tool: Missing', isError: true },
      { toolId: 'tu-3', result: 'text is required', isError: true },
    ]);
    const second = provider.requests[1]!.messages;
    assert.equal(second.length, 3, 'user, assistant tool calls, user tool results');
    assert.deepEqual(second[2], {
      role: 'user',
      content: [
        { type: 'tool_result', toolUseId: 'tu-1', content: 'echo: ping', isError: false },
        { type: 'tool_result', toolUseId: 'tu-2', content: 'Unknown tool: Missing', isError: true },
        { type: 'tool_result', toolUseId: 'tu-3', content: 'text is required', isError: true },
      ],
    });
    assert.equal(turn.savedThoughts.length, 1, 'saved after the tool step');
    const toolThought = turn.savedThoughts[0]!.find((t) => t.toolUseId === 'tu-1');
    assert.equal(toolThought?.toolOutput, 'echo: ping');
    assert.equal(turn.completed?.reply, 'Done');
    assert.equal(turn.completed?.thoughts.length, 3);
    assert.equal(turn.completed?.tokenUsage.inputTokens, 200, 'usage adds up over the steps');
  });

  it("a tool's images (a browser screenshot) reach the model after every tool result of the step", async () => {
    const shot: AgentTool = {
      name: 'Shot',
      description: 'A screenshot',
      inputSchema: { type: 'object' },
      run: async () => ({
        output: 'Screenshot of current viewport.',
        isError: false,
        images: [{ mediaType: 'image/jpeg', data: 'AAAA' }],
      }),
    };
    const provider = new FakeModelProvider().respond(
      toolUseResponse([
        { id: 'tu-1', name: 'Shot', input: {} },
        { id: 'tu-2', name: 'Echo', input: { text: 'x' } },
      ]),
      textResponse('Seen'),
    );
    const turn = new RecordingTurn({ tools: new ToolSet([shot, echoTool()]) });
    assert.equal((await loopWith(provider).run(turn.plan)).status, 'completed');
    assert.deepEqual(provider.requests[1]!.messages[2]!.content, [
      { type: 'tool_result', toolUseId: 'tu-1', content: 'Screenshot of current viewport.', isError: false },
      { type: 'tool_result', toolUseId: 'tu-2', content: 'echo: x', isError: false },
      { type: 'image', mediaType: 'image/jpeg', data: 'AAAA' },
    ]);
  });

  it('a retryable failure before anything streamed is retried and announced, then the reply completes', async () => {
    const provider = new FakeModelProvider().respond(
      failedResponse(new ModelCallError('overloaded', 'server_error', 529, true, 1)),
      textResponse('Recovered'),
    );
    const turn = new RecordingTurn();
    const outcome = await loopWith(provider).run(turn.plan);

    assert.equal(outcome.status, 'completed');
    assert.equal(provider.requests.length, 2);
    assert.deepEqual(turn.eventsOn(AgentChannels.apiRetry), [
      {
        retry: {
          attempt: 1,
          maxRetries: 2,
          delayMs: 1,
          errorStatus: 529,
          errorKind: 'server_error',
          errorMessage: 'overloaded',
        },
      },
      { retry: null },
    ]);
    assert.deepEqual(
      turn.retries.map((r) => r?.attempt ?? null),
      [1, null],
    );
    assert.equal(turn.completed?.reply, 'Recovered');
  });

  it('retries stop at maxRetries; the failure hook gets the model error', async () => {
    const error = (): ModelCallError => new ModelCallError('rate limited', 'rate_limit', 429, true, 1);
    const provider = new FakeModelProvider().respond(
      failedResponse(error()),
      failedResponse(error()),
      failedResponse(error()),
    );
    const turn = new RecordingTurn();
    const outcome = await loopWith(provider).run(turn.plan);

    assert.equal(provider.requests.length, 3);
    assert.equal(outcome.status, 'failed');
    assert.equal(turn.failed?.error, 'Model call failed: rate limited');
    assert.deepEqual(turn.eventsOn(AgentChannels.apiRetry).at(-1), { retry: null });
  });

  it('a provider error goes to the failure hook (not onComplete) with the text streamed so far', async () => {
    const provider = new FakeModelProvider().respond({
      events: [
        { type: 'text_start', index: 0 },
        { type: 'text_delta', index: 0, delta: 'Partial' },
      ],
      error: new ModelCallError('invalid key', 'authentication_failed', 401, false),
    });
    const turn = new RecordingTurn();
    const outcome = await loopWith(provider).run(turn.plan);

    assert.deepEqual(outcome, {
      status: 'failed',
      interrupted: null,
      error: 'Model call failed: invalid key',
      errorFields: { errorCode: 'authentication_failed' },
      tokenUsage: turn.failed?.tokenUsage,
    });
    assert.equal(turn.completed, null);
    assert.equal(turn.failed?.reply, 'Partial');
    assert.equal(turn.failed?.interrupted, null);
    assert.equal(provider.requests.length, 1, 'not retried: not retryable');
  });

  it('a stop mid-stream interrupts the turn, keeping the partial reply', async () => {
    const provider = new FakeModelProvider().respond(hangingResponse('Half a sen'));
    const turn = new RecordingTurn();
    const running = loopWith(provider).run(turn.plan);
    await provider.requestCount(1);
    while (!turn.eventsOn(AgentChannels.message).some((m) => m.delta === 'Half a sen')) {
      await new Promise((r) => setImmediate(r));
    }
    turn.abort('stop');
    const outcome = await running;

    assert.equal(outcome.status, 'interrupted');
    assert.equal(outcome.status === 'interrupted' && outcome.error, TurnTexts.stopped);
    assert.deepEqual(outcome.status === 'interrupted' && outcome.errorFields, { errorType: 'interrupted' });
    assert.equal(turn.failed?.interrupted, 'stop');
    assert.equal(turn.failed?.reply, 'Half a sen');
    assert.equal(turn.completed, null);
  });

  it('a shutdown interrupts with the shutdown text', async () => {
    const provider = new FakeModelProvider().respond(hangingResponse('...'));
    const turn = new RecordingTurn();
    const running = loopWith(provider).run(turn.plan);
    await provider.requestCount(1);
    turn.abort('shutdown');
    const outcome = await running;
    assert.equal(outcome.status === 'interrupted' && outcome.error, TurnTexts.shutdown);
    assert.equal(turn.failed?.interrupted, 'shutdown');
  });

  it('input that arrives while generating joins the next step', async () => {
    const provider = new FakeModelProvider().respond(
      toolUseResponse([{ id: 'tu-1', name: 'Echo', input: { text: 'a' } }]),
      textResponse('Both done'),
    );
    const turn = new RecordingTurn({ tools: new ToolSet([echoTool()]) });
    turn.pendingInput.push('(arrived before the first step)');
    const running = loopWith(provider).run(turn.plan);
    await provider.requestCount(1);
    turn.pendingInput.push('Also do b', 'and c');
    await running;

    const first = provider.requests[0]!.messages;
    assert.deepEqual(first.at(-1), {
      role: 'user',
      content: [
        { type: 'text', text: 'Hello' },
        { type: 'text', text: '(arrived before the first step)' },
      ],
    });
    const last = provider.requests[1]!.messages.at(-1)!;
    assert.equal(last.role, 'user');
    assert.deepEqual(last.content.at(-1), { type: 'text', text: 'Also do b\n\nand c' });
    assert.equal(last.content[0]?.type, 'tool_result', 'joined to the tool results of that step');
  });

  it('AskUserQuestion posts the question, announces it, waits for the answer and feeds it back', async () => {
    const questions = [{ question: 'Which color?', header: 'Color', options: [], multiSelect: false }];
    const provider = new FakeModelProvider().respond(
      toolUseResponse([{ id: 'tu-ask', name: 'AskUserQuestion', input: { questions } }]),
      textResponse('Blue it is'),
    );
    const turn = new RecordingTurn({ tools: new ToolSet([askUserQuestionTool()]) });
    const running = loopWith(provider).run(turn.plan);
    const posted = await turn.questionPosted();

    assert.match(posted.id, /^ask-\d+-[0-9a-f]{6}$/);
    assert.equal(posted.toolUseId, 'tu-ask');
    assert.deepEqual(posted.questions, questions);
    assert.equal(provider.requests.length, 1, 'waits for the answer');
    turn.answerQuestion({ 'Which color?': 'Blue' });
    const outcome = await running;

    assert.equal(outcome.status, 'completed');
    assert.deepEqual(turn.eventsOn(AgentChannels.askQuestion), [{ id: posted.id, questions }]);
    assert.deepEqual(turn.eventsOn(AgentChannels.toolResult), [
      { toolId: 'tu-ask', result: 'The user answered: {"Which color?":"Blue"}', isError: false },
    ]);
    assert.equal(turn.cleared, 1, 'the question is cleared once answered');
  });

  it('a stop while a question waits interrupts the turn and clears the question', async () => {
    const provider = new FakeModelProvider().respond(
      toolUseResponse([{ id: 'tu-ask', name: 'AskUserQuestion', input: { questions: [{ question: 'Go on?' }] } }]),
    );
    const turn = new RecordingTurn({ tools: new ToolSet([askUserQuestionTool()]) });
    const running = loopWith(provider).run(turn.plan);
    await turn.questionPosted();
    turn.abort('stop');
    const outcome = await running;

    assert.equal(outcome.status, 'interrupted');
    assert.equal(turn.cleared, 1);
    assert.equal(provider.requests.length, 1);
  });

  it('AskUserQuestion in a turn nobody can answer tells the model so; bad input is the model’s error', async () => {
    const provider = new FakeModelProvider().respond(
      toolUseResponse([
        { id: 'tu-bad', name: 'AskUserQuestion', input: { questions: 'nope' } },
        { id: 'tu-ok', name: 'AskUserQuestion', input: { questions: [{ question: 'Q?' }] } },
      ]),
      textResponse('OK'),
    );
    const turn = new RecordingTurn({ tools: new ToolSet([askUserQuestionTool()]), questions: false });
    await loopWith(provider).run(turn.plan);

    const results = turn.eventsOn(AgentChannels.toolResult);
    assert.equal(results[0]?.isError, true);
    assert.match(String(results[0]?.result), /^questions must be an array/);
    assert.deepEqual(results[1], {
      toolId: 'tu-ok',
      result: 'Nobody can answer questions in this turn.',
      isError: true,
    });
    assert.equal(turn.posted.length, 0);
  });

  it('the step limit ends the turn as failed with the step-limit text', async () => {
    const provider = new FakeModelProvider().respond(
      toolUseResponse([{ id: 'tu-1', name: 'Echo', input: { text: '1' } }]),
      toolUseResponse([{ id: 'tu-2', name: 'Echo', input: { text: '2' } }]),
      toolUseResponse([{ id: 'tu-3', name: 'Echo', input: { text: '3' } }]),
    );
    const turn = new RecordingTurn({ tools: new ToolSet([echoTool()]) });
    const outcome = await loopWith(provider, { maxSteps: 2 }).run(turn.plan);

    assert.equal(provider.requests.length, 2);
    assert.equal(outcome.status, 'failed');
    assert.equal(turn.failed?.error, TurnTexts.stepLimit);
    assert.equal(turn.failed?.interrupted, null);
  });

  it('a plan’s own step limit overrides the configured one', async () => {
    const provider = new FakeModelProvider().respond(
      toolUseResponse([{ id: 'tu-1', name: 'Echo', input: { text: '1' } }]),
    );
    const turn = new RecordingTurn({ tools: new ToolSet([echoTool()]), maxSteps: 1 });
    await loopWith(provider, { maxSteps: 50 }).run(turn.plan);
    assert.equal(turn.failed?.error, TurnTexts.stepLimit);
  });

  it('a history near the context window is summarized first; the plan is told and the model gets the summary', async () => {
    const provider = new FakeModelProvider().respond(textResponse('SUMMARY OF BEFORE'), textResponse('Continuing'));
    const turn = new RecordingTurn({
      contextTokens: 190_000,
      history: [
        { role: 'user', content: [{ type: 'text', text: 'Old question' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Old answer' }] },
        { role: 'user', content: [{ type: 'text', text: 'New question' }] },
      ],
    });
    const outcome = await loopWith(provider).run(turn.plan);

    assert.equal(outcome.status, 'completed');
    assert.deepEqual(turn.compactions, [{ summary: 'SUMMARY OF BEFORE', preTokens: 190_000 }]);
    assert.deepEqual(turn.eventsOn(AgentChannels.compact), [{ trigger: 'auto', preTokens: 190_000 }]);
    assert.match(JSON.stringify(provider.requests[0]!.messages), /Old question/);
    const reply = provider.requests[1]!.messages;
    assert.deepEqual(reply[0]?.content, [
      { type: 'text', text: '[Summary of the earlier conversation]\nSUMMARY OF BEFORE' },
    ]);
    assert.deepEqual(reply.at(-1), { role: 'user', content: [{ type: 'text', text: 'New question' }] });
    assert.equal(turn.completed?.tokenUsage.inputTokens, 200, 'the summary call counts too');
  });

  it('a hook that fails is the caller’s to handle: run rejects', async () => {
    const provider = new FakeModelProvider().respond(textResponse('x'));
    const turn = new RecordingTurn();
    turn.plan.hooks.onComplete = async () => {
      throw new Error('database down');
    };
    turn.plan.hooks.onFailure = async () => {
      throw new Error('database still down');
    };
    await assert.rejects(loopWith(provider).run(turn.plan), /database still down/);
  });
});

describe('ToolSet', () => {
  const tool = (name: string): AgentTool => ({
    name,
    description: name,
    inputSchema: {},
    run: async () => ({ output: name, isError: false }),
  });

  it('keeps the order tools were given in, adds and removes without changing the original', () => {
    const base = new ToolSet([tool('A'), tool('B')]);
    const more = base.with(tool('report_to_user'), tool('mcp__github__search'));
    assert.deepEqual(more.names(), ['A', 'B', 'report_to_user', 'mcp__github__search']);
    assert.deepEqual(more.without('B').names(), ['A', 'report_to_user', 'mcp__github__search']);
    assert.deepEqual(base.names(), ['A', 'B']);
    assert.deepEqual(
      base.specs().map((s) => s.name),
      ['A', 'B'],
    );
    assert.equal(base.get('B')?.name, 'B');
    assert.equal(base.get('C'), undefined);
  });

  it('refuses two tools of one name', () => {
    assert.throws(() => new ToolSet([tool('A'), tool('A')]), /Two tools are named A/);
    assert.throws(() => new ToolSet([tool('A')]).with(tool('A')), /Two tools are named A/);
  });
});

describe('AgentLoop: tool calls held for approval', () => {
  /** A turn whose approval channel holds Echo and answers with `decide`. */
  function heldTurn(
    calls: Array<Record<string, unknown>>,
    decide: () => Promise<ApprovalDecision | 'timeout' | 'stopped'>,
  ): { turn: RecordingTurn; settled: ApprovalRecord[] } {
    const turn = new RecordingTurn({ tools: new ToolSet([echoTool(calls)]) });
    const settled: ApprovalRecord[] = [];
    turn.plan.io.approvals = {
      holds: (name) => name === 'Echo',
      timeoutSeconds: 5,
      post: async () => undefined,
      waitForDecision: decide,
      settle: async (_pending, record) => void settled.push(record),
    };
    return { turn, settled };
  }
  const echoCall = () => toolUseResponse([{ id: 'tu-1', name: 'Echo', input: { text: 'hi' } }]);

  it('an approved call is announced held, then as it starts, and runs once', async () => {
    const calls: Array<Record<string, unknown>> = [];
    const { turn, settled } = heldTurn(calls, async () => ({ approved: true, by: 'api', at: '2026-01-01T00:00:00Z' }));
    const outcome = await loopWith(new FakeModelProvider().respond(echoCall(), textResponse('ok'))).run(turn.plan);
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(calls, [{ text: 'hi' }]);
    assert.deepEqual(
      turn.eventsOn(AgentChannels.toolCall).map((e) => e.requiresApproval ?? false),
      [true, false],
    );
    assert.deepEqual([settled[0]?.outcome, settled[0]?.decidedBy], ['approved', 'api']);
    const thought = turn.completed!.thoughts.find((t) => t.toolName === 'Echo')!;
    assert.equal(thought.approval?.outcome, 'approved');
  });

  it('a rejection or the deadline gives the model the refusal and runs nothing; a stop ends the turn', async () => {
    for (const [answer, text] of [
      [{ approved: false, by: 'web', at: 'x', reason: 'no' }, 'The user rejected this tool call: no'],
      ['timeout', 'The user rejected this tool call: nobody answered within 5 seconds'],
    ] as const) {
      const calls: Array<Record<string, unknown>> = [];
      const { turn } = heldTurn(calls, async () => answer);
      const provider = new FakeModelProvider().respond(echoCall(), textResponse('ok'));
      assert.equal((await loopWith(provider).run(turn.plan)).status, 'completed');
      assert.deepEqual(calls, []);
      assert.deepEqual(turn.eventsOn(AgentChannels.toolResult), [{ toolId: 'tu-1', result: text, isError: true }]);
      assert.ok(JSON.stringify(provider.requests[1]!.messages).includes(text));
    }
    const calls: Array<Record<string, unknown>> = [];
    const { turn, settled } = heldTurn(calls, async () => {
      turn.abort('stop');
      return 'stopped';
    });
    const outcome = await loopWith(new FakeModelProvider().respond(echoCall())).run(turn.plan);
    assert.equal(outcome.status, 'interrupted');
    assert.deepEqual(calls, []);
    assert.equal(settled[0]?.outcome, 'stopped');
  });
});
