import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AnthropicWire, anthropicErrorBody } from './model-wire/anthropic-wire.js';
import { OpenAIWire, openAIErrorBody } from './model-wire/openai-wire.js';
import { SCRIPTED_EMBEDDING_DIMENSIONS, scriptedEmbedding } from './model-wire/scripted-embeddings.js';
import {
  isErrorReply,
  type RecordedModelRequest,
  type ScriptedErrorReply,
  type ScriptedReply,
  type ScriptedStop,
  type ScriptedStreamReply,
  type ScriptedUsage,
  type WireProvider,
  type WireRequestBody,
  textReply,
} from './model-wire/script.js';

export * from './model-wire/script.js';

export type ScriptedResponder = (request: RecordedModelRequest, index: number) => ScriptedReply | undefined;

export interface ScriptedModelServerOptions {
  /** When set, a request without this key (`x-api-key` or `Authorization: Bearer`) gets a 401. */
  apiKey?: string;
  /** Model ids `GET /v1/models` lists (default `['scripted-model']`). */
  models?: string[];
  /** The reply when the queue is empty and no responder answers (default: a short text). */
  defaultReply?: ScriptedReply;
}

/** An embeddings request as `POST /v1/embeddings` received it (kept apart from `requests`). */
export interface RecordedEmbeddingsRequest {
  model: string;
  input: string[];
  authorization: string | undefined;
}

const DEFAULT_REPLY = textReply('Scripted reply.');

/**
 * A loopback HTTP server that speaks the real streaming wire formats of the Anthropic
 * Messages API (`POST /v1/messages`) and of OpenAI-compatible Chat Completions
 * (`POST /v1/chat/completions`), playing replies a test scripts:
 *
 *     const model = await ScriptedModelServer.start();
 *     model.enqueue({ steps: [{ text: 'Hel' }, { delayMs: 50 }, { text: 'lo' }] });
 *     // give model.url as the apiUrl of either provider
 *     const [request] = await model.waitForRequests(1);
 *
 * Replies come from the queue (`enqueue`), else from the responder (`respond`), else the
 * default reply. Every frame is written (flushed) on its own, so a slow script really
 * streams; a client that goes away stops the script and is recorded (`outcome`).
 */
/**
 * The server environment that points the model at a scripted server (one helper for every e2e
 * file). The step limit is the highest the configuration takes, so a script of one tool call a
 * step is never cut short.
 */
export function scriptedModelEnv(model: ScriptedModelServer): Record<string, string> {
  return {
    SVC_AI_PROVIDER: 'anthropic',
    SVC_AI_API_URL: model.url,
    SVC_AI_API_KEY: 'sk-scripted-tools',
    SVC_AI_MODEL: 'scripted-model',
    SVC_AGENT_MAX_STEPS: '500',
  };
}

export class ScriptedModelServer {
  readonly requests: RecordedModelRequest[] = [];
  readonly embeddingRequests: RecordedEmbeddingsRequest[] = [];
  private embeddingsOn = true;
  private embeddingDelayMs = 0;
  private synonyms: string[][] = [];
  private embeddingDimensions = SCRIPTED_EMBEDDING_DIMENSIONS;
  private readonly queue: ScriptedReply[] = [];
  private responder: ScriptedResponder | null = null;
  private waiters: Array<() => void> = [];
  private readonly running = new Set<Promise<void>>();

  private constructor(
    private readonly server: http.Server,
    private readonly options: ScriptedModelServerOptions,
  ) {}

  static async start(options: ScriptedModelServerOptions = {}): Promise<ScriptedModelServer> {
    const server = http.createServer({ noDelay: true });
    const model = new ScriptedModelServer(server, options);
    server.on('request', (req, res) => {
      const done = model.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `scripted server failure: ${(err as Error).message}` } }));
      });
      model.running.add(done);
      void done.finally(() => model.running.delete(done));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return model;
  }

  /** Base URL (no path) for either provider's apiUrl. */
  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** The environment that points a server's model source at this one. */
  serverEnv(provider: WireProvider = 'anthropic'): Record<string, string> {
    return {
      SVC_AI_PROVIDER: provider,
      SVC_AI_API_URL: this.url,
      SVC_AI_API_KEY: 'sk-scripted',
      SVC_AI_MODEL: 'scripted-model',
    };
  }

  /** Queues replies for the next requests, in order. */
  enqueue(...replies: ScriptedReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Replies computed from each request when the queue is empty (undefined: the default reply). */
  respond(responder: ScriptedResponder | null): this {
    this.responder = responder;
    return this;
  }

  /**
   * `POST /v1/embeddings` (OpenAI-compatible, deterministic: model-wire/scripted-embeddings.ts):
   * on by default; `enabled: false` makes it a 404 as a provider without embeddings; synonym
   * groups make words without letters in common near; `delayMs` holds each answer that long (a
   * slow embedder, so that ingestion takes a while).
   */
  embeddings(options: { enabled?: boolean; synonyms?: string[][]; dimensions?: number; delayMs?: number }): this {
    if (options.enabled !== undefined) this.embeddingsOn = options.enabled;
    if (options.delayMs !== undefined) this.embeddingDelayMs = options.delayMs;
    if (options.synonyms) this.synonyms = options.synonyms;
    if (options.dimensions) this.embeddingDimensions = options.dimensions;
    return this;
  }

  /** Replies queued and not yet used. */
  get queued(): number {
    return this.queue.length;
  }

  /** Resolves with the recorded requests once at least `count` arrived. */
  async waitForRequests(count: number, timeoutMs = 5000): Promise<RecordedModelRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`scripted model server: ${this.requests.length} of ${count} requests within ${timeoutMs} ms`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.requests.slice();
  }

  /** Forgets requests, queued replies and the responder. */
  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
    this.responder = null;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.allSettled([...this.running]);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;

    if (req.method === 'GET' && path === '/v1/models') return this.listModels(res);
    if (req.method === 'POST' && path === '/v1/embeddings' && this.embeddingsOn) return this.embed(req, raw, res);
    const provider: WireProvider | null =
      path === '/v1/messages' ? 'anthropic' : path === '/v1/chat/completions' ? 'openai' : null;
    if (!provider) {
      return sendJson(
        res,
        404,
        anthropicLike(req)
          ? anthropicErrorBody(404, `Not found: ${path}`, undefined)
          : openAIErrorBody(404, `Not found: ${path}`, undefined),
      );
    }
    if (req.method !== 'POST') {
      return sendError(res, provider, {
        status: 405,
        error: `${req.method} not allowed`,
        errorType: 'invalid_request_error',
      });
    }
    let body: WireRequestBody;
    try {
      body = JSON.parse(raw) as WireRequestBody;
    } catch {
      return sendError(res, provider, { status: 400, error: 'The request body is not valid JSON' });
    }

    const index = this.requests.length;
    const record: RecordedModelRequest = {
      index,
      provider,
      method: req.method,
      path,
      headers: req.headers,
      body,
      outcome: 'pending',
    };
    this.requests.push(record);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();

    if (this.options.apiKey !== undefined && keyOf(req) !== this.options.apiKey) {
      record.outcome = 'failed';
      return sendError(res, provider, { status: 401, error: 'invalid x-api-key' });
    }
    const reply = this.queue.shift() ?? this.responder?.(record, index) ?? this.options.defaultReply ?? DEFAULT_REPLY;
    if (isErrorReply(reply)) {
      record.outcome = 'failed';
      return sendError(res, provider, reply);
    }
    await this.play(record, raw.length, reply, res);
  }

  private embed(req: http.IncomingMessage, raw: string, res: http.ServerResponse): void {
    let body: { model?: unknown; input?: unknown };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      return sendJson(res, 400, openAIErrorBody(400, 'The request body is not valid JSON', undefined));
    }
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || !input.every((t) => typeof t === 'string') || typeof body.model !== 'string') {
      return sendJson(
        res,
        400,
        openAIErrorBody(400, 'model and input (a string or a list of strings) are required', undefined),
      );
    }
    this.embeddingRequests.push({ model: body.model, input, authorization: req.headers.authorization });
    if (this.options.apiKey !== undefined && keyOf(req) !== this.options.apiKey) {
      return sendJson(res, 401, openAIErrorBody(401, 'invalid api key', undefined));
    }
    const answer = {
      object: 'list',
      model: body.model,
      data: input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: scriptedEmbedding(text, this.synonyms, this.embeddingDimensions),
      })),
      usage: { prompt_tokens: 0, total_tokens: 0 },
    };
    if (this.embeddingDelayMs > 0) setTimeout(() => sendJson(res, 200, answer), this.embeddingDelayMs);
    else sendJson(res, 200, answer);
  }

  private async play(
    record: RecordedModelRequest,
    bodyLength: number,
    reply: ScriptedStreamReply,
    res: http.ServerResponse,
  ): Promise<void> {
    let closed = false;
    let onClose: () => void = () => undefined;
    const closedPromise = new Promise<void>((resolve) => (onClose = resolve));
    res.on('close', () => {
      closed = true;
      if (!res.writableFinished && record.outcome === 'pending') record.outcome = 'client_closed';
      onClose();
    });
    const wait = (ms: number): Promise<void> =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        void closedPromise.then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    const write = (frames: string[]): void => {
      for (const frame of frames) if (!closed) res.write(frame);
    };

    const { usage, stop } = summarize(reply, bodyLength);
    const model = record.body.model ?? 'scripted-model';
    const anthropic = record.provider === 'anthropic';
    const aWire = new AnthropicWire(model, `msg_scripted_${record.index}`);
    const oWire = new OpenAIWire(
      model,
      `chatcmpl-scripted-${record.index}`,
      record.body.stream_options?.include_usage === true,
    );

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      [anthropic ? 'request-id' : 'x-request-id']: `req_scripted_${record.index}`,
      ...(reply.headers ?? {}),
    });
    res.flushHeaders();
    write(anthropic ? aWire.start(usage) : oWire.start());

    let newBlock = false;
    let toolCalls = 0;
    for (const step of reply.steps) {
      if (closed) return;
      if ('text' in step) {
        write(anthropic ? aWire.text(step.text, newBlock) : oWire.text(step.text));
        newBlock = false;
      } else if ('thinking' in step) {
        write(
          anthropic
            ? aWire.thinking(step.thinking, step.signature, newBlock)
            : oWire.thinking(step.thinking, step.field ?? 'reasoning_content'),
        );
        newBlock = false;
      } else if ('toolCall' in step) {
        const id = step.toolCall.id ?? `${anthropic ? 'toolu' : 'call'}_scripted_${record.index}_${toolCalls}`;
        toolCalls++;
        write(anthropic ? aWire.toolCall(step.toolCall, id) : oWire.toolCall(step.toolCall, id));
      } else if ('newBlock' in step) {
        newBlock = true;
      } else if ('delayMs' in step) {
        await wait(step.delayMs);
      } else if ('ping' in step) {
        write([anthropic ? aWire.ping() : oWire.ping()]);
      } else if ('hang' in step) {
        await closedPromise;
        return;
      } else if ('dropConnection' in step) {
        record.outcome = 'dropped';
        res.socket?.destroy();
        return;
      } else if ('streamError' in step) {
        const type = step.streamError.type ?? 'overloaded_error';
        const message = step.streamError.message ?? 'Overloaded';
        write(anthropic ? aWire.streamError(type, message) : oWire.streamError(type, message, step.streamError.code));
        record.outcome = 'failed';
        res.end();
        return;
      }
    }
    if (closed) return;
    write(anthropic ? aWire.finish(stop, usage) : oWire.finish(stop, usage));
    record.outcome = 'completed';
    res.end();
  }

  private listModels(res: http.ServerResponse): void {
    const ids = this.options.models ?? ['scripted-model'];
    const created = Math.floor(Date.now() / 1000);
    // One body that reads as both providers' list shapes.
    sendJson(res, 200, {
      object: 'list',
      data: ids.map((id) => ({
        id,
        object: 'model',
        type: 'model',
        display_name: id,
        created,
        created_at: new Date(created * 1000).toISOString(),
        owned_by: 'scripted',
      })),
      has_more: false,
      first_id: ids[0] ?? null,
      last_id: ids[ids.length - 1] ?? null,
    });
  }
}

/** The declarative parts of a script: usage (given or estimated) and how it stops. */
function summarize(reply: ScriptedStreamReply, bodyLength: number): { usage: ScriptedUsage; stop: ScriptedStop } {
  let usage: ScriptedUsage | undefined;
  let stop: ScriptedStop | undefined;
  let generated = 0;
  let tools = false;
  for (const step of reply.steps) {
    if ('usage' in step) usage = step.usage;
    else if ('stop' in step) stop = step.stop;
    else if ('text' in step) generated += step.text.length;
    else if ('thinking' in step) generated += step.thinking.length;
    else if ('toolCall' in step) {
      tools = true;
      generated += (step.toolCall.rawInput ?? JSON.stringify(step.toolCall.input ?? {})).length;
    }
  }
  return {
    usage: usage ?? { input: Math.ceil(bodyLength / 4), output: Math.max(1, Math.ceil(generated / 4)) },
    stop: stop ?? (tools ? 'tool_use' : 'end_turn'),
  };
}

function sendError(res: http.ServerResponse, provider: WireProvider, reply: ScriptedErrorReply): void {
  const body =
    provider === 'anthropic'
      ? anthropicErrorBody(reply.status, reply.error, reply.errorType)
      : openAIErrorBody(reply.status, reply.error, reply.errorType);
  sendJson(res, reply.status, body, reply.headers);
}

function sendJson(res: http.ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function anthropicLike(req: http.IncomingMessage): boolean {
  return req.headers['anthropic-version'] !== undefined || req.headers['x-api-key'] !== undefined;
}

function keyOf(req: http.IncomingMessage): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string') return header;
  const auth = req.headers.authorization;
  return auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : undefined;
}
