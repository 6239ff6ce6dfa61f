import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

const API_KEY = 'sk-live-Secret-Key-0123456789';
const WRONG_TOKENS = [
  'Wrong-Guess-1111',
  'Wrong-Guess-2222',
  'Wrong-Guess-3333',
  'Wrong-Guess-4444',
  'Wrong-Guess-5555',
];

type Line = Record<string, unknown> & { level: string; msg: string };

/**
 * What an operator reads at `info` after things go wrong, and what they must never read:
 * the server runs at `debug` so every line it could write is checked for secrets.
 */
describe('logs that tell what happened', () => {
  let model: ScriptedModelServer;
  let server: TestServer;
  const lines = (): Line[] =>
    server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
  const find = (msg: string, where: (l: Line) => boolean = () => true): Line | undefined =>
    lines().find((l) => l.msg === msg && where(l));
  /**
   * `find`, waiting up to 5 s for the line: the server's log reaches this process through a pipe,
   * on its own schedule, so a line written before an answer can be read after the answer.
   */
  const eventually = async (msg: string, where?: (l: Line) => boolean): Promise<Line | undefined> => {
    for (let waited = 0; waited < 5_000; waited += 50) {
      const line = find(msg, where);
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return find(msg, where);
  };

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({
      env: {
        LOG_LEVEL: 'debug',
        SVC_AI_PROVIDER: 'anthropic',
        SVC_AI_API_URL: model.url,
        SVC_AI_API_KEY: API_KEY,
        SVC_AI_MODEL: 'scripted-model',
        SVC_AGENT_RETRY_BASE_MS: '10',
        SVC_AGENT_MAX_RETRIES: '2',
      },
    });
  });
  after(async () => {
    await server?.stop();
    await model?.close();
  });

  it('logs the start-up checks of the schema', () => {
    const migration = lines().find((l) => /migrations applied|schema is current/.test(l.msg));
    assert.ok(migration, 'a migrations line');
    assert.equal(migration.level, 'info');
  });

  it('logs failed model calls (provider, status, attempt) and the failed turn, with job and turn ids', async () => {
    const space = await apiClient(server).post('/api/spaces', { name: 'logs' });
    const spaceId = space.body.data.id as string;
    const conv = await apiClient(server).post(`/api/spaces/${spaceId}/conversations`, {});
    const conversationId = conv.body.data.id as string;
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    ws.send({ type: 'subscribe', payload: { conversationId } });
    await ws.roundTrip();
    // One retryable failure, then an authentication failure that ends the turn.
    model.enqueue({ status: 503 }, { status: 401, error: `invalid x-api-key ${API_KEY}` });
    await apiClient(server)
      .post('/api/agent/message')
      .set('X-Request-Id', 'send-message-1')
      .send({ spaceId, conversationId, message: 'hello' })
      .expect(200);
    const error = await ws.event('agent:error', 15_000);
    assert.match(String(error.data?.error), /invalid x-api-key \*\*\*/, 'the key is cut from the error clients see');
    await ws.event('agent:complete', 15_000);
    ws.close();

    assert.ok(await eventually('turn failed'), 'a failed-turn line');
    // A retryable failure is logged once by the loop that retries it (the provider's own line is
    // debug); a refused key is a warning that says which source's key to check.
    const calls = lines().filter((l) => l.msg === 'model call failed' || /^model call refused/.test(l.msg));
    assert.deepEqual(
      calls.map((l) => [l.level, l.provider, l.status, l.kind]),
      [
        ['debug', 'anthropic', 503, 'server_error'],
        ['warn', 'anthropic', 401, 'authentication_failed'],
      ],
    );
    assert.match(calls[1]!.msg, /^model call refused \(401\): /);
    const retry = find('model call failed; retrying');
    assert.ok(retry);
    assert.equal(retry.attempt, 1);
    assert.equal(retry.status, 503);
    const turn = find('turn failed');
    assert.ok(turn, 'a failed-turn line');
    assert.equal(turn.level, 'warn');
    for (const line of [...calls, retry, turn]) {
      assert.equal(typeof line.turnId, 'string', `${line.msg} has turnId`);
      assert.equal(typeof line.jobId, 'string', `${line.msg} has jobId`);
      assert.equal(line.reqId, 'send-message-1', `${line.msg} carries the request id of the message`);
    }
  });

  it('logs sign-in failures and the lockout with the address and request id, never the attempt', async () => {
    for (const [i, token] of WRONG_TOKENS.entries()) {
      await request(server.url).post('/api/remote/login').set('X-Request-Id', `login-${i}`).send({ token }).expect(401);
    }
    const locked = await request(server.url).post('/api/remote/login').send({ token: server.password });
    assert.equal(locked.status, 429);
    const ws = await WsTestClient.connect(server.wsUrl);
    ws.send({ type: 'auth', payload: { token: 'Wrong-Over-The-Socket' } });
    await ws.next((f) => f.type === 'auth:failed');
    ws.close();

    assert.ok(await eventually('sign-in refused: locked out'), 'the refused attempt while locked');
    const failed = find('sign-in failed: wrong password', (l) => l.reqId === 'login-0');
    assert.ok(failed, 'a sign-in failure line carrying its request id');
    assert.equal(failed.level, 'info');
    assert.equal(failed.ip, '127.0.0.1');
    const lockout = find('sign-in lockout in force');
    assert.ok(lockout);
    assert.equal(lockout.ip, '127.0.0.1');
    assert.equal(lockout.level, 'warn');
    assert.ok(find('sign-in refused: locked out'), 'the refused attempt while locked');
  });

  it('never writes the password, the API key or a sign-in attempt, at any level', () => {
    const output = server.output();
    assert.ok(output.includes('"level":"debug"'), 'debug lines were written');
    for (const secret of [server.password, API_KEY, ...WRONG_TOKENS, 'Wrong-Over-The-Socket']) {
      assert.equal(output.includes(secret), false, `the output contains ${secret.slice(0, 6)}…`);
    }
  });
});
