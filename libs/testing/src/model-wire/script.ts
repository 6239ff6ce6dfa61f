import type { IncomingHttpHeaders } from 'node:http';

/** How a scripted reply ends (Anthropic's names; the OpenAI wire maps them to finish_reason). */
export type ScriptedStop = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';

/**
 * Token counts a reply reports. `input` excludes cached tokens (Anthropic's convention); the
 * OpenAI wire reports prompt_tokens = input + cacheRead and has no cache-creation count.
 */
export interface ScriptedUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheCreation?: number;
}

/**
 * One step of a streamed reply, played in order.
 * - `text`: one chunk of text; consecutive text steps share one block (`newBlock` splits).
 * - `thinking`: one chunk of thinking; consecutive ones share a block. Anthropic closes the
 *   block with a signature (`signature`, default `sig-<base64 of the thinking>`); the OpenAI
 *   wire sends it as `delta.reasoning_content`, or `delta.reasoning` with `field`.
 * - `toolCall`: one tool call whose JSON arguments (`input`, or `rawInput` verbatim, e.g.
 *   invalid JSON) are streamed in `chunks` pieces (default 3).
 * - `delayMs`: a pause (the stream really is flushed chunk by chunk).
 * - `usage` / `stop`: declarative, wherever they stand (defaults: usage estimated from the
 *   sizes, stop `tool_use` when a tool call was sent, else `end_turn`).
 * - `hang`: keeps the stream open, sending nothing, until the client goes away.
 * - `dropConnection`: destroys the socket mid-stream.
 * - `ping`: an Anthropic `event: ping` (an SSE comment on the OpenAI wire).
 * - `streamError`: an error inside the 200 stream, then the end of it (Anthropic
 *   `event: error`, OpenAI `data: {"error": ...}`), default type `overloaded_error`.
 */
export type ScriptStep =
  | { text: string }
  | { thinking: string; signature?: string; field?: 'reasoning_content' | 'reasoning' }
  | { toolCall: ScriptedToolCall }
  | { delayMs: number }
  | { usage: ScriptedUsage }
  | { stop: ScriptedStop }
  | { hang: true }
  | { dropConnection: true }
  | { newBlock: true }
  | { ping: true }
  | { streamError: { type?: string; message?: string; code?: string | number } };

export interface ScriptedToolCall {
  id?: string;
  name: string;
  input?: Record<string, unknown>;
  /** Sent verbatim instead of JSON.stringify(input). */
  rawInput?: string;
  /** Pieces the arguments are streamed in (default 3). */
  chunks?: number;
}

/** A reply that fails before streaming: an HTTP error with the provider's error body. */
export interface ScriptedErrorReply {
  status: number;
  headers?: Record<string, string>;
  /** The error message (default: a generic one for the status). */
  error?: string;
  /** The provider's error type (default: the usual one for the status). */
  errorType?: string;
}

/** A streamed reply. */
export interface ScriptedStreamReply {
  steps: ScriptStep[];
  headers?: Record<string, string>;
}

export type ScriptedReply = ScriptedErrorReply | ScriptedStreamReply;

export type WireProvider = 'anthropic' | 'openai';

/** What the scripted server received (bodies as sent: read them with the wire's field names). */
export interface RecordedModelRequest {
  /** 0-based, in order of arrival. */
  index: number;
  provider: WireProvider;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: WireRequestBody;
  /**
   * `pending` while replying; then `completed`, `client_closed` (the client went away
   * before the reply ended), `dropped` (a dropConnection step) or `failed` (an error reply).
   */
  outcome: 'pending' | 'completed' | 'client_closed' | 'dropped' | 'failed';
}

/** The parts of both providers' request bodies tests look at; anything else is still there. */
export interface WireRequestBody {
  model?: string;
  system?: string | Array<{ type: string; text: string; cache_control?: unknown }>;
  messages?: WireMessage[];
  tools?: Array<Record<string, unknown>>;
  max_tokens?: number;
  max_completion_tokens?: number;
  thinking?: { type: string; budget_tokens?: number };
  reasoning_effort?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

export interface WireMessage {
  role: string;
  content: string | null | Array<Record<string, unknown>>;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  [key: string]: unknown;
}

/** Every tool result in a request, from either wire format, in order. */
export function toolResultsOf(body: WireRequestBody): Array<{ toolUseId: string; content: string; isError: boolean }> {
  const results: Array<{ toolUseId: string; content: string; isError: boolean }> = [];
  for (const message of body.messages ?? []) {
    if (message.role === 'tool') {
      results.push({ toolUseId: message.tool_call_id ?? '', content: textOf(message.content), isError: false });
    } else if (Array.isArray(message.content)) {
      for (const block of message.content) {
        if (block.type === 'tool_result') {
          results.push({
            toolUseId: String(block.tool_use_id ?? ''),
            content: textOf(block.content as WireMessage['content']),
            isError: block.is_error === true,
          });
        }
      }
    }
  }
  return results;
}

/** All text of a message's content (string or blocks). */
export function textOf(content: WireMessage['content'] | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => (typeof b.text === 'string' ? b.text : typeof b.content === 'string' ? b.content : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** The system prompt of a request, from either wire format. */
export function systemTextOf(body: WireRequestBody): string {
  if (typeof body.system === 'string') return body.system;
  if (Array.isArray(body.system)) return body.system.map((b) => b.text).join('\n');
  const system = (body.messages ?? []).find((m) => m.role === 'system' || m.role === 'developer');
  return system ? textOf(system.content) : '';
}

/** The text of the last user message (tool results aside), from either wire format. */
export function lastUserTextOf(body: WireRequestBody): string {
  const users = (body.messages ?? []).filter((m) => m.role === 'user');
  for (let i = users.length - 1; i >= 0; i--) {
    const content = users[i]!.content;
    const text = Array.isArray(content)
      ? content
          .filter((b) => b.type === 'text')
          .map((b) => String(b.text))
          .join('\n')
      : textOf(content);
    if (text !== '') return text;
  }
  return '';
}

/** A reply of plain text, streamed in `chunks` pieces (default 1) `delayMs` apart. */
export function textReply(text: string, options: { chunks?: number; delayMs?: number } = {}): ScriptedStreamReply {
  const steps: ScriptStep[] = [];
  for (const [i, piece] of splitInto(text, options.chunks ?? 1).entries()) {
    if (i > 0 && options.delayMs) steps.push({ delayMs: options.delayMs });
    steps.push({ text: piece });
  }
  return { steps };
}

/** A reply that calls one tool (optionally after some text). */
export function toolCallReply(call: ScriptedToolCall, text?: string): ScriptedStreamReply {
  return { steps: [...(text ? [{ text }] : []), { toolCall: call }] };
}

/** Splits `text` into `n` pieces of nearly equal length (fewer when it is shorter). */
export function splitInto(text: string, n: number): string[] {
  const count = Math.max(1, Math.min(Math.floor(n), text.length || 1));
  const size = Math.ceil(text.length / count);
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces.length > 0 ? pieces : [''];
}

export function isErrorReply(reply: ScriptedReply): reply is ScriptedErrorReply {
  return typeof (reply as ScriptedErrorReply).status === 'number';
}
