import request from 'supertest';
import type { ScriptedModelServer } from './scripted-model-server.js';
import type { TestServer } from './test-server.js';
import { WsTestClient } from './ws-client.js';

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

export interface ToolOutcome {
  result: string;
  isError: boolean;
}

/**
 * Makes the assistant call tools as a test wants: one turn in which the scripted model
 * calls each tool in order (one call per step), then ends. Answers each call's result.
 */
export async function runTools(
  server: TestServer,
  model: ScriptedModelServer,
  spaceId: string,
  calls: readonly ToolCall[],
  timeoutMs = 60_000,
): Promise<ToolOutcome[]> {
  const auth = { Authorization: `Bearer ${server.password}` };
  const conversation = await request(server.url)
    .post(`/api/spaces/${spaceId}/conversations`)
    .set(auth)
    .send({ title: 'tools' });
  const conversationId = conversation.body.data.id as string;
  const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
  try {
    ws.send({ type: 'subscribe', payload: { conversationId } });
    await ws.roundTrip();
    model.reset();
    model.enqueue(
      ...calls.map((call, i) => ({ steps: [{ toolCall: { id: `toolu_${i}`, name: call.name, input: call.input } }] })),
      { steps: [{ text: 'done' }] },
    );
    const sent = await request(server.url)
      .post('/api/agent/message')
      .set(auth)
      .send({ spaceId, conversationId, message: 'run the tools' });
    if (sent.status !== 200) throw new Error(`message refused: ${sent.status} ${JSON.stringify(sent.body)}`);
    await ws.event('agent:complete', timeoutMs);
    await ws.roundTrip();
    const results = new Map<string, ToolOutcome>();
    for (const raw of ws.raw) {
      const frame = JSON.parse(raw) as { type: string; channel?: string; data?: Record<string, unknown> };
      if (frame.channel !== 'agent:tool-result' || !frame.data) continue;
      results.set(String(frame.data.toolId), {
        result: String(frame.data.result),
        isError: frame.data.isError === true,
      });
    }
    return calls.map(
      (_, i) => results.get(`toolu_${i}`) ?? { result: '(no result: the turn ended first)', isError: true },
    );
  } finally {
    ws.close();
  }
}
