import { splitInto, type ScriptedStop, type ScriptedToolCall, type ScriptedUsage } from './script.js';

/** Writes Anthropic Messages streaming frames (`event: <type>` + `data: <json>`). */
export class AnthropicWire {
  private index = -1;
  private open: { kind: 'text' } | { kind: 'thinking'; thinking: string; signature?: string } | null = null;

  constructor(
    private readonly model: string,
    private readonly messageId: string,
  ) {}

  start(usage: ScriptedUsage): string[] {
    return [
      frame('message_start', {
        type: 'message_start',
        message: {
          id: this.messageId,
          type: 'message',
          role: 'assistant',
          model: this.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: usage.input,
            output_tokens: 1,
            cache_read_input_tokens: usage.cacheRead ?? 0,
            cache_creation_input_tokens: usage.cacheCreation ?? 0,
          },
        },
      }),
      this.ping(),
    ];
  }

  ping(): string {
    return frame('ping', { type: 'ping' });
  }

  text(text: string, newBlock: boolean): string[] {
    const out: string[] = [];
    if (this.open?.kind !== 'text' || newBlock) {
      out.push(...this.close());
      this.open = { kind: 'text' };
      out.push(this.blockStart({ type: 'text', text: '' }));
    }
    out.push(this.blockDelta({ type: 'text_delta', text }));
    return out;
  }

  thinking(thinking: string, signature: string | undefined, newBlock: boolean): string[] {
    const out: string[] = [];
    if (this.open?.kind !== 'thinking' || newBlock) {
      out.push(...this.close());
      this.open = { kind: 'thinking', thinking: '' };
      out.push(this.blockStart({ type: 'thinking', thinking: '', signature: '' }));
    }
    const open = this.open as { kind: 'thinking'; thinking: string; signature?: string };
    open.thinking += thinking;
    if (signature !== undefined) open.signature = signature;
    out.push(this.blockDelta({ type: 'thinking_delta', thinking }));
    return out;
  }

  /** The frames of one tool call, each to be flushed on its own. */
  toolCall(call: ScriptedToolCall, id: string): string[] {
    const out = this.close();
    this.open = null;
    out.push(this.blockStart({ type: 'tool_use', id, name: call.name, input: {} }));
    out.push(this.blockDelta({ type: 'input_json_delta', partial_json: '' }));
    const json = call.rawInput ?? JSON.stringify(call.input ?? {});
    for (const piece of splitInto(json, call.chunks ?? 3)) {
      if (piece !== '') out.push(this.blockDelta({ type: 'input_json_delta', partial_json: piece }));
    }
    out.push(frame('content_block_stop', { type: 'content_block_stop', index: this.index }));
    return out;
  }

  finish(stop: ScriptedStop, usage: ScriptedUsage): string[] {
    return [
      ...this.close(),
      frame('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: stop, stop_sequence: null },
        usage: {
          input_tokens: usage.input,
          output_tokens: usage.output,
          cache_read_input_tokens: usage.cacheRead ?? 0,
          cache_creation_input_tokens: usage.cacheCreation ?? 0,
        },
      }),
      frame('message_stop', { type: 'message_stop' }),
    ];
  }

  streamError(type: string, message: string): string[] {
    return [frame('error', { type: 'error', error: { type, message } })];
  }

  private close(): string[] {
    const open = this.open;
    if (!open) return [];
    this.open = null;
    const out: string[] = [];
    if (open.kind === 'thinking') {
      const signature = open.signature ?? `sig-${Buffer.from(open.thinking).toString('base64')}`;
      out.push(this.blockDelta({ type: 'signature_delta', signature }));
    }
    out.push(frame('content_block_stop', { type: 'content_block_stop', index: this.index }));
    return out;
  }

  private blockStart(block: Record<string, unknown>): string {
    this.index++;
    return frame('content_block_start', { type: 'content_block_start', index: this.index, content_block: block });
  }

  private blockDelta(delta: Record<string, unknown>): string {
    return frame('content_block_delta', { type: 'content_block_delta', index: this.index, delta });
  }
}

/** Anthropic's error body for an HTTP error reply. */
export function anthropicErrorBody(status: number, message: string | undefined, type: string | undefined): object {
  return {
    type: 'error',
    error: { type: type ?? anthropicErrorType(status), message: message ?? `scripted ${status} error` },
  };
}

export function anthropicErrorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    402: 'billing_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  };
  return types[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

function frame(event: string, data: object): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
