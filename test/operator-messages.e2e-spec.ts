import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { SERVER_ENTRY, startServer, type TestServer } from '#testing/test-server.js';

const TERMINAL_OPERATIONS = ['list', 'create', 'input', 'resize', 'kill', 'replay'];

/** What an operator and a client read first: the start-up line, --help, failures naming their variable, the terminal's answer. */
describe(`operator messages and the terminal operations (${testMode()})`, () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
  });
  after(() => server?.stop());

  it('says where to go at start, and the assistant listener only at debug', () => {
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; msg: string; url?: string });
    const listening = lines.filter((l) => l.msg.startsWith('svc-server listening'));
    assert.deepEqual(
      listening.map((l) => [l.level, l.msg]),
      [['info', `svc-server listening on http://127.0.0.1:${server.port}/ (web app and API)`]],
    );
    assert.ok(!lines.some((l) => l.msg === 'assistant API listening'), 'not at info');
  });

  it('answers every terminal operation 403 "Terminal is not available on this host"', async () => {
    for (const op of TERMINAL_OPERATIONS) {
      const res = await apiClient(server).post(`/api/terminal/${op}`, { sessionId: 'x' });
      assert.equal(res.status, 403, op);
      assert.deepEqual(res.body, { success: false, error: 'Terminal is not available on this host' }, op);
    }
    const list = await apiClient(server).get('/api/terminal/list');
    assert.deepEqual([list.status, list.body.error], [403, 'Terminal is not available on this host']);
    // Still behind the token like every /api operation.
    assert.equal((await request(server.url).post('/api/terminal/create').send({})).status, 401);
  });

  it('main.js --help lists the commands and the main variables', () => {
    const run = spawnSync(process.execPath, [SERVER_ENTRY, '--help'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(run.status, 0, run.stderr);
    for (const word of ['serve', 'migrate', 'migrate-to-postgres', 'backup', 'restore', 'DATABASE_URL', 'REDIS_URL']) {
      assert.ok(run.stdout.includes(word), word);
    }
    for (const word of ['SVC_REMOTE_PASSWORD', 'SVC_DATA_DIR', 'PORT', 'SVC_AI_API_KEY'])
      assert.ok(run.stdout.includes(word), word);
  });

  for (const [variable, url] of [
    ['DATABASE_URL', 'postgres://svc:not-shown-pw@127.0.0.1:1/svc'],
    ['REDIS_URL', 'redis://:not-shown-pw@127.0.0.1:1'],
  ] as const) {
    it(`an unreachable ${variable} stops the start naming the variable and the host, not the password`, async () => {
      const failing = await startServer({ env: { [variable]: url }, waitForListening: false });
      try {
        const { code } = await failing.exited;
        assert.equal(code, 1);
        assert.match(
          failing.output(),
          new RegExp(`svc-server failed to start: ${variable}: cannot reach 127\\.0\\.0\\.1:1 \\(`),
        );
        assert.ok(!failing.output().includes('not-shown-pw'), 'no password in the output');
      } finally {
        await failing.stop();
      }
    });
  }
});
