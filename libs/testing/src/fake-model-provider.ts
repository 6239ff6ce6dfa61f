import {
  ModelCallError,
  type ModelEndpoint,
  type ModelInfo,
  ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
  type TokenUsage,
} from '#core/ports/model-provider.port.js';

/**
 * One scripted model response: the events to stream, then optionally a failure (thrown
 * after them) or a hang (the stream stays open until the request is aborted).
 */
export interface FakeResponse {
  events: ModelStreamEvent[];
  error?: ModelCallError;
  hang?: boolean;
}

export const FAKE_USAGE: TokenUsage = {
  inputTokens: 100,
  outputTokens: 20,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
};

/** A complete text reply. */
export function textResponse(text: string, usage: TokenUsage = FAKE_USAGE): FakeResponse {
  return {
    events: [
      { type: 'text_start', index: 0 },
      { type: 'text_delta', index: 0, delta: text },
      { type: 'text_end', index: 0, text },
      { type: 'usage', usage },
      { type: 'end', stopReason: 'end_turn' },
    ],
  };
}

/** A reply that calls tools (stop reason tool_use). */
export function toolUseResponse(
  calls: Array<{ id: string; name: string; input: Record<string, unknown> }>,
  usage: TokenUsage = FAKE_USAGE,
): FakeResponse {
  const events: ModelStreamEvent[] = [];
  calls.forEach((call, index) => {
    events.push(
      { type: 'tool_use_start', index, id: call.id, name: call.name },
      { type: 'tool_input_delta', index, delta: JSON.stringify(call.input) },
      { type: 'tool_use_end', index, id: call.id, name: call.name, input: call.input },
    );
  });
  events.push({ type: 'usage', usage }, { type: 'end', stopReason: 'tool_use' });
  return { events };
}

/** A call that fails before anything streamed. */
export function failedResponse(error: ModelCallError): FakeResponse {
  return { events: [], error };
}

/** Starts a text block, streams `text`, then waits until the request is aborted. */
export function hangingResponse(text: string): FakeResponse {
  return {
    events: [
      { type: 'text_start', index: 0 },
      { type: 'text_delta', index: 0, delta: text },
    ],
    hang: true,
  };
}

/**
 * A ModelProvider that plays scripted responses in order and records every request (a
 * copy of its messages, as they were when the call was made). Running out of script fails
 * the call, so a test sees an unexpected extra step.
 */
export class FakeModelProvider extends ModelProvider {
  readonly requests: ModelRequest[] = [];
  private readonly script: FakeResponse[] = [];
  private readonly waiters: Array<{ count: number; resolve: () => void }> = [];

  constructor(
    private readonly modelInfo: ModelInfo = {
      contextWindow: 200_000,
      maxOutputTokens: 8_192,
      pricing: { input: 3, output: 15 },
    },
  ) {
    super();
  }

  /** Appends responses to the script. */
  respond(...responses: FakeResponse[]): this {
    this.script.push(...responses);
    return this;
  }

  /** Resolves once `count` requests have arrived. */
  requestCount(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  async *stream(_endpoint: ModelEndpoint, request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    this.requests.push({ ...request, messages: structuredClone(request.messages) });
    for (const waiter of this.waiters.filter((w) => this.requests.length >= w.count)) waiter.resolve();
    const response = this.script.shift();
    if (!response) throw new ModelCallError('the fake model has no more responses', 'unknown', null, false);
    for (const event of response.events) {
      await new Promise((r) => setImmediate(r));
      if (request.signal.aborted) throw new ModelCallError('aborted', 'aborted', null, false);
      yield event;
    }
    if (response.error) throw response.error;
    if (response.hang) {
      await new Promise<void>((resolve) => {
        if (request.signal.aborted) resolve();
        else request.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      throw new ModelCallError('aborted', 'aborted', null, false);
    }
  }

  info(): ModelInfo {
    return this.modelInfo;
  }
}
