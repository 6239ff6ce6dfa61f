/**
 * The one door to language models. Adapters (Anthropic Messages, OpenAI-compatible Chat
 * Completions) turn a provider-neutral request into the provider's streaming call and its
 * stream into the neutral events below. Adapters never retry: the turn loop does, so each
 * attempt can be announced (`agent:api-retry`) and stopped.
 */

export type ReasoningEffort = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';
export const REASONING_EFFORTS: readonly ReasoningEffort[] = [
  'off',
  'minimal',
  'low',
  'medium',
  'high',
  'xhigh',
  'max',
];

export type ModelProviderKind = 'anthropic' | 'openai';

/** Where and as whom to call. `apiUrl` is the provider base URL (e.g. https://api.anthropic.com). */
export interface ModelEndpoint {
  provider: ModelProviderKind;
  apiUrl: string;
  apiKey: string;
  /** The stored model source this endpoint is, when it is one: for log lines (which key to check), never sent. */
  source?: { id: string; name: string };
}

export type ModelContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; mediaType: string; data: string }
  /**
   * `redacted`: an Anthropic `redacted_thinking` block, whose encrypted payload travels in
   * `signature` (with `thinking` empty); it must go back unchanged and is never shown.
   */
  | { type: 'thinking'; thinking: string; signature?: string; redacted?: boolean }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; toolUseId: string; content: string; isError?: boolean };

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: ModelContentBlock[];
}

export interface ModelToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input object. */
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  model: string;
  system: string;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  maxOutputTokens: number;
  /** 'off' asks for no thinking/reasoning; adapters map levels to provider parameters. */
  reasoningEffort: ReasoningEffort;
  signal: AbortSignal;
}

/**
 * Anthropic's convention for every provider: `inputTokens` excludes cached input, so the
 * prompt's size is inputTokens + cacheReadTokens + cacheCreationTokens (OpenAI-compatible
 * adapters report prompt_tokens minus cached_tokens as inputTokens).
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'other';

/** Neutral stream events; `index` is the content block's position within this response. */
export type ModelStreamEvent =
  | { type: 'text_start'; index: number }
  | { type: 'text_delta'; index: number; delta: string }
  | { type: 'text_end'; index: number; text: string }
  | { type: 'thinking_start'; index: number }
  | { type: 'thinking_delta'; index: number; delta: string }
  | { type: 'thinking_end'; index: number; thinking: string; signature?: string; redacted?: boolean }
  | { type: 'tool_use_start'; index: number; id: string; name: string }
  | { type: 'tool_input_delta'; index: number; delta: string }
  /**
   * `input` is the parsed JSON object. When the streamed arguments are not a JSON object
   * (truncated by max_tokens, or a model's malformed output), `input` is `{}`, `rawInput`
   * holds the text as received and `inputError` says what was wrong, for a tool_result
   * that tells the model instead of running the tool.
   */
  | {
      type: 'tool_use_end';
      index: number;
      id: string;
      name: string;
      input: Record<string, unknown>;
      rawInput?: string;
      inputError?: string;
    }
  /** Token counts of this response (totals, not increments); sent once, just before `end`. */
  | { type: 'usage'; usage: TokenUsage }
  | { type: 'end'; stopReason: StopReason };

export type ModelErrorKind =
  | 'authentication_failed'
  | 'billing_error'
  | 'rate_limit'
  | 'invalid_request'
  | 'server_error'
  | 'network'
  | 'aborted'
  | 'max_output_tokens'
  | 'unknown';

/** A failed model call, classified so the loop can decide whether to retry. */
export class ModelCallError extends Error {
  constructor(
    message: string,
    readonly kind: ModelErrorKind,
    readonly status: number | null,
    /** 429, 5xx (incl. 529 overloaded) and network errors are worth another attempt. */
    readonly retryable: boolean,
    /** From Retry-After, when the provider sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ModelCallError';
  }
}

export interface ModelInfo {
  contextWindow: number;
  maxOutputTokens: number;
  /** USD per million tokens, when known. */
  pricing?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
}

export abstract class ModelProvider {
  /**
   * Streams one model response. Throws ModelCallError (before or during the stream); ends
   * with exactly one `end` event on success. Aborting `request.signal` ends the stream with
   * a ModelCallError of kind 'aborted'.
   */
  abstract stream(endpoint: ModelEndpoint, request: ModelRequest): AsyncIterable<ModelStreamEvent>;
  /** Known limits of a model id, with safe defaults for unknown ones. */
  abstract info(provider: ModelProviderKind, model: string): ModelInfo;
}
