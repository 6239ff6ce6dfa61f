import type OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import {
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

const PROVIDER = 'OpenAI-compatible endpoint';
/** Sent when a source has no key: local servers (Ollama, LM Studio, vLLM) need none, the SDK wants one. */
const NO_KEY = 'no-api-key';

/**
 * The SDK, loaded at the first call rather than with the server: most starts never call this
 * provider, and importing it is a noticeable share of the start-up time.
 */
const loadSdk = loadOnce(async (): Promise<typeof OpenAI> => (await import('openai')).default);

export interface OpenAICompatibleAdapterOptions {
  /** Longest wait for the response headers. Default 10 minutes. */
  requestTimeoutMs?: number;
  /** Longest silence inside a response stream. Default 5 minutes. */
  idleTimeoutMs?: number;
}

/**
 * The SDK appends `/chat/completions` to its base URL. A URL without a path gets `/v1`
 * (`http://localhost:11434` → `http://localhost:11434/v1`); a URL with a path is kept
 * (`https://openrouter.ai/api/v1`); a pasted `…/chat/completions` is cut back to its base.
 */
export function openAIBaseUrl(apiUrl: string): string {
  const trimmed = apiUrl.trim();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return trimmed.replace(/\/+$/, '');
  }
  let path = url.pathname.replace(/\/+$/, '').replace(/\/chat\/completions$/, '');
  if (path === '') path = '/v1';
  return `${url.origin}${path}${url.search}`;
}

/** `reasoning_effort` for an effort level: off omits it, xhigh and max become 'high'. */
export function openAIReasoningEffort(effort: ReasoningEffort): 'minimal' | 'low' | 'medium' | 'high' | undefined {
  switch (effort) {
    case 'off':
      return undefined;
    case 'xhigh':
    case 'max':
      return 'high';
    default:
      return effort;
  }
}

/**
 * Neutral messages → Chat Completions messages: the system prompt first; a user message's
 * tool results become `tool` messages (right after the assistant message that called them)
 * followed by the rest of its content; assistant text and tool calls share one message;
 * thinking from earlier turns is dropped (these APIs take no reasoning back).
 */
export function toOpenAIMessages(system: string, messages: ModelMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (system !== '') out.push({ role: 'system', content: system });
  for (const message of messages) {
    if (message.role === 'assistant') {
      const texts: string[] = [];
      const toolCalls: ChatCompletionMessageFunctionToolCall[] = [];
      for (const block of message.content) {
        if (block.type === 'text' && block.text !== '') texts.push(block.text);
        if (block.type === 'tool_use') {
          toolCalls.push({
            id: block.id,
            type: 'function',
            function: { name: block.name, arguments: JSON.stringify(block.input) },
          });
        }
      }
      if (texts.length === 0 && toolCalls.length === 0) continue;
      out.push({
        role: 'assistant',
        content: texts.length > 0 ? texts.join('\n\n') : null,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      });
      continue;
    }
    const parts: ChatCompletionContentPart[] = [];
    for (const block of message.content) {
      if (block.type === 'tool_result') {
        const content = block.isError && !/^error\b/i.test(block.content) ? `Error: ${block.content}` : block.content;
        out.push({ role: 'tool', tool_call_id: block.toolUseId, content });
      } else if (block.type === 'text' && block.text !== '') {
        parts.push({ type: 'text', text: block.text });
      } else if (block.type === 'image') {
        parts.push({ type: 'image_url', image_url: { url: `data:${block.mediaType};base64,${block.data}` } });
      }
    }
    if (parts.length === 0) continue;
    // Plain text as a string: the form every compatible server understands.
    const textOnly = parts.every((p) => p.type === 'text');
    out.push({
      role: 'user',
      content: textOnly ? parts.map((p) => (p as { text: string }).text).join('\n\n') : parts,
    });
  }
  return out;
}

export function buildOpenAIParams(request: ModelRequest, baseUrl = ''): ChatCompletionCreateParamsStreaming {
  const known = findCatalogEntry(request.model);
  const maxTokens = Math.min(Math.max(1, Math.floor(request.maxOutputTokens)), known?.maxOutputTokens ?? Infinity);
  const params: ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages: toOpenAIMessages(request.system, request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  // OpenAI's own API wants max_completion_tokens (its reasoning models refuse max_tokens);
  // compatible servers know max_tokens.
  if (/^https:\/\/api\.openai\.com\//.test(baseUrl)) params.max_completion_tokens = maxTokens;
  else params.max_tokens = maxTokens;
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }));
  }
  const effort = acceptsReasoning(request.model) ? openAIReasoningEffort(request.reasoningEffort) : undefined;
  if (effort) params.reasoning_effort = effort;
  return params;
}

const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
};

/** Fields some servers add to deltas: DeepSeek/vLLM `reasoning_content`, Ollama/OpenRouter `reasoning`. */
type Delta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: unknown; reasoning?: unknown };
type Usage = NonNullable<ChatCompletionChunk['usage']> & { prompt_cache_hit_tokens?: number };

interface ToolSlot {
  index: number;
  id: string;
  name: string;
  args: string;
}

/**
 * Chat Completions chunks → neutral events. The API has no content blocks, so blocks are
 * made here: a run of reasoning is a thinking block, a run of content a text block, each
 * tool call (by its `index`) a tool_use block, numbered in order of appearance.
 */
export class OpenAIStreamTranslator {
  private nextIndex = 0;
  private open: { kind: 'text' | 'thinking'; index: number; text: string } | null = null;
  private readonly tools = new Map<number, ToolSlot>();
  private toolsSeen = 0;
  private usage: TokenUsage | null = null;
  private finishReason: string | null = null;

  get finished(): boolean {
    return this.finishReason !== null;
  }

  handle(chunk: ChatCompletionChunk): ModelStreamEvent[] {
    const events: ModelStreamEvent[] = [];
    if (chunk.usage) this.usage = mapUsage(chunk.usage as Usage);
    const choice = chunk.choices?.[0];
    if (!choice) return events;
    const delta = (choice.delta ?? {}) as Delta;
    const reasoning = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning);
    if (reasoning !== undefined) this.appendRun('thinking', reasoning, events);
    const content = nonEmpty(delta.content);
    if (content !== undefined) this.appendRun('text', content, events);
    for (const call of delta.tool_calls ?? []) {
      this.closeRun(events);
      const key = typeof call.index === 'number' ? call.index : this.keyWithoutIndex(call.id);
      let slot = this.tools.get(key);
      if (!slot) {
        slot = {
          index: this.nextIndex++,
          id: call.id || `call_${this.toolsSeen}_${Date.now().toString(36)}`,
          name: call.function?.name ?? '',
          args: '',
        };
        this.toolsSeen++;
        this.tools.set(key, slot);
        events.push({ type: 'tool_use_start', index: slot.index, id: slot.id, name: slot.name });
      } else if (!slot.name && call.function?.name) {
        // A name that arrives after the call's first chunk; tool_use_end carries it.
        slot.name = call.function.name;
      }
      const args = call.function?.arguments;
      if (args) {
        slot.args += args;
        events.push({ type: 'tool_input_delta', index: slot.index, delta: args });
      }
    }
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      this.closeAll(events);
    }
    return events;
  }

  /** Events that end a finished stream: blocks left open, usage when reported, `end`. */
  finish(): ModelStreamEvent[] {
    const events: ModelStreamEvent[] = [];
    this.closeAll(events);
    if (this.usage) events.push({ type: 'usage', usage: this.usage });
    let stopReason = FINISH_REASONS[this.finishReason ?? ''] ?? 'other';
    // Some servers say "stop" after tool calls.
    if (this.toolsSeen > 0 && stopReason === 'end_turn') stopReason = 'tool_use';
    events.push({ type: 'end', stopReason });
    return events;
  }

  /** Servers that omit `index` send one call at a time: a new id starts the next call. */
  private keyWithoutIndex(id: string | undefined): number {
    const last = this.toolsSeen - 1;
    if (last >= 0 && (!id || this.tools.get(last)?.id === id)) return last;
    return this.toolsSeen;
  }

  private appendRun(kind: 'text' | 'thinking', text: string, events: ModelStreamEvent[]): void {
    if (this.open?.kind !== kind) {
      this.closeRun(events);
      this.open = { kind, index: this.nextIndex++, text: '' };
      events.push({ type: kind === 'text' ? 'text_start' : 'thinking_start', index: this.open.index });
    }
    this.open.text += text;
    events.push({ type: kind === 'text' ? 'text_delta' : 'thinking_delta', index: this.open.index, delta: text });
  }

  private closeRun(events: ModelStreamEvent[]): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    events.push(
      open.kind === 'text'
        ? { type: 'text_end', index: open.index, text: open.text }
        : { type: 'thinking_end', index: open.index, thinking: open.text },
    );
  }

  private closeAll(events: ModelStreamEvent[]): void {
    this.closeRun(events);
    for (const slot of this.tools.values()) {
      events.push({
        type: 'tool_use_end',
        index: slot.index,
        id: slot.id,
        name: slot.name,
        ...parseToolInput(slot.args),
      });
    }
    this.tools.clear();
  }
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** prompt_tokens counts cached tokens too; the neutral inputTokens does not (see TokenUsage). */
function mapUsage(usage: Usage): TokenUsage {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0;
  return {
    inputTokens: Math.max(0, (usage.prompt_tokens ?? 0) - cached),
    outputTokens: usage.completion_tokens ?? 0,
    cacheReadTokens: cached,
    cacheCreationTokens: 0,
  };
}

function classifyOpenAIError(Sdk: typeof OpenAI | null, err: unknown) {
  if (Sdk === null) return undefined;
  if (err instanceof Sdk.APIUserAbortError) return undefined;
  if (err instanceof Sdk.APIConnectionError) return undefined;
  if (!(err instanceof Sdk.APIError)) return undefined;
  const body = err.error as { message?: unknown } | undefined;
  return classifyFailure({
    provider: PROVIDER,
    status: typeof err.status === 'number' ? err.status : null,
    type: err.type ?? null,
    code: (err.code as string | number | null | undefined) ?? null,
    message: typeof body?.message === 'string' ? body.message : err.message,
    headers: err.headers ?? null,
  });
}

/**
 * Any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM, LM Studio,
 * OpenRouter, DeepSeek...), streamed, with the official SDK.
 */
export class OpenAICompatibleAdapter extends ModelProvider {
  private readonly requestTimeoutMs: number;
  private readonly idleTimeoutMs: number;

  constructor(options: OpenAICompatibleAdapterOptions = {}) {
    super();
    this.requestTimeoutMs = options.requestTimeoutMs ?? 600_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
  }

  info(_provider: ModelProviderKind, model: string): ModelInfo {
    return modelInfo(model);
  }

  async *stream(endpoint: ModelEndpoint, request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const guard = new CallGuard(request.signal, this.idleTimeoutMs, PROVIDER);
    try {
      const baseURL = openAIBaseUrl(endpoint.apiUrl);
      const params = buildOpenAIParams(request, baseURL);
      let chunks: AsyncIterable<ChatCompletionChunk>;
      let Sdk: typeof OpenAI | null = null;
      const classify = (err: unknown) => classifyOpenAIError(Sdk, err);
      try {
        Sdk = await loadSdk();
        guard.check();
        const client = new Sdk({
          apiKey: endpoint.apiKey || NO_KEY,
          baseURL,
          organization: null,
          project: null,
          webhookSecret: null,
          maxRetries: 0,
          timeout: this.requestTimeoutMs,
          fetch: guard.fetch,
        });
        chunks = await client.chat.completions.create(params, { signal: guard.signal });
      } catch (err) {
        throw guard.fail(err, classify);
      }
      const translator = new OpenAIStreamTranslator();
      try {
        for await (const chunk of chunks) {
          for (const out of translator.handle(chunk)) yield out;
        }
      } catch (err) {
        throw guard.fail(err, classify);
      }
      // The SDK ends the iteration quietly when its request is aborted.
      guard.check();
      if (!translator.finished) throw networkError(PROVIDER, 'the stream ended without a finish_reason');
      for (const out of translator.finish()) yield out;
    } finally {
      guard.dispose();
    }
  }
}
