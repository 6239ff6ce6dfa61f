import type Anthropic from '@anthropic-ai/sdk';
import {
  type ModelContentBlock,
  type ModelEndpoint,
  type ModelInfo,
  type ModelMessage,
  ModelProvider,
  type ModelProviderKind,
  type ModelRequest,
  type ModelStreamEvent,
  type ReasoningEffort,
  type StopReason,
  type TokenUsage,
} from '#core/ports/model-provider.port.js';
import { CallGuard } from './call-guard.js';
import { acceptsReasoning, findCatalogEntry, modelInfo } from './model-catalog.js';
import { classifyFailure, networkError } from './model-errors.js';
import { loadOnce } from '../common/load-once.js';
import { parseToolInput } from './tool-input.js';

const PROVIDER = 'Anthropic';

/**
 * The SDK, loaded at the first call rather than with the server: most starts never call this
 * provider, and importing it is a noticeable share of the start-up time.
 */
const loadSdk = loadOnce(async (): Promise<typeof Anthropic> => (await import('@anthropic-ai/sdk')).default);

export interface AnthropicAdapterOptions {
  /** Longest wait for the response headers. Default 10 minutes. */
  requestTimeoutMs?: number;
  /** Longest silence inside a response stream (pings count as data). Default 5 minutes. */
  idleTimeoutMs?: number;
  /** Mark the system prompt and the newest message as cache breakpoints. Default true. */
  promptCaching?: boolean;
}

/** Thinking budget per effort level (Anthropic's minimum is 1024). */
export const THINKING_BUDGETS: Readonly<Record<Exclude<ReasoningEffort, 'off'>, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16_384,
  xhigh: 32_000,
  max: 64_000,
};

const MIN_BUDGET = 1024;
/** Room kept for the visible answer when the thinking budget pushes max_tokens up. */
const ANSWER_RESERVE = 4096;

/**
 * `max_tokens` and the thinking budget for one call. max_tokens counts thinking too, and
 * the budget must stay below it: when the budget does not fit under the requested maximum,
 * max_tokens rises to budget + min(requested, 4096), but never above the model's known
 * output limit; the budget then shrinks to leave that reserve (never below 1024).
 */
export function anthropicTokenPlan(
  effort: ReasoningEffort,
  maxOutputTokens: number,
  modelMaxOutput: number | undefined,
): { maxTokens: number; budget: number | null } {
  const requested = Math.max(1, Math.floor(maxOutputTokens));
  const cap = modelMaxOutput ?? Number.POSITIVE_INFINITY;
  if (effort === 'off') return { maxTokens: Math.min(requested, cap), budget: null };
  let budget = THINKING_BUDGETS[effort];
  const reserve = Math.min(requested, ANSWER_RESERVE);
  let maxTokens = requested;
  if (budget + MIN_BUDGET > maxTokens) maxTokens = budget + reserve;
  maxTokens = Math.min(maxTokens, cap);
  if (budget >= maxTokens) budget = maxTokens - Math.min(reserve, Math.floor(maxTokens / 2));
  budget = Math.max(MIN_BUDGET, budget);
  if (budget >= maxTokens) maxTokens = budget + Math.max(1, Math.min(reserve, MIN_BUDGET));
  return { maxTokens, budget };
}

/**
 * The SDK appends `/v1/messages` to its base URL: accept `https://host`, `https://host/`
 * and `https://host/v1` (a common paste) alike.
 */
export function anthropicBaseUrl(apiUrl: string): string {
  let url = apiUrl.trim().replace(/\/+$/, '');
  url = url.replace(/\/v1\/messages$/, '').replace(/\/v1$/, '');
  return url || 'https://api.anthropic.com';
}

type CacheControl = { cache_control?: { type: 'ephemeral' } };
type BlockParam = Anthropic.ContentBlockParam & CacheControl;

function toBlockParam(block: ModelContentBlock): BlockParam | null {
  switch (block.type) {
    case 'text':
      // The API rejects empty text blocks.
      return block.text === '' ? null : { type: 'text', text: block.text };
    case 'image':
      return {
        type: 'image',
        source: {
          type: 'base64',
          media_type: block.mediaType as Anthropic.Base64ImageSource['media_type'],
          data: block.data,
        },
      };
    case 'thinking':
      // A thinking block goes back only with its signature (other providers' reasoning
      // has none and cannot be verified by Anthropic).
      if (!block.signature) return null;
      return block.redacted
        ? { type: 'redacted_thinking', data: block.signature }
        : { type: 'thinking', thinking: block.thinking, signature: block.signature };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: block.toolUseId,
        content: block.content,
        ...(block.isError ? { is_error: true } : {}),
      };
  }
}

export function toAnthropicMessages(messages: ModelMessage[], promptCaching: boolean): Anthropic.MessageParam[] {
  const out: Array<{ role: 'user' | 'assistant'; content: BlockParam[] }> = [];
  for (const message of messages) {
    const content = message.content.map(toBlockParam).filter((b): b is BlockParam => b !== null);
    if (content.length > 0) out.push({ role: message.role, content });
  }
  if (promptCaching) {
    // Newest cacheable block: the next call reads everything before it from the cache.
    const last = out[out.length - 1];
    const block = last
      ? [...last.content].reverse().find((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking')
      : undefined;
    if (block) block.cache_control = { type: 'ephemeral' };
  }
  return out;
}

export function buildAnthropicParams(
  request: ModelRequest,
  options: { promptCaching?: boolean } = {},
): Anthropic.MessageCreateParamsStreaming {
  const caching = options.promptCaching ?? true;
  const known = findCatalogEntry(request.model);
  const effort = acceptsReasoning(request.model) ? request.reasoningEffort : 'off';
  const plan = anthropicTokenPlan(effort, request.maxOutputTokens, known?.maxOutputTokens);
  const params: Anthropic.MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: plan.maxTokens,
    messages: toAnthropicMessages(request.messages, caching),
    stream: true,
  };
  if (request.system !== '') {
    params.system = [
      { type: 'text', text: request.system, ...(caching ? { cache_control: { type: 'ephemeral' } } : {}) },
    ];
  }
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema as Anthropic.Tool.InputSchema,
    }));
  }
  if (plan.budget !== null) params.thinking = { type: 'enabled', budget_tokens: plan.budget };
  return params;
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  // The context window filled up while generating: the answer was cut like at max_tokens.
  model_context_window_exceeded: 'max_tokens',
};

type OpenBlock =
  | { kind: 'text'; text: string }
  | { kind: 'thinking'; thinking: string; signature: string; redacted: boolean }
  | { kind: 'tool_use'; id: string; name: string; json: string; initial: Record<string, unknown> }
  | { kind: 'ignored' };

/** Anthropic stream events → neutral events; the neutral index is Anthropic's block index. */
export class AnthropicStreamTranslator {
  private readonly blocks = new Map<number, OpenBlock>();
  readonly usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
  stopReason: StopReason = 'other';
  stopped = false;

  handle(event: Anthropic.RawMessageStreamEvent): ModelStreamEvent[] {
    switch (event.type) {
      case 'message_start':
        this.addUsage(event.message.usage);
        return [];
      case 'message_delta':
        this.addUsage(event.usage);
        if (event.delta.stop_reason) this.stopReason = STOP_REASONS[event.delta.stop_reason] ?? 'other';
        return [];
      case 'message_stop':
        this.stopped = true;
        return [];
      case 'content_block_start':
        return this.start(event.index, event.content_block);
      case 'content_block_delta':
        return this.delta(event.index, event.delta);
      case 'content_block_stop':
        return this.stop(event.index);
      default:
        return [];
    }
  }

  private addUsage(usage: Partial<Anthropic.MessageDeltaUsage> | null | undefined): void {
    if (!usage) return;
    if (typeof usage.input_tokens === 'number') this.usage.inputTokens = usage.input_tokens;
    if (typeof usage.output_tokens === 'number') this.usage.outputTokens = usage.output_tokens;
    if (typeof usage.cache_read_input_tokens === 'number') this.usage.cacheReadTokens = usage.cache_read_input_tokens;
    if (typeof usage.cache_creation_input_tokens === 'number') {
      this.usage.cacheCreationTokens = usage.cache_creation_input_tokens;
    }
  }

  private start(index: number, block: Anthropic.RawContentBlockStartEvent['content_block']): ModelStreamEvent[] {
    switch (block.type) {
      case 'text': {
        this.blocks.set(index, { kind: 'text', text: block.text });
        const events: ModelStreamEvent[] = [{ type: 'text_start', index }];
        if (block.text) events.push({ type: 'text_delta', index, delta: block.text });
        return events;
      }
      case 'thinking': {
        this.blocks.set(index, {
          kind: 'thinking',
          thinking: block.thinking,
          signature: block.signature ?? '',
          redacted: false,
        });
        const events: ModelStreamEvent[] = [{ type: 'thinking_start', index }];
        if (block.thinking) events.push({ type: 'thinking_delta', index, delta: block.thinking });
        return events;
      }
      case 'redacted_thinking':
        this.blocks.set(index, { kind: 'thinking', thinking: '', signature: block.data, redacted: true });
        return [{ type: 'thinking_start', index }];
      case 'tool_use': {
        const initial = block.input && typeof block.input === 'object' ? (block.input as Record<string, unknown>) : {};
        this.blocks.set(index, { kind: 'tool_use', id: block.id, name: block.name, json: '', initial });
        return [{ type: 'tool_use_start', index, id: block.id, name: block.name }];
      }
      default:
        // Server tools and their results are never requested by this adapter.
        this.blocks.set(index, { kind: 'ignored' });
        return [];
    }
  }

  private delta(index: number, delta: Anthropic.RawContentBlockDelta): ModelStreamEvent[] {
    const block = this.blocks.get(index);
    if (!block) return [];
    if (delta.type === 'text_delta' && block.kind === 'text') {
      block.text += delta.text;
      return delta.text ? [{ type: 'text_delta', index, delta: delta.text }] : [];
    }
    if (delta.type === 'thinking_delta' && block.kind === 'thinking') {
      block.thinking += delta.thinking;
      return delta.thinking ? [{ type: 'thinking_delta', index, delta: delta.thinking }] : [];
    }
    if (delta.type === 'signature_delta' && block.kind === 'thinking') {
      block.signature += delta.signature;
      return [];
    }
    if (delta.type === 'input_json_delta' && block.kind === 'tool_use') {
      block.json += delta.partial_json;
      return delta.partial_json ? [{ type: 'tool_input_delta', index, delta: delta.partial_json }] : [];
    }
    return [];
  }

  private stop(index: number): ModelStreamEvent[] {
    const block = this.blocks.get(index);
    this.blocks.delete(index);
    if (!block) return [];
    switch (block.kind) {
      case 'text':
        return [{ type: 'text_end', index, text: block.text }];
      case 'thinking':
        return [
          {
            type: 'thinking_end',
            index,
            thinking: block.thinking,
            ...(block.signature ? { signature: block.signature } : {}),
            ...(block.redacted ? { redacted: true } : {}),
          },
        ];
      case 'tool_use': {
        const parsed = block.json === '' ? { input: block.initial } : parseToolInput(block.json);
        return [{ type: 'tool_use_end', index, id: block.id, name: block.name, ...parsed }];
      }
      default:
        return [];
    }
  }
}

function classifyAnthropicError(Sdk: typeof Anthropic | null, err: unknown) {
  if (Sdk === null) return undefined;
  if (err instanceof Sdk.APIUserAbortError) return undefined;
  if (err instanceof Sdk.APIConnectionError) return undefined;
  if (!(err instanceof Sdk.APIError)) return undefined;
  const body = err.error as { error?: { message?: unknown } } | undefined;
  const message = err.apiMessage ?? (typeof body?.error?.message === 'string' ? body.error.message : err.message);
  return classifyFailure({
    provider: PROVIDER,
    status: typeof err.status === 'number' ? err.status : null,
    type: err.type,
    message,
    headers: err.headers ?? null,
  });
}

/** Claude through the Messages API (`POST /v1/messages`, streamed), with the official SDK. */
export class AnthropicAdapter extends ModelProvider {
  private readonly requestTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly promptCaching: boolean;

  constructor(options: AnthropicAdapterOptions = {}) {
    super();
    this.requestTimeoutMs = options.requestTimeoutMs ?? 600_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
    this.promptCaching = options.promptCaching ?? true;
  }

  info(_provider: ModelProviderKind, model: string): ModelInfo {
    return modelInfo(model);
  }

  async *stream(endpoint: ModelEndpoint, request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const guard = new CallGuard(request.signal, this.idleTimeoutMs, PROVIDER);
    try {
      const params = buildAnthropicParams(request, { promptCaching: this.promptCaching });
      let events: AsyncIterable<Anthropic.RawMessageStreamEvent>;
      let Sdk: typeof Anthropic | null = null;
      const classify = (err: unknown) => classifyAnthropicError(Sdk, err);
      try {
        Sdk = await loadSdk();
        guard.check();
        const client = new Sdk({
          // SDK 1.x sends the key as `Authorization: Bearer`; Anthropic-compatible servers
          // (proxies, other vendors' /v1/messages) often read only the classic `x-api-key`.
          apiKey: endpoint.apiKey,
          ...(endpoint.apiKey ? { defaultHeaders: { 'x-api-key': endpoint.apiKey } } : {}),
          baseURL: anthropicBaseUrl(endpoint.apiUrl),
          maxRetries: 0,
          timeout: this.requestTimeoutMs,
          fetch: guard.fetch,
        });
        events = await client.messages.create(params, { signal: guard.signal });
      } catch (err) {
        throw guard.fail(err, classify);
      }
      const translator = new AnthropicStreamTranslator();
      try {
        for await (const event of events) {
          for (const out of translator.handle(event)) yield out;
        }
      } catch (err) {
        throw guard.fail(err, classify);
      }
      // The SDK ends the iteration quietly when its request is aborted.
      guard.check();
      if (!translator.stopped) throw networkError(PROVIDER, 'the stream ended before message_stop');
      yield { type: 'usage', usage: { ...translator.usage } };
      yield { type: 'end', stopReason: translator.stopReason };
    } finally {
      guard.dispose();
    }
  }
}
