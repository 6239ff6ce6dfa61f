import type { ModelInfo } from '#core/ports/model-provider.port.js';

/**
 * What the adapters know about well-known model ids: context window, largest output, list
 * price (USD per million tokens: input, output, cache read, cache write) and whether the
 * model accepts a thinking / reasoning-effort parameter.
 *
 * Deliberately small: the common Anthropic and OpenAI models plus DeepSeek. Prices are the
 * providers' public list prices (2025) and serve cost estimates only. An id matches the
 * first entry whose prefix it starts with (more specific prefixes first), after lower-casing
 * and dropping a router's vendor prefix (`anthropic/claude-sonnet-4` on OpenRouter matches
 * `claude-sonnet-4`). Anything else gets DEFAULT_MODEL_INFO.
 *
 * Sources: docs.anthropic.com/en/docs/about-claude/models, platform.openai.com/docs/models,
 * api-docs.deepseek.com/quick_start/pricing.
 */
export interface CatalogEntry extends ModelInfo {
  prefix: string;
  /** Accepts Anthropic `thinking` / OpenAI `reasoning_effort`; false means the adapters omit it. */
  reasoning: boolean;
}

const price = (input: number, output: number, cacheRead?: number, cacheWrite?: number): ModelInfo['pricing'] => ({
  input,
  output,
  ...(cacheRead !== undefined ? { cacheRead } : {}),
  ...(cacheWrite !== undefined ? { cacheWrite } : {}),
});

const entry = (
  prefix: string,
  contextWindow: number,
  maxOutputTokens: number,
  reasoning: boolean,
  pricing?: ModelInfo['pricing'],
): CatalogEntry => ({ prefix, contextWindow, maxOutputTokens, reasoning, ...(pricing ? { pricing } : {}) });

export const MODEL_CATALOG: readonly CatalogEntry[] = [
  // Anthropic: 200k context everywhere.
  entry('claude-opus-4-5', 200_000, 64_000, true, price(5, 25, 0.5, 6.25)),
  // Opus 4 and 4.1 (`claude-opus-4-20250514`, `claude-opus-4-0`, `claude-opus-4-1…`); later
  // Opus ids fall through to the family entry rather than to these older prices.
  entry('claude-opus-4-1', 200_000, 32_000, true, price(15, 75, 1.5, 18.75)),
  entry('claude-opus-4-0', 200_000, 32_000, true, price(15, 75, 1.5, 18.75)),
  entry('claude-opus-4-2', 200_000, 32_000, true, price(15, 75, 1.5, 18.75)),
  entry('claude-sonnet-4', 200_000, 64_000, true, price(3, 15, 0.3, 3.75)),
  entry('claude-haiku-4', 200_000, 64_000, true, price(1, 5, 0.1, 1.25)),
  entry('claude-3-7-sonnet', 200_000, 64_000, true, price(3, 15, 0.3, 3.75)),
  entry('claude-3-5-sonnet', 200_000, 8_192, false, price(3, 15, 0.3, 3.75)),
  entry('claude-3-5-haiku', 200_000, 8_192, false, price(0.8, 4, 0.08, 1)),
  entry('claude-3-', 200_000, 4_096, false),
  // Newer Claude models than this table: same context, thinking-capable.
  entry('claude-', 200_000, 32_000, true),
  // OpenAI.
  entry('gpt-4o-mini', 128_000, 16_384, false, price(0.15, 0.6, 0.075)),
  entry('gpt-4o', 128_000, 16_384, false, price(2.5, 10, 1.25)),
  entry('gpt-4.1-nano', 1_047_576, 32_768, false, price(0.1, 0.4, 0.025)),
  entry('gpt-4.1-mini', 1_047_576, 32_768, false, price(0.4, 1.6, 0.1)),
  entry('gpt-4.1', 1_047_576, 32_768, false, price(2, 8, 0.5)),
  entry('gpt-5-nano', 400_000, 128_000, true, price(0.05, 0.4, 0.005)),
  entry('gpt-5-mini', 400_000, 128_000, true, price(0.25, 2, 0.025)),
  entry('gpt-5', 400_000, 128_000, true, price(1.25, 10, 0.125)),
  entry('o4-mini', 200_000, 100_000, true, price(1.1, 4.4, 0.275)),
  entry('o3', 200_000, 100_000, true, price(2, 8, 0.5)),
  // DeepSeek (prices change often: none listed).
  entry('deepseek-reasoner', 128_000, 64_000, false),
  entry('deepseek-chat', 128_000, 8_192, false),
];

/** For ids the table does not know. */
export const DEFAULT_MODEL_INFO: ModelInfo = { contextWindow: 128_000, maxOutputTokens: 8_192 };

function normalize(model: string): string {
  const id = model.trim().toLowerCase();
  const slash = id.lastIndexOf('/');
  return slash >= 0 ? id.slice(slash + 1) : id;
}

/** The table entry for a model id, or undefined when it is not known. */
export function findCatalogEntry(model: string): CatalogEntry | undefined {
  const id = normalize(model);
  return MODEL_CATALOG.find((e) => id.startsWith(e.prefix));
}

export function modelInfo(model: string): ModelInfo {
  const found = findCatalogEntry(model);
  if (!found) return { ...DEFAULT_MODEL_INFO };
  const { contextWindow, maxOutputTokens, pricing } = found;
  return { contextWindow, maxOutputTokens, ...(pricing ? { pricing: { ...pricing } } : {}) };
}

/** Whether to send a thinking / reasoning parameter: unknown models get one when asked for. */
export function acceptsReasoning(model: string): boolean {
  return findCatalogEntry(model)?.reasoning ?? true;
}
