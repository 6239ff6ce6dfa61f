import { splitInto, type ScriptedStop, type ScriptedToolCall, type ScriptedUsage } from './script.js';

const FINISH: Record<ScriptedStop, string> = {
  end_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  stop_sequence: 'stop',
};

/** Writes OpenAI Chat Completions streaming chunks (`data: <json>`, then `data: [DONE]`). */
export class OpenAIWire {
  private toolIndex = 0;
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly model: string,
    private readonly id: string,
    /** stream_options.include_usage: every chunk carries `usage: null`, a last one the counts. */
    private readonly includeUsage: boolean,
  ) {}

  start(): string[] {
    return [this.chunk({ role: 'assistant', content: '' })];
  }

  /** An SSE comment: compatible servers send these as keep-alives. */
  ping(): string {
    return ': keep-alive\n\n';
  }

  text(text: string): string[] {
    return [this.chunk({ content: text })];
  }

  thinking(thinking: string, field: 'reasoning_content' | 'reasoning'): string[] {
    // DeepSeek-style deltas carry `content: null`, Ollama-style ones `content: ""`.
    return [
      this.chunk(
        field === 'reasoning_content'
          ? { content: null, reasoning_content: thinking }
          : { content: '', reasoning: thinking },
      ),
    ];
  }

  toolCall(call: ScriptedToolCall, id: string): string[] {
    const index = this.toolIndex++;
    const out = [
      this.chunk({
        tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    ];
    const json = call.rawInput ?? JSON.stringify(call.input ?? {});
    for (const piece of splitInto(json, call.chunks ?? 3)) {
      if (piece !== '') out.push(this.chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
    return out;
  }

  finish(stop: ScriptedStop, usage: ScriptedUsage): string[] {
    const out = [this.chunk({}, FINISH[stop])];
    if (this.includeUsage) {
      const cached = usage.cacheRead ?? 0;
      const prompt = usage.input + cached;
      out.push(
        data({
          ...this.base(),
          choices: [],
          usage: {
            prompt_tokens: prompt,
            completion_tokens: usage.output,
            total_tokens: prompt + usage.output,
            prompt_tokens_details: { cached_tokens: cached },
          },
        }),
      );
    }
    out.push('data: [DONE]\n\n');
    return out;
  }

  streamError(type: string, message: string, code: string | number | undefined): string[] {
    return [data({ error: { message, type, code: code ?? null } })];
  }

  private base(): Record<string, unknown> {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      system_fingerprint: 'fp_scripted',
    };
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
    return data({
      ...this.base(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.includeUsage ? { usage: null } : {}),
    });
  }
}

/** OpenAI's error body for an HTTP error reply. */
export function openAIErrorBody(status: number, message: string | undefined, type: string | undefined): object {
  const defaults: Record<number, [string, string | null]> = {
    400: ['invalid_request_error', null],
    401: ['invalid_request_error', 'invalid_api_key'],
    403: ['invalid_request_error', 'unsupported_country_region_territory'],
    404: ['invalid_request_error', 'model_not_found'],
    429: ['requests', 'rate_limit_exceeded'],
  };
  const [defaultType, code] = defaults[status] ?? [status >= 500 ? 'server_error' : 'invalid_request_error', null];
  return { error: { message: message ?? `scripted ${status} error`, type: type ?? defaultType, param: null, code } };
}

function data(payload: object): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
