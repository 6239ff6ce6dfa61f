import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ModelRequest, ModelStreamEvent } from '#core/ports/model-provider.port.js';
import {
  OpenAIStreamTranslator,
  buildOpenAIParams,
  openAIBaseUrl,
  openAIReasoningEffort,
  toOpenAIMessages,
} from './openai-compatible.adapter.js';

const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'llama3.1:8b',
  system: 'sys',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  tools: [],
  maxOutputTokens: 4096,
  reasoningEffort: 'off',
  signal: new AbortController().signal,
  ...overrides,
});

describe('openAIBaseUrl', () => {
  it('adds /v1 to a bare host and keeps a given path', () => {
    assert.equal(openAIBaseUrl('http://localhost:11434'), 'http://localhost:11434/v1');
    assert.equal(openAIBaseUrl('http://localhost:11434/'), 'http://localhost:11434/v1');
    assert.equal(openAIBaseUrl('http://localhost:11434/v1'), 'http://localhost:11434/v1');
    assert.equal(openAIBaseUrl('https://api.openai.com/v1/'), 'https://api.openai.com/v1');
    assert.equal(openAIBaseUrl('https://openrouter.ai/api/v1'), 'https://openrouter.ai/api/v1');
    assert.equal(openAIBaseUrl('https://host.example/openai/v1/chat/completions'), 'https://host.example/openai/v1');
  });
});

describe('openAIReasoningEffort', () => {
  it('off is left out; xhigh and max are high', () => {
    assert.equal(openAIReasoningEffort('off'), undefined);
    for (const e of ['minimal', 'low', 'medium', 'high'] as const) assert.equal(openAIReasoningEffort(e), e);
    assert.equal(openAIReasoningEffort('xhigh'), 'high');
    assert.equal(openAIReasoningEffort('max'), 'high');
  });
});

describe('toOpenAIMessages', () => {
  it('tool results come first as tool messages, then the rest of the user turn', () => {
    const out = toOpenAIMessages('', [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'Bash', input: { command: 'ls' } }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'and also this' },
          { type: 'tool_result', toolUseId: 'c1', content: 'a b c' },
        ],
      },
    ]);
    assert.deepEqual(out, [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'a b c' },
      { role: 'user', content: 'and also this' },
    ]);
  });

  it('drops thinking, and an assistant turn that had only thinking', () => {
    const out = toOpenAIMessages('s', [
      { role: 'user', content: [{ type: 'text', text: 'q' }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 'x' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ]);
    assert.deepEqual(out, [
      { role: 'system', content: 's' },
      { role: 'user', content: 'q' },
      { role: 'user', content: 'a\n\nb' },
    ]);
  });

  it('marks failed tool results', () => {
    const out = toOpenAIMessages('', [
      {
        role: 'user',
        content: [
          { type: 'tool_result', toolUseId: 'a', content: 'boom', isError: true },
          { type: 'tool_result', toolUseId: 'b', content: 'Error: already said', isError: true },
        ],
      },
    ]);
    assert.deepEqual(
      out.map((m) => (m as { content: string }).content),
      ['Error: boom', 'Error: already said'],
    );
  });
});

describe('buildOpenAIParams', () => {
  it('OpenAI itself gets max_completion_tokens, other servers max_tokens', () => {
    assert.equal(buildOpenAIParams(request(), 'https://api.openai.com/v1').max_completion_tokens, 4096);
    assert.equal(buildOpenAIParams(request(), 'https://api.openai.com/v1').max_tokens, undefined);
    assert.equal(buildOpenAIParams(request(), 'http://localhost:11434/v1').max_tokens, 4096);
  });

  it('caps max tokens at a known model limit', () => {
    assert.equal(
      buildOpenAIParams(request({ model: 'gpt-4o', maxOutputTokens: 100_000 }), 'http://x/v1').max_tokens,
      16_384,
    );
  });

  it('sends reasoning_effort only when asked and when the model takes it', () => {
    assert.equal(buildOpenAIParams(request({ reasoningEffort: 'low' })).reasoning_effort, 'low');
    assert.equal('reasoning_effort' in buildOpenAIParams(request({ reasoningEffort: 'off' })), false);
    assert.equal('reasoning_effort' in buildOpenAIParams(request({ model: 'gpt-4o', reasoningEffort: 'high' })), false);
    assert.equal(buildOpenAIParams(request({ model: 'o3', reasoningEffort: 'max' })).reasoning_effort, 'high');
  });

  it('leaves out empty tools', () => {
    assert.equal('tools' in buildOpenAIParams(request()), false);
  });
});

const chunk = (delta: object, finish: string | null = null, extra: object = {}): ChatCompletionChunk =>
  ({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...extra,
  }) as ChatCompletionChunk;

function play(chunks: ChatCompletionChunk[]): ModelStreamEvent[] {
  const t = new OpenAIStreamTranslator();
  return [...chunks.flatMap((c) => t.handle(c)), ...t.finish()];
}

describe('OpenAIStreamTranslator', () => {
  it('"stop" after tool calls still means tool_use', () => {
    const events = play([
      chunk({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'X', arguments: '{}' } }] }),
      chunk({}, 'stop'),
    ]);
    assert.deepEqual(events.at(-1), { type: 'end', stopReason: 'tool_use' });
  });

  it('calls without an index: a new id starts a new call', () => {
    const events = play([
      chunk({ tool_calls: [{ id: 'a', function: { name: 'X', arguments: '{"n":' } }] }),
      chunk({ tool_calls: [{ function: { arguments: '1}' } }] }),
      chunk({ tool_calls: [{ id: 'b', function: { name: 'Y', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    const ends = events.filter((e) => e.type === 'tool_use_end');
    assert.deepEqual(
      ends.map((e) => [e.id, e.name, e.input]),
      [
        ['a', 'X', { n: 1 }],
        ['b', 'Y', {}],
      ],
    );
  });

  it('alternating reasoning and content make separate blocks; null fields are ignored', () => {
    const events = play([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: null, reasoning_content: 'think' }),
      chunk({ content: 'say', reasoning_content: null }),
      chunk({ content: null, reasoning: 'more' }),
      chunk({}, 'stop'),
    ]);
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'thinking_start',
        'thinking_delta',
        'thinking_end',
        'text_start',
        'text_delta',
        'text_end',
        'thinking_start',
        'thinking_delta',
        'thinking_end',
        'end',
      ],
    );
    assert.deepEqual(
      events.filter((e) => 'index' in e).map((e) => (e as { index: number }).index),
      [0, 0, 0, 1, 1, 1, 2, 2, 2],
    );
  });

  it('usage from any chunk, DeepSeek cache counts too; none reported: no usage event', () => {
    const events = play([
      chunk({ content: 'x' }, 'stop', {
        usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105, prompt_cache_hit_tokens: 60 },
      }),
    ]);
    assert.deepEqual(
      events.find((e) => e.type === 'usage'),
      {
        type: 'usage',
        usage: { inputTokens: 40, outputTokens: 5, cacheReadTokens: 60, cacheCreationTokens: 0 },
      },
    );
    assert.equal(
      play([chunk({ content: 'x' }, 'stop')]).some((e) => e.type === 'usage'),
      false,
    );
  });

  it('finish reasons map', () => {
    const stop = (finish: string) => play([chunk({ content: 'x' }, finish)]).at(-1);
    assert.deepEqual(stop('stop'), { type: 'end', stopReason: 'end_turn' });
    assert.deepEqual(stop('length'), { type: 'end', stopReason: 'max_tokens' });
    assert.deepEqual(stop('content_filter'), { type: 'end', stopReason: 'other' });
  });
});
