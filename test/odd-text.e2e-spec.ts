import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type request from 'supertest';
import { apiClient, okData } from '#testing/api-client.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

const NUL = '\u0000';
const FFFD = '\uFFFD';

/** NUL bytes, unpaired surrogates and absurd nesting: refused as input, made storable as output. */
describe('odd text: input refused with 400, tool and model output always recorded', () => {
  let model: ScriptedModelServer;
  let server: TestServer;
  let spaceId: string;
  let spacePath: string;
  const post = (path: string, body: object | string) =>
    apiClient(server).post(path).set('Content-Type', 'application/json').send(body);
  const get = (path: string) => apiClient(server).get(path);

  async function conversation(): Promise<string> {
    return okData<{ id: string }>(await post(`/api/spaces/${spaceId}/conversations`, { title: 't' })).id;
  }

  /** Runs one turn and answers the stored conversation once it completed. */
  async function turn(id: string, message: string): Promise<Array<{ role: string; content: string; id: string }>> {
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    try {
      ws.send({ type: 'subscribe', payload: { conversationId: id } });
      await ws.roundTrip();
      const res = await post('/api/agent/message', { spaceId, conversationId: id, message });
      assert.deepEqual([res.status, res.body], [200, { success: true }]);
      await ws.event('agent:complete', 15_000);
      await ws.roundTrip();
      const failed = ws.raw.filter((r) => r.includes('"agent:error"'));
      assert.deepEqual(failed, [], 'the turn ended without an error');
    } finally {
      ws.close();
    }
    const stored = await get(`/api/spaces/${spaceId}/conversations/${id}`);
    assert.equal(stored.status, 200);
    return stored.body.data.messages;
  }

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({
      env: {
        SVC_AI_PROVIDER: 'anthropic',
        SVC_AI_API_URL: model.url,
        SVC_AI_API_KEY: 'sk-scripted',
        SVC_AI_MODEL: 'scripted-model',
      },
    });
    const space = await post('/api/spaces', { name: 'odd text' });
    spaceId = space.body.data.id;
    spacePath = space.body.data.path;
  });
  after(async () => {
    await server?.stop();
    await model?.close();
  });
  beforeEach(() => model.reset());

  const toolCases: Array<{ name: string; call: { name: string; input: Record<string, unknown> }; expect: RegExp }> = [
    {
      name: 'Write with NUL content',
      call: { name: 'Write', input: { file_path: 'nul.txt', content: `x${NUL}y` } },
      expect: /Created/,
    },
    {
      name: 'Bash printf with NUL',
      call: { name: 'Bash', input: { command: "printf 'a\\0b'" } },
      expect: new RegExp(`a${FFFD}b`),
    },
    {
      name: 'Read of a binary file',
      call: { name: 'Read', input: { file_path: 'blob.bin' } },
      expect: /Binary file, not shown: .*blob\.bin \(20000 bytes\)/,
    },
    {
      name: 'TodoWrite with NUL',
      call: { name: 'TodoWrite', input: { todos: [{ content: `do ${NUL} it`, status: 'pending' }] } },
      expect: new RegExp(`\\[ \\] do ${FFFD} it`),
    },
  ];
  for (const c of toolCases) {
    it(`${c.name}: the turn completes, everything is recorded, the next turn works`, async () => {
      const blob = Buffer.alloc(20_000, 0x41);
      blob[12_000] = 0; // past the first 8 KiB a sniffing reader would look at
      writeFileSync(join(spacePath, 'blob.bin'), blob);
      const id = await conversation();
      model.enqueue(
        { steps: [{ text: `calling ${NUL}` }, { toolCall: { id: 'toolu_1', ...c.call } }] },
        { steps: [{ text: `done ${NUL} here` }] },
        { steps: [{ text: 'follow-up ok' }] },
      );
      const messages = await turn(id, 'go');
      const reply = messages.at(-1)!;
      assert.equal(reply.role, 'assistant');
      assert.equal(reply.content, `calling ${FFFD}\n\ndone ${FFFD} here`);
      const thoughts = await get(`/api/spaces/${spaceId}/conversations/${id}/messages/${reply.id}/thoughts`);
      const tool = (thoughts.body.data as Array<{ type: string; toolOutput?: string; toolInput?: unknown }>).find(
        (t) => t.type === 'tool_use',
      )!;
      assert.match(tool.toolOutput ?? '', c.expect);
      assert.ok(!JSON.stringify(tool).includes('\\u0000'), 'no NUL recorded');
      // The model saw the result too, and a follow-up turn in the conversation works.
      const after = await turn(id, 'again');
      assert.equal(after.at(-1)!.content, 'follow-up ok');
      assert.equal(after.length, 4);
    });
  }

  it('answers 400 naming the field for a NUL in every body, query and path string', async () => {
    const id = await conversation();
    const cases: Array<[string, () => request.Test, string]> = [
      ['space name', () => post('/api/spaces', { name: `a${NUL}` }), 'name'],
      ['space icon', () => post('/api/spaces', { name: 'ok', icon: `${NUL}` }), 'icon'],
      ['space color', () => post('/api/spaces', { name: 'ok', color: `#${NUL}` }), 'color'],
      ['space rename', () => apiClient(server).put(`/api/spaces/${spaceId}`, { name: `a${NUL}` }), 'name'],
      ['conversation title', () => post(`/api/spaces/${spaceId}/conversations`, { title: `t${NUL}` }), 'title'],
      [
        'message content',
        () => post(`/api/spaces/${spaceId}/conversations/${id}/messages`, { role: 'user', content: `c${NUL}` }),
        'content',
      ],
      [
        'agent message',
        () => post('/api/agent/message', { spaceId, conversationId: id, message: `m${NUL}` }),
        'message',
      ],
      [
        'agent spaceId',
        () => post('/api/agent/message', { spaceId: `${spaceId}${NUL}`, conversationId: id, message: 'm' }),
        'spaceId',
      ],
      ['stop', () => post('/api/agent/stop', { conversationId: `x${NUL}` }), 'conversationId'],
      [
        'model source name',
        () =>
          post('/api/ai-sources/sources', {
            name: `n${NUL}`,
            provider: 'openai',
            apiUrl: 'http://x',
            apiKey: 'k',
            model: 'm',
          }),
        'name',
      ],
      [
        'model source apiKey',
        () =>
          post('/api/ai-sources/sources', {
            name: 'n',
            provider: 'openai',
            apiUrl: 'http://x',
            apiKey: `k${NUL}`,
            model: 'm',
          }),
        'apiKey',
      ],
      ['set-model', () => post('/api/ai-sources/set-model', { modelId: `m${NUL}` }), 'modelId'],
      ['config', () => post('/api/config', { ai: { nested: [`v${NUL}`] } }), 'ai.nested[0]'],
      ['query', () => get(`/api/spaces/${spaceId}/artifacts/query?q=a%00b`), 'q'],
      ['space id in the path', () => get('/api/spaces/%00'), 'spaceId'],
      ['session id in the path', () => get('/api/agent/session/%00'), 'conversationId'],
      ['generating id in the path', () => get('/api/agent/generating/a%00'), 'conversationId'],
    ];
    for (const [what, send, field] of cases) {
      const res = await send();
      assert.equal(res.status, 400, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.equal(res.body.success, false);
      assert.equal(res.body.error, `${field} must not contain NUL characters`, what);
    }
  });

  it('answers 400 for an unpaired surrogate (config) and for JSON nested 5,000 levels', async () => {
    const lone = await post('/api/config', '{"ai":{"label":"x\\ud800y"}}');
    assert.equal(lone.status, 400, JSON.stringify(lone.body));
    assert.equal(lone.body.error, 'ai.label must not contain unpaired surrogate characters');
    const nested = await post('/api/config', `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    assert.equal(nested.status, 400);
    assert.equal(nested.body.error, 'JSON body is nested deeper than 64 levels');
    // The server is fine afterwards.
    assert.equal((await get('/api/config')).status, 200);
  });

  it('answers one 400 naming the 255-byte limit for long names, existing or not', async () => {
    const long = 'n'.repeat(256);
    const expected = /^Name too long: file and folder names are limited to 255 bytes/;
    const created = await post(`/api/spaces/${spaceId}/artifacts/file`, { name: long, content: 'x' });
    assert.equal(created.status, 400, JSON.stringify(created.body));
    assert.match(created.body.error, expected);
    const folder = await post(`/api/spaces/${spaceId}/artifacts/folder`, { name: 'é'.repeat(128) });
    assert.equal(folder.status, 400);
    assert.match(folder.body.error, expected);
    const read = await get(`/api/artifacts/content?path=${encodeURIComponent(join(spacePath, long))}`);
    assert.equal(read.status, 400, JSON.stringify(read.body));
    assert.match(read.body.error, expected);
    const save = await post('/api/artifacts/save', { path: join(spacePath, long, 'x.txt'), content: 'x' });
    assert.equal(save.status, 400);
    assert.match(save.body.error, expected);
    // 255 bytes exactly is a valid name (its atomic-write temporary name stays within the limit).
    const ok = await post(`/api/spaces/${spaceId}/artifacts/file`, { name: 'n'.repeat(255), content: 'x' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });
});
