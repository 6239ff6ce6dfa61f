import assert from 'node:assert/strict';
import type request from 'supertest';
import { apiClient, okData } from './api-client.js';
import { ScriptedModelServer } from './scripted-model-server.js';
import { startServer, type TestServer } from './test-server.js';
import { type Frame, WsTestClient } from './ws-client.js';

/** A tool result as `agent:tool-result` carries it. */
export interface ToolResult {
  result: string;
  isError: boolean;
}

/** The `agent:tool-result` events among `frames`, in order. */
export function toolResults(frames: Frame[]): ToolResult[] {
  return frames
    .filter((f) => f.channel === 'agent:tool-result')
    .map((f) => ({
      result: (f.data as unknown as ToolResult).result,
      isError: (f.data as unknown as ToolResult).isError,
    }));
}

/**
 * The real server talking to a scripted model, with what the end-to-end tests of turns need
 * (the assistant's chat, digital humans, MCP servers, skills, the assistant's API): signed-in
 * requests, a turn followed on its own socket, and what the model was sent. Its function
 * members can be destructured once (they read the server when called):
 *
 *     const h = new AgentHarness();
 *     const { api, okData, turn } = h;
 *     before(() => h.start({ SVC_AGENT_MAX_RETRIES: '1' }));
 *     after(() => h.stop());
 */
export class AgentHarness {
  model!: ScriptedModelServer;
  server!: TestServer;

  /** Starts the scripted model and a server whose current model source is it; `env` adds or overrides variables. */
  async start(env: Record<string, string> = {}): Promise<void> {
    this.model = await ScriptedModelServer.start();
    this.server = await startServer({
      env: {
        SVC_AI_PROVIDER: 'anthropic',
        SVC_AI_API_URL: this.model.url,
        SVC_AI_API_KEY: 'sk-scripted',
        SVC_AI_MODEL: 'scripted-model',
        ...env,
      },
    });
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    await this.model?.close();
  }

  /** Requests with the access password (a POST, PUT or PATCH without a body sends `{}`). */
  readonly api = {
    get: (path: string): request.Test => apiClient(this.server).get(path),
    post: (path: string, body: object = {}): request.Test => apiClient(this.server).post(path, body),
    delete: (path: string): request.Test => apiClient(this.server).del(path),
    put: (path: string, body: object = {}): request.Test => apiClient(this.server).put(path, body),
    patch: (path: string, body: object = {}): request.Test => apiClient(this.server).patch(path, body),
  };

  /** The `data` of a 200 `{success: true}` answer (else the assertion names the answer). */
  readonly okData = okData;

  /** A signed-in socket subscribed to a conversation. */
  readonly subscribed = async (conversationId: string): Promise<WsTestClient> => {
    const ws = await WsTestClient.signedIn(this.server.wsUrl, this.server.password);
    ws.send({ type: 'subscribe', payload: { conversationId } });
    await ws.roundTrip();
    return ws;
  };

  /** Follows one turn of `conversationId` that `send` starts (200): every event up to `agent:complete`. */
  readonly turn = async (
    conversationId: string,
    send: () => Promise<request.Response>,
    timeoutMs = 30_000,
  ): Promise<Frame[]> => {
    const ws = await this.subscribed(conversationId);
    try {
      const sent = await send();
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      await ws.event('agent:complete', timeoutMs);
      await ws.roundTrip();
      return ws.raw.map((r) => JSON.parse(r) as Frame).filter((f) => f.type === 'event');
    } finally {
      ws.close();
    }
  };

  /** A chat turn in a new conversation of `spaceId`. */
  readonly chat = async (spaceId: string, message: string): Promise<Frame[]> => {
    const id = this.okData<{ id: string }>(
      await this.api.post(`/api/spaces/${spaceId}/conversations`, { title: 'test' }),
    ).id;
    return this.turn(id, () => this.api.post('/api/agent/message', { spaceId, conversationId: id, message }));
  };

  /** What the model was sent in request `i` (JSON). */
  readonly bodyOf = (i: number): string => JSON.stringify(this.model.requests[i]!.body);

  /** The system prompt of request `i` (JSON). */
  readonly systemOf = (i: number): string =>
    JSON.stringify((this.model.requests[i]!.body as { system?: unknown }).system);

  /** The tools offered in request `i`. */
  readonly toolsOf = (i: number): Array<{ name: string; description: string; input_schema?: unknown }> =>
    (this.model.requests[i]!.body as { tools?: Array<{ name: string; description: string }> }).tools ?? [];

  readonly toolNamesOf = (i: number): string[] => this.toolsOf(i).map((t) => t.name);
}
