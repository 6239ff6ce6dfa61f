import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type Anthropic from '@anthropic-ai/sdk';
import type { ModelRequest, ModelStreamEvent } from '#core/ports/model-provider.port.js';
import {
  AnthropicStreamTranslator,
  anthropicBaseUrl,
  anthropicTokenPlan,
  buildAnthropicParams,
  toAnthropicMessages,
} from './anthropic.adapter.js';

const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'claude-sonnet-4-5',
  system: 'sys',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  tools: [],
  maxOutputTokens: 8192,
  reasoningEffort: 'off',
  signal: new AbortController().signal,
  ...overrides,
});

describe('anthropicTokenPlan', () => {
  it('off: no budget, max_tokens as asked (capped at the model limit)', () => {
    assert.deepEqual(anthropicTokenPlan('off', 8192, 64_000), { maxTokens: 8192, budget: null });
    assert.deepEqual(anthropicTokenPlan('off', 100_000, 64_000), { maxTokens: 64_000, budget: null });
    assert.deepEqual(anthropicTokenPlan('off', 100_000, undefined), { maxTokens: 100_000, budget: null });
  });

  it('a budget that fits keeps max_tokens', () => {
    assert.deepEqual(anthropicTokenPlan('medium', 32_000, 64_000), { maxTokens: 32_000, budget: 8192 });
    assert.deepEqual(anthropicTokenPlan('minimal', 8192, 64_000), { maxTokens: 8192, budget: 1024 });
  });

  it('a budget that does not fit raises max_tokens by an answer reserve', () => {
    assert.deepEqual(anthropicTokenPlan('high', 8192, 64_000), { maxTokens: 16_384 + 4096, budget: 16_384 });
    assert.deepEqual(anthropicTokenPlan('low', 1000, 64_000), { maxTokens: 2048 + 1000, budget: 2048 });
    assert.deepEqual(anthropicTokenPlan('xhigh', 8192, undefined), { maxTokens: 32_000 + 4096, budget: 32_000 });
  });

  it('the model limit wins: the budget shrinks to keep the reserve', () => {
    assert.deepEqual(anthropicTokenPlan('max', 8192, 64_000), { maxTokens: 64_000, budget: 64_000 - 4096 });
    assert.deepEqual(anthropicTokenPlan('max', 8192, 32_000), { maxTokens: 32_000, budget: 32_000 - 4096 });
  });

  it('always budget >= 1024 and budget < max_tokens', () => {
    for (const effort of ['minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const) {
      for (const asked of [1, 500, 1024, 2048, 8192, 20_000, 64_000, 128_000]) {
        for (const cap of [undefined, 8192, 32_000, 64_000]) {
          const { maxTokens, budget } = anthropicTokenPlan(effort, asked, cap);
          assert.ok(budget !== null && budget >= 1024, `${effort}/${asked}/${cap}: budget ${budget}`);
          assert.ok(budget < maxTokens, `${effort}/${asked}/${cap}: ${budget} < ${maxTokens}`);
        }
      }
    }
  });
});

describe('anthropicBaseUrl', () => {
  it('accepts the host with or without /v1 and trailing slashes', () => {
    assert.equal(anthropicBaseUrl('https://api.anthropic.com'), 'https://api.anthropic.com');
    assert.equal(anthropicBaseUrl('https://api.anthropic.com/'), 'https://api.anthropic.com');
    assert.equal(anthropicBaseUrl('https://api.anthropic.com/v1'), 'https://api.anthropic.com');
    assert.equal(anthropicBaseUrl('https://proxy.example/anthropic/v1/messages'), 'https://proxy.example/anthropic');
    assert.equal(anthropicBaseUrl('https://api.deepseek.com/anthropic'), 'https://api.deepseek.com/anthropic');
    assert.equal(anthropicBaseUrl(''), 'https://api.anthropic.com');
  });
});

describe('toAnthropicMessages', () => {
  it('drops empty text, unsigned thinking and messages left empty', () => {
    const out = toAnthropicMessages(
      [
        { role: 'user', content: [{ type: 'text', text: '' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'from another provider' },
            { type: 'text', text: 'answer' },
          ],
        },
      ],
      false,
    );
    assert.deepEqual(out, [{ role: 'assistant', content: [{ type: 'text', text: 'answer' }] }]);
  });

  it('sends redacted thinking back as redacted_thinking', () => {
    const out = toAnthropicMessages(
      [{ role: 'assistant', content: [{ type: 'thinking', thinking: '', signature: 'ENCRYPTED', redacted: true }] }],
      false,
    );
    assert.deepEqual(out[0]!.content, [{ type: 'redacted_thinking', data: 'ENCRYPTED' }]);
  });

  it('marks the newest non-thinking block as a cache breakpoint', () => {
    const out = toAnthropicMessages(
      [
        { role: 'user', content: [{ type: 'text', text: 'a' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'b' },
            { type: 'thinking', thinking: 't', signature: 's' },
          ],
        },
      ],
      true,
    );
    const last = out[1]!.content as unknown as Array<Record<string, unknown>>;
    assert.deepEqual(last[0], { type: 'text', text: 'b', cache_control: { type: 'ephemeral' } });
    assert.equal(last[1]!.cache_control, undefined);
    assert.equal((out[0]!.content as unknown as Array<Record<string, unknown>>)[0]!.cache_control, undefined);
  });
});

describe('buildAnthropicParams', () => {
  it('leaves out an empty system prompt, empty tools and thinking when off', () => {
    const params = buildAnthropicParams(request({ system: '' }), { promptCaching: false });
    assert.deepEqual(params, {
      model: 'claude-sonnet-4-5',
      max_tokens: 8192,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      stream: true,
    });
  });

  it('caches the system prompt', () => {
    const params = buildAnthropicParams(request());
    assert.deepEqual(params.system, [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }]);
  });

  it('asks no thinking of models that have none', () => {
    const params = buildAnthropicParams(request({ model: 'claude-3-5-haiku-latest', reasoningEffort: 'high' }));
    assert.equal(params.thinking, undefined);
    assert.equal(params.max_tokens, 8192);
  });
});

function play(events: object[]): { out: ModelStreamEvent[]; translator: AnthropicStreamTranslator } {
  const translator = new AnthropicStreamTranslator();
  const out = events.flatMap((e) => translator.handle(e as Anthropic.RawMessageStreamEvent));
  return { out, translator };
}

describe('AnthropicStreamTranslator', () => {
  it('redacted thinking becomes a thinking block carrying its data as signature', () => {
    const { out } = play([
      { type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'ENC' } },
      { type: 'content_block_stop', index: 0 },
    ]);
    assert.deepEqual(out, [
      { type: 'thinking_start', index: 0 },
      { type: 'thinking_end', index: 0, thinking: '', signature: 'ENC', redacted: true },
    ]);
  });

  it('a tool call without input deltas keeps the input of its start', () => {
    const { out } = play([
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'Now', input: {} } },
      { type: 'content_block_stop', index: 0 },
    ]);
    assert.deepEqual(out.at(-1), { type: 'tool_use_end', index: 0, id: 't', name: 'Now', input: {} });
  });

  it('ignores server tool blocks and citations', () => {
    const { out } = play([
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 0 },
    ]);
    assert.deepEqual(out, []);
  });

  it('usage: message_delta totals override message_start; stop reasons map', () => {
    const { translator } = play([
      {
        type: 'message_start',
        message: {
          usage: { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 5, cache_creation_input_tokens: 2 },
        },
      },
      {
        type: 'message_delta',
        delta: { stop_reason: 'model_context_window_exceeded' },
        usage: {
          output_tokens: 40,
          input_tokens: null,
          cache_read_input_tokens: null,
          cache_creation_input_tokens: null,
        },
      },
      { type: 'message_stop' },
    ]);
    assert.deepEqual(translator.usage, {
      inputTokens: 10,
      outputTokens: 40,
      cacheReadTokens: 5,
      cacheCreationTokens: 2,
    });
    assert.equal(translator.stopReason, 'max_tokens');
    assert.equal(translator.stopped, true);
    const refusal = play([{ type: 'message_delta', delta: { stop_reason: 'refusal' }, usage: { output_tokens: 1 } }]);
    assert.equal(refusal.translator.stopReason, 'other');
  });
});
