import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  ModelCallError,
  type ModelEndpoint,
  type ModelMessage,
  type ModelProvider,
  type ModelProviderKind,
  type ModelRequest,
  type ModelStreamEvent,
} from '#core/ports/model-provider.port.js';
import { AnthropicAdapter } from '#infra/models/anthropic.adapter.js';
import { OpenAICompatibleAdapter } from '#infra/models/openai-compatible.adapter.js';
import { ProviderRouter } from '#infra/models/provider-router.js';
import { waitFor } from '#testing/fakes.js';
import {
  type RecordedModelRequest,
  ScriptedModelServer,
  type WireMessage,
  lastUserTextOf,
  systemTextOf,
  textReply,
  toolResultsOf,
} from '#testing/scripted-model-server.js';
import { freePort } from '#testing/test-env.js';

// Adapters, through the router, against the scripted server speaking each provider's real
// wire format. No database: the same file runs in both suite modes.

const SYSTEM = 'You are a careful assistant.';
const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const MODEL: Record<ModelProviderKind, string> = { anthropic: 'claude-sonnet-4-6', openai: 'qwen3-coder:30b' };
const READ_TOOL = {
  name: 'Read',
  description: 'Reads a file',
  inputSchema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
};

function modelRequest(provider: ModelProviderKind, overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: MODEL[provider],
    system: SYSTEM,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }],
    tools: [],
    maxOutputTokens: 4000,
    reasoningEffort: 'off',
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  checkInvariants(events);
  return events;
}

/** Runs a stream that must fail; returns the ModelCallError and the events before it. */
async function failure(
  stream: AsyncIterable<ModelStreamEvent>,
  onEvent?: (event: ModelStreamEvent) => void,
): Promise<{ error: ModelCallError; events: ModelStreamEvent[] }> {
  const events: ModelStreamEvent[] = [];
  try {
    for await (const event of stream) {
      events.push(event);
      onEvent?.(event);
    }
  } catch (error) {
    assert.ok(error instanceof ModelCallError, `expected a ModelCallError, got ${String(error)}`);
    return { error, events };
  }
  assert.fail(`the stream ended without an error: ${JSON.stringify(events)}`);
}

/** The port's promises: blocks open and close once, deltas add up, one `end`, last. */
function checkInvariants(events: ModelStreamEvent[]): void {
  const ends = events.filter((e) => e.type === 'end');
  assert.equal(ends.length, 1, 'exactly one end event');
  assert.equal(events[events.length - 1]!.type, 'end', 'end comes last');
  const open = new Map<number, { kind: string; text: string }>();
  for (const e of events) {
    if (e.type === 'text_start' || e.type === 'thinking_start' || e.type === 'tool_use_start') {
      assert.ok(!open.has(e.index), `block ${e.index} opened twice`);
      open.set(e.index, { kind: e.type.replace('_start', ''), text: '' });
    } else if (e.type === 'text_delta' || e.type === 'thinking_delta' || e.type === 'tool_input_delta') {
      const block = open.get(e.index);
      assert.ok(block, `delta for block ${e.index} which is not open`);
      block.text += e.delta;
    } else if (e.type === 'text_end' || e.type === 'thinking_end' || e.type === 'tool_use_end') {
      const block = open.get(e.index);
      assert.ok(block, `end of block ${e.index} which is not open`);
      if (e.type === 'text_end') assert.equal(e.text, block.text);
      if (e.type === 'thinking_end') assert.equal(e.thinking, block.text);
      if (e.type === 'tool_use_end' && !e.inputError)
        assert.deepEqual(e.input, block.text ? JSON.parse(block.text) : {});
      open.delete(e.index);
    }
  }
  assert.equal(open.size, 0, 'every block is closed');
}

const ofType = <T extends ModelStreamEvent['type']>(events: ModelStreamEvent[], type: T) =>
  events.filter((e): e is Extract<ModelStreamEvent, { type: T }> => e.type === type);

function messagesOf(request: RecordedModelRequest): WireMessage[] {
  return request.body.messages ?? [];
}

function blocksOf(message: WireMessage | undefined): Array<Record<string, unknown>> {
  assert.ok(message, 'message present');
  assert.ok(Array.isArray(message.content), `content blocks expected, got ${JSON.stringify(message.content)}`);
  return message.content;
}

let model: ScriptedModelServer;
let router: ModelProvider;
/** Adapters that give up on a stream silent for 400 ms. */
let impatient: ModelProvider;

before(async () => {
  model = await ScriptedModelServer.start();
  router = new ProviderRouter();
  impatient = new ProviderRouter(
    new AnthropicAdapter({ idleTimeoutMs: 400 }),
    new OpenAICompatibleAdapter({ idleTimeoutMs: 400 }),
  );
});

after(async () => {
  await model.close();
});

beforeEach(() => model.reset());

for (const provider of ['anthropic', 'openai'] as const) {
  const endpoint = (apiUrl = model.url): ModelEndpoint => ({ provider, apiUrl, apiKey: 'test-key' });
  const run = (overrides: Partial<ModelRequest> = {}, apiUrl?: string) =>
    router.stream(endpoint(apiUrl), modelRequest(provider, overrides));

  describe(`${provider}: streaming through the adapter`, () => {
    it('text deltas arrive one by one and concatenate to the final text', async () => {
      model.enqueue({ steps: [{ text: 'Hel' }, { delayMs: 20 }, { text: 'lo, ' }, { text: 'world.' }] });
      const events = await collect(run());
      assert.deepEqual(
        ofType(events, 'text_delta').map((e) => e.delta),
        ['Hel', 'lo, ', 'world.'],
      );
      const ends = ofType(events, 'text_end');
      assert.equal(ends.length, 1);
      assert.equal(ends[0]!.text, 'Hello, world.');
      assert.deepEqual(events.at(-1), { type: 'end', stopReason: 'end_turn' });
      assert.equal(model.requests[0]!.outcome, 'completed');
    });

    it('stop reasons map: max_tokens', async () => {
      model.enqueue({ steps: [{ text: 'cut sh' }, { stop: 'max_tokens' }] });
      const events = await collect(run());
      assert.deepEqual(events.at(-1), { type: 'end', stopReason: 'max_tokens' });
    });

    if (provider === 'anthropic') {
      it('thinking blocks arrive as thinking events and end with their signature', async () => {
        model.enqueue({
          steps: [{ thinking: 'Let me ' }, { thinking: 'think.', signature: 'sig-abc' }, { text: 'Answer.' }],
        });
        const events = await collect(run({ reasoningEffort: 'medium' }));
        assert.deepEqual(
          events.slice(0, 4).map((e) => e.type),
          ['thinking_start', 'thinking_delta', 'thinking_delta', 'thinking_end'],
        );
        assert.deepEqual(ofType(events, 'thinking_end')[0], {
          type: 'thinking_end',
          index: 0,
          thinking: 'Let me think.',
          signature: 'sig-abc',
        });
        assert.equal(ofType(events, 'text_end')[0]!.index, 1);
        assert.equal(ofType(events, 'text_end')[0]!.text, 'Answer.');
      });

      it('newBlock splits text into two blocks', async () => {
        model.enqueue({ steps: [{ text: 'one' }, { newBlock: true }, { text: 'two' }] });
        const events = await collect(run());
        assert.deepEqual(
          ofType(events, 'text_end').map((e) => [e.index, e.text]),
          [
            [0, 'one'],
            [1, 'two'],
          ],
        );
      });
    } else {
      for (const field of ['reasoning_content', 'reasoning'] as const) {
        it(`delta.${field} arrives as thinking events before the text`, async () => {
          model.enqueue({
            steps: [{ thinking: 'Step one. ', field }, { thinking: 'Step two.', field }, { text: 'Answer.' }],
          });
          const events = await collect(run({ reasoningEffort: 'medium' }));
          assert.deepEqual(
            events.slice(0, 4).map((e) => e.type),
            ['thinking_start', 'thinking_delta', 'thinking_delta', 'thinking_end'],
          );
          const thinking = ofType(events, 'thinking_end')[0]!;
          assert.equal(thinking.thinking, 'Step one. Step two.');
          assert.equal(thinking.signature, undefined);
          assert.equal(ofType(events, 'text_end')[0]!.text, 'Answer.');
        });
      }
    }

    it('a tool call streamed in several argument chunks ends with the parsed input', async () => {
      const input = { file_path: 'notes/today.md', offset: 10, limit: 200 };
      model.enqueue({
        steps: [{ text: 'Reading it.' }, { toolCall: { id: 'tool-1', name: 'Read', input, chunks: 5 } }],
      });
      const events = await collect(run({ tools: [READ_TOOL] }));
      const start = ofType(events, 'tool_use_start');
      assert.deepEqual(start, [{ type: 'tool_use_start', index: 1, id: 'tool-1', name: 'Read' }]);
      const deltas = ofType(events, 'tool_input_delta');
      assert.equal(deltas.length, 5);
      assert.equal(deltas.map((d) => d.delta).join(''), JSON.stringify(input));
      assert.deepEqual(ofType(events, 'tool_use_end'), [
        { type: 'tool_use_end', index: 1, id: 'tool-1', name: 'Read', input },
      ]);
      assert.deepEqual(events.at(-1), { type: 'end', stopReason: 'tool_use' });
    });

    it('two tool calls in one reply are two blocks', async () => {
      model.enqueue({
        steps: [
          { toolCall: { name: 'Read', input: { file_path: 'a.txt' } } },
          { toolCall: { name: 'Read', input: { file_path: 'b.txt' } } },
        ],
      });
      const events = await collect(run({ tools: [READ_TOOL] }));
      const ends = ofType(events, 'tool_use_end');
      assert.deepEqual(
        ends.map((e) => e.input),
        [{ file_path: 'a.txt' }, { file_path: 'b.txt' }],
      );
      assert.notEqual(ends[0]!.index, ends[1]!.index);
      assert.notEqual(ends[0]!.id, ends[1]!.id);
    });

    it('arguments that are not valid JSON give input {} with the raw text and a reason', async () => {
      const raw = '{"file_path": "a.txt", "content": "unterminated';
      model.enqueue({
        steps: [{ toolCall: { id: 'w1', name: 'Write', rawInput: raw, chunks: 2 } }, { stop: 'max_tokens' }],
      });
      const events = await collect(run({ tools: [READ_TOOL] }));
      const [end] = ofType(events, 'tool_use_end');
      assert.ok(end);
      assert.deepEqual(end.input, {});
      assert.equal(end.rawInput, raw);
      assert.match(end.inputError ?? '', /not valid JSON/);
      assert.deepEqual(events.at(-1), { type: 'end', stopReason: 'max_tokens' });
    });

    it('usage numbers are mapped', async () => {
      model.enqueue({
        steps: [{ text: 'ok' }, { usage: { input: 120, output: 45, cacheRead: 30, cacheCreation: 7 } }],
      });
      const events = await collect(run());
      const usage = ofType(events, 'usage');
      assert.equal(usage.length, 1);
      assert.equal(events.at(-2)!.type, 'usage', 'usage comes right before end');
      assert.deepEqual(
        usage[0]!.usage,
        provider === 'anthropic'
          ? { inputTokens: 120, outputTokens: 45, cacheReadTokens: 30, cacheCreationTokens: 7 }
          : // prompt_tokens 150 of which 30 cached: input excludes the cached part.
            { inputTokens: 120, outputTokens: 45, cacheReadTokens: 30, cacheCreationTokens: 0 },
      );
    });

    it('the request has the provider shape: system, tools, images, tool results, thinking, max tokens', async () => {
      const messages: ModelMessage[] = [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture and in a.txt?' },
            { type: 'image', mediaType: 'image/png', data: PNG_1x1 },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should read the file.', signature: 'sig-prev' },
            { type: 'text', text: 'I will read it.' },
            { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.txt' } },
            { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: 'missing.txt' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolUseId: 'toolu_1', content: 'hello from a.txt' },
            { type: 'tool_result', toolUseId: 'toolu_2', content: 'no such file', isError: true },
          ],
        },
      ];
      model.enqueue(textReply('A red dot; a.txt says hello.'));
      await collect(run({ messages, tools: [READ_TOOL], reasoningEffort: 'high', maxOutputTokens: 4000 }));
      const [request] = await model.waitForRequests(1);
      assert.ok(request);
      assert.equal(request.body.model, MODEL[provider]);
      assert.equal(request.body.stream, true);
      assert.equal(systemTextOf(request.body), SYSTEM);
      assert.equal(lastUserTextOf(request.body), 'What is in this picture and in a.txt?');
      assert.deepEqual(
        toolResultsOf(request.body).map((r) => r.toolUseId),
        ['toolu_1', 'toolu_2'],
      );
      const wire = messagesOf(request);

      if (provider === 'anthropic') {
        assert.equal(request.path, '/v1/messages');
        assert.equal(request.headers['x-api-key'], 'test-key');
        assert.equal(request.headers.authorization, 'Bearer test-key');
        assert.ok(request.headers['anthropic-version'], 'anthropic-version header');
        assert.deepEqual(request.body.tools, [
          { name: 'Read', description: 'Reads a file', input_schema: READ_TOOL.inputSchema },
        ]);
        assert.equal(wire.length, 3);
        assert.deepEqual(blocksOf(wire[0])[1], {
          type: 'image',
          source: { type: 'base64', media_type: 'image/png', data: PNG_1x1 },
        });
        const assistant = blocksOf(wire[1]);
        assert.deepEqual(assistant[0], {
          type: 'thinking',
          thinking: 'I should read the file.',
          signature: 'sig-prev',
        });
        assert.deepEqual(assistant[2], {
          type: 'tool_use',
          id: 'toolu_1',
          name: 'Read',
          input: { file_path: 'a.txt' },
        });
        const results = blocksOf(wire[2]);
        assert.equal(results[0]!.type, 'tool_result');
        assert.equal(results[0]!.tool_use_id, 'toolu_1');
        assert.equal(results[0]!.content, 'hello from a.txt');
        assert.equal(results[0]!.is_error, undefined);
        assert.equal(results[1]!.is_error, true);
        // high effort: a 16384-token budget; max_tokens rises to make room for the answer.
        assert.deepEqual(request.body.thinking, { type: 'enabled', budget_tokens: 16_384 });
        assert.equal(request.body.max_tokens, 16_384 + 4000);
      } else {
        assert.equal(request.path, '/v1/chat/completions');
        assert.equal(request.headers.authorization, 'Bearer test-key');
        assert.deepEqual(request.body.tools, [
          {
            type: 'function',
            function: { name: 'Read', description: 'Reads a file', parameters: READ_TOOL.inputSchema },
          },
        ]);
        assert.deepEqual(request.body.stream_options, { include_usage: true });
        assert.deepEqual(wire[0], { role: 'system', content: SYSTEM });
        assert.deepEqual(wire[1], {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture and in a.txt?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1x1}` } },
          ],
        });
        // Thinking from the earlier turn is not sent back.
        assert.deepEqual(wire[2], {
          role: 'assistant',
          content: 'I will read it.',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"a.txt"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'Read', arguments: '{"file_path":"missing.txt"}' } },
          ],
        });
        assert.deepEqual(wire[3], { role: 'tool', tool_call_id: 'toolu_1', content: 'hello from a.txt' });
        assert.deepEqual(wire[4], { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: no such file' });
        assert.equal(wire.length, 5);
        assert.equal(request.body.reasoning_effort, 'high');
        assert.equal(request.body.max_tokens, 4000);
      }
    });

    it("effort 'off' asks for no thinking; 'max' asks for the most", async () => {
      model.enqueue(textReply('a'), textReply('b'));
      await collect(run({ reasoningEffort: 'off', maxOutputTokens: 2000 }));
      await collect(run({ reasoningEffort: 'max', maxOutputTokens: 2000 }));
      const [off, max] = await model.waitForRequests(2);
      if (provider === 'anthropic') {
        assert.equal(off!.body.thinking, undefined);
        assert.equal(off!.body.max_tokens, 2000);
        // 64000 + 2000 exceeds the model's 64000 output limit: the budget gives way.
        assert.equal(max!.body.max_tokens, 64_000);
        assert.deepEqual(max!.body.thinking, { type: 'enabled', budget_tokens: 62_000 });
      } else {
        assert.equal('reasoning_effort' in off!.body, false);
        assert.equal(max!.body.reasoning_effort, 'high');
      }
    });

    it('the API key is sent', async () => {
      const guarded = await ScriptedModelServer.start({ apiKey: 'right-key' });
      try {
        const ok = await collect(
          router.stream({ provider, apiUrl: guarded.url, apiKey: 'right-key' }, modelRequest(provider)),
        );
        assert.equal(ofType(ok, 'text_end')[0]!.text, 'Scripted reply.');
        const { error } = await failure(
          router.stream({ provider, apiUrl: guarded.url, apiKey: 'wrong-key' }, modelRequest(provider)),
        );
        assert.equal(error.kind, 'authentication_failed');
      } finally {
        await guarded.close();
      }
    });
  });

  describe(`${provider}: failures become ModelCallErrors`, () => {
    it('429 with retry-after: rate_limit, retryable, retryAfterMs', async () => {
      model.enqueue({ status: 429, headers: { 'retry-after': '7' }, error: 'Slow down' });
      const { error } = await failure(run());
      assert.equal(error.kind, 'rate_limit');
      assert.equal(error.status, 429);
      assert.equal(error.retryable, true);
      assert.equal(error.retryAfterMs, 7000);
      assert.match(error.message, /Slow down/);
    });

    it('429 with retry-after-ms: that value wins', async () => {
      model.enqueue({ status: 429, headers: { 'retry-after-ms': '1500', 'retry-after': '2' } });
      const { error } = await failure(run());
      assert.equal(error.retryAfterMs, 1500);
    });

    for (const status of [500, 503, 529]) {
      it(`${status}: server_error, retryable`, async () => {
        model.enqueue({ status });
        const { error } = await failure(run());
        assert.equal(error.kind, 'server_error');
        assert.equal(error.status, status);
        assert.equal(error.retryable, true);
      });
    }

    for (const [status, kind] of [
      [401, 'authentication_failed'],
      [403, 'authentication_failed'],
      [402, 'billing_error'],
      [400, 'invalid_request'],
      [404, 'invalid_request'],
      [413, 'invalid_request'],
      [422, 'invalid_request'],
    ] as const) {
      it(`${status}: ${kind}, not retryable`, async () => {
        model.enqueue({ status });
        const { error } = await failure(run());
        assert.equal(error.kind, kind);
        assert.equal(error.status, status);
        assert.equal(error.retryable, false);
      });
    }

    it('an overloaded error inside the stream: server_error, retryable, after the partial text', async () => {
      model.enqueue({
        steps: [{ text: 'partial' }, { streamError: { type: 'overloaded_error', message: 'Overloaded' } }],
      });
      const { error, events } = await failure(run());
      assert.equal(error.kind, 'server_error');
      assert.equal(error.status, 529);
      assert.equal(error.retryable, true);
      assert.match(error.message, /Overloaded/);
      assert.deepEqual(
        ofType(events, 'text_delta').map((e) => e.delta),
        ['partial'],
      );
    });

    it('a rate-limit error inside the stream: rate_limit', async () => {
      model.enqueue({ steps: [{ streamError: { type: 'rate_limit_error', message: 'Too many' } }] });
      const { error } = await failure(run());
      assert.equal(error.kind, 'rate_limit');
      assert.equal(error.retryable, true);
    });

    it('abort mid-stream: aborted within a second, and the server sees the client leave', async () => {
      model.enqueue({ steps: [{ text: 'partial' }, { hang: true }] });
      const controller = new AbortController();
      let abortedAt = 0;
      const { error, events } = await failure(run({ signal: controller.signal }), (event) => {
        if (event.type === 'text_delta') {
          abortedAt = Date.now();
          controller.abort();
        }
      });
      const took = Date.now() - abortedAt;
      assert.equal(error.kind, 'aborted');
      assert.equal(error.retryable, false);
      assert.ok(took < 1000, `stopped after ${took} ms`);
      assert.equal(ofType(events, 'end').length, 0);
      const [request] = model.requests;
      await waitFor(() => request!.outcome === 'client_closed', { timeoutMs: 2000, what: 'the server noticing' });
    });

    it('abort during a slow stream: aborted', async () => {
      model.enqueue({ steps: [{ text: 'a' }, { delayMs: 5000 }, { text: 'b' }] });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = Date.now();
      const { error } = await failure(run({ signal: controller.signal }));
      assert.equal(error.kind, 'aborted');
      assert.ok(Date.now() - started < 1000);
    });

    it('a consumer that stops reading early releases the connection', async () => {
      model.enqueue({ steps: [{ text: 'first' }, { delayMs: 50 }, { text: 'second' }, { hang: true }] });
      for await (const event of run()) {
        if (event.type === 'text_delta') break;
      }
      const [request] = model.requests;
      await waitFor(() => request!.outcome === 'client_closed', { timeoutMs: 2000, what: 'the server noticing' });
    });

    it('a signal aborted before the call: aborted, and nothing is sent', async () => {
      const controller = new AbortController();
      controller.abort();
      const { error } = await failure(run({ signal: controller.signal }));
      assert.equal(error.kind, 'aborted');
      assert.equal(model.requests.length, 0);
    });

    it('a dropped connection mid-stream: network, retryable', async () => {
      model.enqueue({ steps: [{ text: 'partial' }, { delayMs: 20 }, { dropConnection: true }] });
      const { error, events } = await failure(run());
      assert.equal(error.kind, 'network');
      assert.equal(error.retryable, true);
      assert.equal(error.status, null);
      assert.equal(ofType(events, 'text_delta')[0]!.delta, 'partial');
    });

    it('connection refused: network, retryable', async () => {
      const port = await freePort();
      const { error } = await failure(run({}, `http://127.0.0.1:${port}`));
      assert.equal(error.kind, 'network');
      assert.equal(error.retryable, true);
      assert.match(error.message, /ECONNREFUSED|connect/i);
    });

    it('a stream that goes silent: network after the idle timeout (400 ms here)', async () => {
      model.enqueue({ steps: [{ text: 'partial' }, { hang: true }] });
      const started = Date.now();
      const { error } = await failure(impatient.stream(endpoint(), modelRequest(provider)));
      assert.equal(error.kind, 'network');
      assert.equal(error.retryable, true);
      assert.match(error.message, /no data/);
      assert.ok(Date.now() - started < 3000);
    });
  });
}

describe('base URLs', () => {
  const request = (provider: ModelProviderKind, apiUrl: string) =>
    collect(router.stream({ provider, apiUrl, apiKey: 'k' }, modelRequest(provider)));

  it('an OpenAI-compatible URL works with and without /v1 (and a trailing slash)', async () => {
    await request('openai', `${model.url}/v1`);
    await request('openai', model.url);
    await request('openai', `${model.url}/v1/`);
    await request('openai', `${model.url}/`);
    const requests = await model.waitForRequests(4);
    assert.deepEqual(
      requests.map((r) => r.path),
      Array(4).fill('/v1/chat/completions'),
    );
  });

  it('an Anthropic URL works with and without /v1', async () => {
    await request('anthropic', model.url);
    await request('anthropic', `${model.url}/v1`);
    const requests = await model.waitForRequests(2);
    assert.deepEqual(
      requests.map((r) => r.path),
      ['/v1/messages', '/v1/messages'],
    );
  });
});

describe('ProviderRouter', () => {
  it('picks the adapter by the endpoint provider', async () => {
    await collect(router.stream({ provider: 'anthropic', apiUrl: model.url, apiKey: 'k' }, modelRequest('anthropic')));
    await collect(router.stream({ provider: 'openai', apiUrl: model.url, apiKey: 'k' }, modelRequest('openai')));
    assert.deepEqual(
      model.requests.map((r) => [r.provider, r.path]),
      [
        ['anthropic', '/v1/messages'],
        ['openai', '/v1/chat/completions'],
      ],
    );
  });

  it('an unknown provider fails as invalid_request', async () => {
    const { error } = await failure(
      router.stream(
        { provider: 'gemini' as ModelProviderKind, apiUrl: model.url, apiKey: 'k' },
        modelRequest('openai'),
      ),
    );
    assert.equal(error.kind, 'invalid_request');
    assert.equal(model.requests.length, 0);
  });

  it('knows common models and has safe defaults', () => {
    assert.equal(router.info('anthropic', 'claude-sonnet-4-5-20250929').contextWindow, 200_000);
    assert.equal(router.info('anthropic', 'claude-some-future-model').contextWindow, 200_000);
    assert.equal(router.info('openai', 'gpt-4o').contextWindow, 128_000);
    assert.equal(router.info('openai', 'gpt-4.1').contextWindow, 1_047_576);
    assert.deepEqual(router.info('openai', 'my-local-llama'), { contextWindow: 128_000, maxOutputTokens: 8192 });
    assert.ok(router.info('anthropic', 'claude-sonnet-4-5').pricing);
  });

  it('a responder answers by request content (tool results, summaries)', async () => {
    model.respond((request) =>
      toolResultsOf(request.body).length > 0
        ? textReply('Got the tool result.')
        : { steps: [{ toolCall: { id: 'call_r', name: 'Read', input: { file_path: 'x' } } }] },
    );
    const first = await collect(
      router.stream(
        { provider: 'openai', apiUrl: model.url, apiKey: 'k' },
        modelRequest('openai', { tools: [READ_TOOL] }),
      ),
    );
    assert.deepEqual(first.at(-1), { type: 'end', stopReason: 'tool_use' });
    const followUp = modelRequest('openai', {
      tools: [READ_TOOL],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'read x' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_r', name: 'Read', input: { file_path: 'x' } }] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_r', content: 'x content' }] },
      ],
    });
    const second = await collect(router.stream({ provider: 'openai', apiUrl: model.url, apiKey: 'k' }, followUp));
    assert.equal(ofType(second, 'text_end')[0]!.text, 'Got the tool result.');
  });
});
