import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_MODEL_INFO, MODEL_CATALOG, acceptsReasoning, findCatalogEntry, modelInfo } from './model-catalog.js';

describe('model catalog', () => {
  it('knows Claude models: 200k context', () => {
    for (const id of [
      'claude-sonnet-4-5-20250929',
      'claude-opus-4-1',
      'claude-haiku-4-5',
      'claude-3-5-haiku-latest',
      'claude-next-9',
    ]) {
      assert.equal(modelInfo(id).contextWindow, 200_000, id);
    }
    assert.deepEqual(modelInfo('claude-sonnet-4-5').pricing, {
      input: 3,
      output: 15,
      cacheRead: 0.3,
      cacheWrite: 3.75,
    });
    assert.equal(modelInfo('claude-opus-4-20250514').pricing?.input, 15);
    assert.equal(modelInfo('claude-opus-4-5').pricing?.input, 5);
    // A later Opus than the table: the family entry, without guessing a price.
    assert.equal(modelInfo('claude-opus-4-7').pricing, undefined);
  });

  it('knows OpenAI models, the more specific prefix first', () => {
    assert.equal(modelInfo('gpt-4o').contextWindow, 128_000);
    assert.equal(modelInfo('gpt-4o-mini-2024-07-18').pricing?.input, 0.15);
    assert.equal(modelInfo('gpt-4.1').contextWindow, 1_047_576);
    assert.equal(modelInfo('gpt-4.1-mini').pricing?.input, 0.4);
    assert.equal(modelInfo('gpt-5-mini').pricing?.input, 0.25);
  });

  it('drops a router prefix and ignores case', () => {
    assert.equal(findCatalogEntry('anthropic/Claude-Sonnet-4')?.prefix, 'claude-sonnet-4');
    assert.equal(findCatalogEntry('openai/gpt-4o')?.prefix, 'gpt-4o');
  });

  it('unknown models get the safe defaults', () => {
    assert.deepEqual(modelInfo('llama3.1:8b'), { contextWindow: 128_000, maxOutputTokens: 8192 });
    assert.deepEqual(DEFAULT_MODEL_INFO, { contextWindow: 128_000, maxOutputTokens: 8192 });
  });

  it('says which models take a reasoning parameter (unknown ones do)', () => {
    assert.equal(acceptsReasoning('gpt-4o'), false);
    assert.equal(acceptsReasoning('claude-3-5-sonnet-20241022'), false);
    assert.equal(acceptsReasoning('claude-sonnet-4-5'), true);
    assert.equal(acceptsReasoning('o3'), true);
    assert.equal(acceptsReasoning('qwen3:32b'), true);
  });

  it('no entry is shadowed by an earlier, shorter prefix', () => {
    MODEL_CATALOG.forEach((entry, i) => {
      const earlier = MODEL_CATALOG.slice(0, i).find((e) => entry.prefix.startsWith(e.prefix));
      assert.equal(earlier, undefined, `${entry.prefix} is hidden by ${earlier?.prefix}`);
    });
  });
});
