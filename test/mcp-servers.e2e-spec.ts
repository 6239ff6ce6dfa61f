import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgentHarness, toolResults } from '#testing/agent-harness.js';
import { HttpMcpServer, MCP_STDIO_SERVER } from '#testing/mcp-http-server.js';
import { type ScriptedModelServer, textReply } from '#testing/scripted-model-server.js';
import type { TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

type ServerStatus = { name: string; status: string; tools: Array<{ name: string }>; error: string | null };

/** An `mcp` app running the suite's stdio MCP server. */
const stdioSpec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'tests',
  description: 'Adds numbers and tells where it runs.',
  type: 'mcp',
  config_schema: [{ key: 'greeting', label: 'Greeting', type: 'text', default: 'hello' }],
  mcp_server: { command: process.execPath, args: [MCP_STDIO_SERVER], env: { GREETING: '{{config.greeting}} there' } },
});

/** A spec of `type` with the fields every test spec shares. */
const specOf = (name: string, type: string, fields: Record<string, unknown>) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'tests',
  type,
  ...fields,
});

const toolCall = (name: string, input: Record<string, unknown> = {}) => ({ steps: [{ toolCall: { name, input } }] });

describe('MCP servers (stdio and streamable HTTP) in chats and runs', () => {
  const h = new AgentHarness();
  const { api, okData, bodyOf, toolNamesOf } = h;
  let model: ScriptedModelServer;
  let http: HttpMcpServer;
  let server: TestServer;
  let events: WsTestClient;
  let space: { id: string; path: string };
  let calcId: string;

  const mcpStatus = (match: (s: ServerStatus) => boolean, timeoutMs = 20_000) =>
    events.next(
      (f) =>
        f.type === 'event' &&
        f.channel === 'agent:mcp-status' &&
        (f.data!.servers as ServerStatus[]).some(match) &&
        typeof f.data!.timestamp === 'number',
      timeoutMs,
    );
  const chatTurn = (message: string): Promise<Frame[]> => h.chat(space.id, message);

  before(async () => {
    http = await HttpMcpServer.start();
    await h.start({
      SVC_AI_API_KEY: 'sk-scripted-secret',
      SVC_ALLOW_MCP_COMMANDS: '1',
      // The suite's HTTP MCP server listens on loopback, which test-mcp's inline servers reach only when allowed.
      SVC_MCP_ALLOW: '127.0.0.1',
      SVC_AGENT_RETRY_BASE_MS: '20',
      SVC_AGENT_MAX_RETRIES: '1',
    });
    ({ model, server } = h);
    events = await WsTestClient.signedIn(server.wsUrl, server.password);
    space = okData(await api.post('/api/spaces', { name: 'Tools' }));
    calcId = okData<{ appId: string }>(
      await api.post('/api/apps/install', { spec: stdioSpec('Calc Tools'), spaceId: space.id }),
    ).appId;
  });
  after(async () => {
    events?.close();
    await h.stop();
    await http?.close();
  });
  beforeEach(() => {
    model.reset();
    // Status events are awaited from each test's start.
    events.frames.length = 0;
  });

  it('a chat gets its workspace servers as mcp__<server>__<tool>; results flow back; status is announced', async () => {
    model.enqueue(toolCall('mcp__calc-tools__add', { a: 2, b: 40 }), textReply('It is 42.'));
    const connected = mcpStatus((s) => s.name === 'calc-tools' && s.status === 'connected');
    const frames = await chatTurn('What is 2 + 40?');
    const names = toolNamesOf(0);
    for (const tool of ['add', 'whereami', 'fail', 'big', 'crash'])
      assert.ok(names.includes(`mcp__calc-tools__${tool}`));
    assert.ok(names.includes('Read'), 'built-ins stay');
    const add = (model.requests[0]!.body as { tools: Array<{ name: string; input_schema: unknown }> }).tools.find(
      (t) => t.name === 'mcp__calc-tools__add',
    )!;
    assert.match(JSON.stringify(add.input_schema), /"a":\{"type":"number"\}/, "the server's JSON schema");
    assert.deepEqual(
      toolResults(frames).map(({ result, isError }) => ({ result, isError })),
      [{ result: '42', isError: false }],
    );
    assert.ok(bodyOf(1).includes('42'), 'the result reaches the model');
    const status = (await connected).data!.servers as ServerStatus[];
    const calc = status.find((s) => s.name === 'calc-tools')!;
    assert.equal(calc.error, null);
    assert.ok(calc.tools.some((t) => t.name === 'add'));
  });

  it('runs the stdio process in the space folder with only its spec variables; a tool error and a big output are clean', async () => {
    model.enqueue(
      toolCall('mcp__calc-tools__whereami'),
      toolCall('mcp__calc-tools__fail'),
      toolCall('mcp__calc-tools__big', { size: 300_000 }),
      textReply('done'),
    );
    const results = toolResults(await chatTurn('Where do you run?'));
    const where = JSON.parse(results[0]!.result) as { cwd: string; env: string[]; greeting: string };
    assert.equal(realpathSync(where.cwd), realpathSync(space.path));
    assert.equal(where.greeting, 'hello there', 'settings fill {{config.key}}');
    for (const secret of [
      'SVC_AI_API_KEY',
      'SVC_REMOTE_PASSWORD',
      'SVC_ALLOW_MCP_COMMANDS',
      'DATABASE_URL',
      'REDIS_URL',
    ]) {
      assert.ok(!where.env.includes(secret), `${secret} is not passed on`);
    }
    assert.ok(!bodyOf(1).includes('sk-scripted-secret'));
    assert.deepEqual(results[1], { ...results[1], result: 'the tool failed on purpose', isError: true });
    assert.ok(results[2]!.result.length < 110_000, 'the output is bounded');
    assert.match(results[2]!.result, /more characters left out/);
  });

  it('toolsets/list and test-mcp show the servers; test-mcp connects to given stdio and HTTP servers', async () => {
    const toolsets = okData<Array<{ id: string; open: boolean; displayName: string }>>(
      await api.post('/api/agent/toolsets/list', { spaceId: space.id, conversationId: 'any' }),
    );
    assert.deepEqual(
      toolsets.find((t) => t.id === 'mcp:calc-tools'),
      { id: 'mcp:calc-tools', displayName: 'Calc Tools', summary: 'Adds numbers and tells where it runs.', open: true },
    );
    const installed = await api.post('/api/agent/test-mcp', { spaceId: space.id });
    assert.equal(installed.status, 200, JSON.stringify(installed.body));
    const calc = (installed.body.data as ServerStatus[]).find((s) => s.name === 'calc-tools')!;
    assert.equal(calc.status, 'connected');
    const given = await api.post('/api/agent/test-mcp', {
      servers: {
        local: { command: process.execPath, args: [MCP_STDIO_SERVER] },
        remote: { type: 'http', url: http.url, headers: { Authorization: `Bearer ${http.token}` } },
        wrongToken: { url: http.url, headers: { Authorization: 'Bearer nope' } },
        missing: { command: '/no/such/program' },
      },
    });
    assert.equal(given.status, 200, JSON.stringify(given.body));
    const byName = Object.fromEntries((given.body.data as ServerStatus[]).map((s) => [s.name, s]));
    assert.equal(byName.local!.status, 'connected');
    assert.ok(byName.local!.tools.some((t) => t.name === 'crash'));
    assert.equal(byName.remote!.status, 'connected');
    assert.deepEqual(
      byName.remote!.tools.map((t) => t.name),
      ['add', 'whereami', 'fail', 'big'],
    );
    assert.equal(byName.wrongToken!.status, 'failed');
    assert.ok(byName.wrongToken!.error);
    assert.equal(byName.missing!.status, 'failed');
    const bad = await api.post('/api/agent/test-mcp', { servers: { x: { command: 'node', url: 'http://a' } } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /servers\.x\.url/);
  });

  it('an HTTP server installed for every workspace joins the chat; a digital human can turn it off', async () => {
    const httpId = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: specOf('remote-calc', 'mcp', {
          description: 'The same tools over HTTP.',
          config_schema: [{ key: 'token', label: 'Token', type: 'text', required: true }],
          mcp_server: { type: 'http', url: http.url, headers: { Authorization: 'Bearer {{config.token}}' } },
        }),
        spaceId: null,
        userConfig: { token: http.token },
      }),
    ).appId;
    try {
      model.enqueue(toolCall('mcp__remote-calc__add', { a: 1, b: 2 }), textReply('3'));
      const results = toolResults(await chatTurn('1+2?'));
      assert.equal(results[0]!.result, '3');
      assert.ok(toolNamesOf(0).includes('mcp__calc-tools__add'), 'the space server too');
      // A digital human's chat: every server, except the one it marks enabled: false.
      const helper = okData<{ appId: string }>(
        await api.post('/api/apps/install', {
          spec: specOf('Picky Helper', 'automation', {
            description: 'Uses only local tools.',
            system_prompt: 'You help.',
            requires: { mcps: [{ id: 'remote-calc', enabled: false }] },
          }),
          spaceId: space.id,
        }),
      ).appId;
      model.reset();
      const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
      ws.send({ type: 'subscribe', payload: { conversationId: `app-chat:${helper}` } });
      await ws.roundTrip();
      okData(await api.post(`/api/apps/${helper}/chat/send`, { spaceId: space.id, message: 'hi' }));
      await ws.event('agent:complete', 30_000);
      ws.close();
      const names = toolNamesOf(0);
      assert.ok(names.includes('mcp__calc-tools__add'));
      assert.ok(!names.some((n) => n.startsWith('mcp__remote-calc__')), 'turned off for this digital human');
      okData(await api.post(`/api/apps/${helper}/pause`));
    } finally {
      await api.post(`/api/apps/${httpId}/pause`);
    }
  });

  it('a run calls the MCP tools its app requires; a run needing a missing server is skipped with the reason', async () => {
    const runner = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: specOf('Adder', 'automation', {
          description: 'Adds on schedule.',
          system_prompt: 'Add the numbers.',
          requires: { mcps: [{ id: 'calc-tools', reason: 'adds' }] },
        }),
        spaceId: space.id,
      }),
    ).appId;
    model.enqueue(
      toolCall('mcp__calc-tools__add', { a: 20, b: 22 }),
      toolCall('report_to_user', { type: 'complete', summary: 'The sum is 42' }),
      textReply('Done.'),
    );
    const started = okData<{ outcome: string; runId: string }>(await api.post(`/api/apps/${runner}/trigger`));
    assert.equal(started.outcome, 'started');
    await events.next(
      (f) =>
        f.channel === 'app:activity_entry:new' &&
        f.data!.appId === runner &&
        (f.data!.entry as { type: string }).type === 'run_complete',
      30_000,
    );
    assert.ok(toolNamesOf(0).includes('mcp__calc-tools__add'));
    assert.ok(!toolNamesOf(0).includes('mcp__remote-calc__add'), 'a run gets only what it requires');
    assert.match(bodyOf(1), /"content":"42"|"text":"42"|42/);
    okData(await api.post(`/api/apps/${runner}/pause`));

    const needy = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: specOf('Needy', 'automation', {
          description: 'Needs a server nobody installed.',
          system_prompt: 'Work.',
          requires: { mcps: [{ id: 'postgres-mcp' }] },
        }),
        spaceId: space.id,
      }),
    ).appId;
    const skipped = okData<{ outcome: string; reason: string }>(await api.post(`/api/apps/${needy}/trigger`));
    assert.equal(skipped.outcome, 'skipped');
    assert.match(skipped.reason, /postgres-mcp.*not installed/);
    const activity = okData<Array<{ type: string; content: { reason?: string } }>>(
      await api.get(`/api/apps/${needy}/activity`),
    );
    assert.equal(activity[0]!.type, 'run_skipped');
    assert.match(activity[0]!.content.reason!, /postgres-mcp/);
  });

  it('a run whose required server is failing or turned off is skipped with the reason; new settings or a delete close a server', async () => {
    const install = async (spec: Record<string, unknown>) =>
      okData<{ appId: string }>(await api.post('/api/apps/install', { spec, spaceId: space.id })).appId;
    const needing = (name: string, id: string) =>
      install(specOf(name, 'automation', { description: 'd', system_prompt: 'Work.', requires: { mcps: [{ id }] } }));
    const skippedBecause = async (appId: string, reason: RegExp) => {
      const res = okData<{ outcome: string; reason: string }>(await api.post(`/api/apps/${appId}/trigger`));
      assert.equal(res.outcome, 'skipped');
      assert.match(res.reason, reason);
      const [entry] = okData<Array<{ type: string; content: { reason?: string } }>>(
        await api.get(`/api/apps/${appId}/activity`),
      );
      assert.equal(entry!.type, 'run_skipped');
      assert.match(entry!.content.reason!, reason);
      okData(await api.post(`/api/apps/${appId}/pause`));
    };
    const broken = await install(
      specOf('Broken Tools', 'mcp', {
        description: 'Exits at once.',
        mcp_server: {
          command: process.execPath,
          args: ['-e', 'process.stderr.write("cannot start"); process.exit(3)'],
        },
      }),
    );
    await skippedBecause(
      await needing('Needs Broken', 'broken-tools'),
      /broken-tools this digital human needs is failing/,
    );
    okData(await api.post(`/api/apps/${broken}/pause`));

    const spare = await install(stdioSpec('Spare Tools'));
    okData(await api.post(`/api/apps/${spare}/pause`));
    await skippedBecause(
      await needing('Needs Spare', 'spare-tools'),
      /spare-tools this digital human needs is turned off/,
    );
    okData(await api.post(`/api/apps/${spare}/resume`));

    // New settings change the launch: the running server is closed, the next turn starts it anew.
    model.enqueue(toolCall('mcp__spare-tools__whereami'), textReply('ok'));
    assert.match(toolResults(await chatTurn('where?'))[0]!.result, /hello there/);
    events.frames.length = 0;
    const stopped = mcpStatus((s) => s.name === 'spare-tools' && s.status === 'stopped');
    okData(await api.post(`/api/apps/${spare}/config`, { greeting: 'bye' }));
    await stopped;
    model.reset();
    model.enqueue(toolCall('mcp__spare-tools__whereami'), textReply('ok'));
    assert.match(toolResults(await chatTurn('where now?'))[0]!.result, /bye there/);
    // Deleting the app closes it.
    events.frames.length = 0;
    const deleted = mcpStatus((s) => s.name === 'spare-tools' && s.status === 'stopped');
    okData(await api.delete(`/api/apps/${spare}`));
    await deleted;
  });

  it('a server crashing mid-call gives a clean tool error, is restarted, and the status events say so', async () => {
    const failed = mcpStatus((s) => s.name === 'calc-tools' && s.status === 'failed');
    model.enqueue(toolCall('mcp__calc-tools__crash'), textReply('It crashed.'));
    const results = toolResults(await chatTurn('Crash it'));
    assert.equal(results[0]!.isError, true);
    assert.match(results[0]!.result, /calc-tools stopped during the call/);
    const down = (await failed).data!.servers as ServerStatus[];
    assert.match(down.find((s) => s.name === 'calc-tools')!.error!, /boom/);
    await mcpStatus((s) => s.name === 'calc-tools' && s.status === 'connected', 30_000);
    model.enqueue(toolCall('mcp__calc-tools__add', { a: 1, b: 1 }), textReply('2'));
    assert.equal(toolResults(await chatTurn('1+1?'))[0]!.result, '2', 'works again after the restart');
  });

  it('pausing the app closes its server; the chat no longer gets it; resuming brings it back', async () => {
    const stopped = mcpStatus((s) => s.name === 'calc-tools' && s.status === 'stopped');
    okData(await api.post(`/api/apps/${calcId}/pause`));
    await stopped;
    model.enqueue(textReply('ok'));
    await chatTurn('anything');
    assert.ok(!toolNamesOf(0).some((n) => n.startsWith('mcp__calc-tools__')));
    okData(await api.post(`/api/apps/${calcId}/resume`));
    model.reset();
    model.enqueue(textReply('ok'));
    await chatTurn('again');
    await waitFor(() => toolNamesOf(0).includes('mcp__calc-tools__add'), 5000);
  });

  it("a stdio server runs in its spec's cwd inside the space; a cwd escaping the space is refused", async () => {
    mkdirSync(join(space.path, 'tools', 'bin'), { recursive: true });
    const inside = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: specOf('Cwd Calc', 'mcp', {
          description: 'Runs in tools/bin.',
          mcp_server: { command: process.execPath, args: [MCP_STDIO_SERVER], cwd: 'tools/bin' },
        }),
        spaceId: space.id,
      }),
    ).appId;
    const up = await api.post('/api/apps/install', {
      spec: specOf('Up Calc', 'mcp', { description: 'd', mcp_server: { command: 'node', cwd: '../..' } }),
      spaceId: space.id,
    });
    assert.equal(up.status, 422);
    assert.match(up.body.error, /^mcp_server\.cwd must be a relative path inside the app's space folder/);
    // A symlink inside the space pointing out of it: the path guard refuses it when the server starts.
    symlinkSync(tmpdir(), join(space.path, 'escape'));
    const escaper = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: specOf('Escaper', 'mcp', {
          description: 'Tries to run outside.',
          mcp_server: { command: process.execPath, args: [MCP_STDIO_SERVER], cwd: 'escape' },
        }),
        spaceId: space.id,
      }),
    ).appId;
    try {
      model.enqueue(toolCall('mcp__cwd-calc__whereami'), textReply('there'));
      const frames = await chatTurn('Where?');
      const where = JSON.parse(toolResults(frames)[0]!.result) as { cwd: string };
      assert.equal(realpathSync(where.cwd), realpathSync(join(space.path, 'tools', 'bin')));
      assert.ok(!toolNamesOf(0).some((n) => n.startsWith('mcp__escaper__')), 'a refused server offers no tools');
      const tested = okData<ServerStatus[]>(await api.post('/api/agent/test-mcp', { spaceId: space.id }));
      const refused = tested.find((s) => s.name === 'escaper')!;
      assert.equal(refused.status, 'failed');
      assert.match(refused.error!, /cwd escape is not inside its space folder/);
    } finally {
      await api.post(`/api/apps/${inside}/pause`);
      await api.post(`/api/apps/${escaper}/pause`);
    }
  });

  it('servers configured with POST /api/config {mcpServers} join every chat, test-mcp and toolsets; a change restarts or closes them', async () => {
    const configure = async (servers: Record<string, unknown> | null) => {
      const res = await api.post('/api/config', { mcpServers: servers });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };
    await configure({
      'Conf Calc': { command: process.execPath, args: [MCP_STDIO_SERVER], env: { GREETING: 'configured' } },
      'conf-http': {
        type: 'http',
        url: http.url,
        headers: { Authorization: `Bearer ${http.token}` },
        description: 'Remote tools',
      },
      'conf-off': { command: process.execPath, args: [MCP_STDIO_SERVER], disabled: true },
    });
    try {
      const connected = mcpStatus((s) => s.name === 'conf-calc' && s.status === 'connected');
      model.enqueue(
        toolCall('mcp__conf-calc__add', { a: 5, b: 5 }),
        toolCall('mcp__conf-calc__whereami'),
        textReply('10'),
      );
      const frames = await chatTurn('5+5?');
      const names = toolNamesOf(0);
      assert.ok(names.includes('mcp__conf-calc__add'));
      assert.ok(names.includes('mcp__conf-http__add'));
      assert.ok(names.includes('mcp__calc-tools__add'), "the space's installed server too");
      assert.ok(!names.some((n) => n.startsWith('mcp__conf-off__')), 'disabled: true keeps it out');
      const results = toolResults(frames);
      assert.equal(results[0]!.result, '10');
      const where = JSON.parse(results[1]!.result) as { env: string[]; greeting: string };
      assert.equal(where.greeting, 'configured');
      assert.ok(!where.env.includes('SVC_AI_API_KEY'), 'only the entry variables');
      const status = (await connected).data!.servers as Array<ServerStatus & { appId?: string }>;
      assert.equal(status.find((s) => s.name === 'conf-calc')!.appId, undefined, 'no app behind it');

      const toolsets = okData<Array<{ id: string; displayName: string; summary: string }>>(
        await api.post('/api/agent/toolsets/list', { spaceId: space.id, conversationId: 'any' }),
      );
      assert.deepEqual(
        toolsets.filter((t) => t.id.startsWith('mcp:conf-')).map((t) => [t.id, t.displayName, t.summary]),
        [
          ['mcp:conf-calc', 'Conf Calc', 'An MCP server of the configuration (mcpServers)'],
          ['mcp:conf-http', 'conf-http', 'Remote tools'],
        ],
      );
      const tested = okData<ServerStatus[]>(await api.post('/api/agent/test-mcp', {}));
      assert.deepEqual(
        tested.filter((s) => s.name.startsWith('conf-')).map((s) => [s.name, s.status]),
        [
          ['conf-calc', 'connected'],
          ['conf-http', 'connected'],
        ],
      );

      // A changed entry is closed and, being in use, started again with its new definition.
      // (Each status event lists every server: only frames from here on count.)
      events.frames.length = 0;
      const stopped = mcpStatus((s) => s.name === 'conf-calc' && s.status === 'stopped');
      const again = mcpStatus((s) => s.name === 'conf-calc' && s.status === 'connected', 30_000);
      const read = okData<{ mcpServers: Record<string, unknown> }>(await api.get('/api/config'));
      await configure({
        ...read.mcpServers,
        'Conf Calc': { command: process.execPath, args: [MCP_STDIO_SERVER], env: { GREETING: 'changed' } },
      });
      await stopped;
      await again;
      model.reset();
      model.enqueue(toolCall('mcp__conf-calc__whereami'), textReply('ok'));
      assert.equal(
        (JSON.parse(toolResults(await chatTurn('who?'))[0]!.result) as { greeting: string }).greeting,
        'changed',
      );

      // A removed entry is closed and leaves the chats.
      events.frames.length = 0;
      const removed = mcpStatus((s) => s.name === 'conf-calc' && s.status === 'stopped');
      await configure({ 'conf-http': read.mcpServers['conf-http'] as Record<string, unknown> });
      await removed;
      model.reset();
      model.enqueue(textReply('ok'));
      await chatTurn('anything');
      assert.ok(!toolNamesOf(0).some((n) => n.startsWith('mcp__conf-calc__')));
      assert.ok(toolNamesOf(0).includes('mcp__conf-http__add'), 'the kept entry, its masked header restored');
    } finally {
      await configure(null);
    }
  });
});
