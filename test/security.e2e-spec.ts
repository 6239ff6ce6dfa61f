import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { ScriptedModelServer, scriptedModelEnv } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { runTools } from '#testing/tool-driver.js';
import { sleep, waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

/**
 * Regression tests of the path guard (docs/api.md, "Workspaces and files"): the assistant's tools and the API never reach outside a
 * workspace or the server's secrets; space folders never include the data folder; the
 * WebSocket refuses large frames and idle sockets before sign-in; secrets are masked.
 */

const DATA_SECRET = 'data-folder-secret-4f1c';
const OTHER_SECRET = 'other-space-secret-9b2e';
const OUTSIDE_SECRET = 'outside-secret-77aa';

let model: ScriptedModelServer;
let server: TestServer;

// One server for the whole file (starting one is slow): the scripted model answers its turns.
before(async () => {
  model = await ScriptedModelServer.start();
  server = await startServer({ env: { ...scriptedModelEnv(model), SVC_WS_SIGN_IN_TIMEOUT_MS: '800' } });
});

after(async () => {
  await server.stop();
  await model.close();
});

describe('security: tools and file API stay inside the workspace', () => {
  let outside: string;
  let space: { id: string; path: string };
  let other: { id: string; path: string };
  const api = () => apiClient(server);
  const tools = (calls: Array<{ name: string; input: Record<string, unknown> }>) =>
    runTools(server, model, space.id, calls);

  /** No leak of anything outside the workspace in a tool's output. */
  function assertNoLeak(output: string, what: string): void {
    for (const secret of [
      DATA_SECRET,
      OTHER_SECRET,
      OUTSIDE_SECRET,
      server.password,
      'sk-scripted-tools',
      'root:x:0',
    ]) {
      assert.ok(!output.includes(secret), `${what} leaked ${secret}: ${output.slice(0, 400)}`);
    }
    for (const name of ['access-password', 'server.lock', 'sentinel.txt', 'outside.txt', 'other.txt', 'PG_VERSION']) {
      assert.ok(!output.includes(name), `${what} listed ${name}: ${output.slice(0, 400)}`);
    }
  }

  before(async () => {
    writeFileSync(join(server.dataDir, 'sentinel.txt'), DATA_SECRET);
    writeFileSync(join(server.dataDir, 'access-password'), DATA_SECRET);
    outside = mkdtempSync(join(tmpdir(), 'svc-sec-outside-'));
    writeFileSync(join(outside, 'outside.txt'), OUTSIDE_SECRET);
    const create = async (name: string) => {
      const res = await api().post('/api/spaces', { name });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return { id: res.body.data.id as string, path: res.body.data.path as string };
    };
    space = await create('mine');
    other = await create('other');
    writeFileSync(join(other.path, 'other.txt'), OTHER_SECRET);
    writeFileSync(join(space.path, 'own.txt'), 'own file');
    symlinkSync(outside, join(space.path, 'escape'));
    symlinkSync(join(outside, 'outside.txt'), join(space.path, 'file-link'));
    // A folder literally named `..\..` (a legal name on Linux) must not turn into `../..`.
    mkdirSync(join(space.path, '..\\..'));
    mkdirSync(join(space.path, '.svc'), { recursive: true });
    writeFileSync(join(space.path, '.svc', 'memory.md'), 'memory of the space');
  });

  after(() => rmSync(outside, { recursive: true, force: true }));

  it('Grep: glob patterns cannot read the data folder, /etc, another space or the database', async () => {
    const globs = [
      '../../*',
      '../../../../../etc/passwd',
      `../${other.id}/*`,
      '../../**',
      '/etc/passwd',
      '..\\..\\*',
      '{..,x}/*',
      '.{.,}/*',
      'escape/*',
      'file-link',
      '**/*',
    ];
    const results = await tools([
      ...globs.map((glob) => ({ name: 'Grep', input: { pattern: '.', glob, output_mode: 'content' } })),
      { name: 'Grep', input: { pattern: '.', path: '..\\..', output_mode: 'content' } },
      { name: 'Grep', input: { pattern: '.', path: 'escape', output_mode: 'content' } },
      { name: 'Grep', input: { pattern: 'own', output_mode: 'content' } },
    ]);
    results.forEach((r, i) => assertNoLeak(r.result, `Grep #${i} ${JSON.stringify(globs[i] ?? '')}`));
    assert.match(results.at(-1)!.result, /own\.txt:1:own file/, 'an ordinary search still works');
  });

  it('Glob: patterns cannot list outside names, follow symlinked folders or show .svc', async () => {
    const patterns = [
      '../../*',
      '../**/*.txt',
      '/etc/pass*',
      `../${other.id}/*`,
      'escape/*',
      'escape/**',
      '**/*',
      '.svc/*',
    ];
    const results = await tools([
      ...patterns.map((pattern) => ({ name: 'Glob', input: { pattern } })),
      { name: 'Glob', input: { pattern: '*', path: '..\\..' } },
      { name: 'Glob', input: { pattern: '*', path: '../..' } },
    ]);
    results.forEach((r, i) => {
      assertNoLeak(r.result, `Glob #${i} ${JSON.stringify(patterns[i] ?? '')}`);
      assert.ok(!r.result.includes('memory.md'), `Glob #${i} showed .svc`);
    });
    assert.match(results[6]!.result, /own\.txt/, '**/* lists the workspace');
  });

  it('Read/Write/Edit refuse paths outside and through symlinks leading out', async () => {
    const results = await tools([
      { name: 'Read', input: { file_path: join(server.dataDir, 'sentinel.txt') } },
      { name: 'Read', input: { file_path: '../../sentinel.txt' } },
      { name: 'Read', input: { file_path: 'file-link' } },
      { name: 'Read', input: { file_path: 'escape/outside.txt' } },
      { name: 'Write', input: { file_path: 'escape/planted.txt', content: 'x' } },
      { name: 'Edit', input: { file_path: 'file-link', old_string: 'outside', new_string: 'changed' } },
    ]);
    results.forEach((r, i) => {
      // The refusal names the path asked for; what must never appear is what lies there.
      for (const secret of [DATA_SECRET, OUTSIDE_SECRET])
        assert.ok(!r.result.includes(secret), `tool #${i}: ${r.result}`);
      assert.equal(r.isError, true, `tool #${i} should fail: ${r.result}`);
    });
    assert.deepEqual(readdirSync(outside), ['outside.txt']);
  });

  it('the file API refuses .svc contents with 403 (read, detect-type, save, move, rename, delete, children)', async () => {
    const memory = join(space.path, '.svc', 'memory.md');
    const a = `/api/spaces/${space.id}/artifacts`;
    const refusals = [
      await api().get(`/api/artifacts/content?path=${encodeURIComponent(memory)}`),
      await api().get(`/api/artifacts/detect-type?path=${encodeURIComponent(memory)}`),
      await api().post('/api/artifacts/save', { path: memory, content: 'overwritten' }),
      await api().post('/api/artifacts/save', { path: join(space.path, '.svc', 'new.md'), content: 'x' }),
      await api().post(`${a}/move`, { oldPath: memory }),
      await api().post(`${a}/rename`, { oldPath: memory, newName: 'm.md' }),
      await api().del(a, { path: memory }),
      await api().post(`${a}/children`, { dirPath: join(space.path, '.svc') }),
      await api().post(`${a}/file`, { name: 'x.md', parentPath: join(space.path, '.svc') }),
      await api().post(`${a}/move`, { oldPath: join(space.path, 'own.txt'), newParentPath: '.svc' }),
    ];
    refusals.forEach((res, i) => assert.equal(res.status, 403, `#${i}: ${res.status} ${JSON.stringify(res.body)}`));
    assert.ok(existsSync(memory));
    assert.ok(existsSync(join(space.path, 'own.txt')));
  });
});

describe('security: the Bash sandbox', () => {
  let space: { id: string; path: string };
  let other: { id: string; path: string };

  before(async () => {
    writeFileSync(join(server.dataDir, 'access-password'), DATA_SECRET);
    const create = async (name: string) => {
      const res = await apiClient(server).post('/api/spaces', { name });
      return { id: res.body.data.id as string, path: res.body.data.path as string };
    };
    space = await create('bash');
    other = await create('other');
    writeFileSync(join(other.path, 'other.txt'), OTHER_SECRET);
  });

  it('is offered here (bubblewrap works on this machine)', async () => {
    const caps = (await apiClient(server).get('/api/agent/engine-capabilities')).body.data;
    assert.ok((caps.tools as string[]).includes('Bash'), JSON.stringify(caps.tools));
  });

  it('cannot see the server environment, the data folder, other spaces or other processes', async () => {
    const commands = [
      'xargs -0 -n1 < /proc/$PPID/environ; echo; cat /proc/1/environ; echo; env',
      `cat ${join(server.dataDir, 'access-password')}`,
      `ls -la ${server.dataDir} ${join(server.dataDir, 'spaces')}`,
      `cat ${join(other.path, 'other.txt')}; ls ${join(other.path, '..')}`,
      'ps -eo pid,args 2>/dev/null || ls /proc',
      'cat /etc/shadow',
      `find / -name access-password -o -name other.txt 2>/dev/null | head`,
    ];
    const results = await runTools(
      server,
      model,
      space.id,
      commands.map((command) => ({ name: 'Bash', input: { command } })),
    );
    results.forEach((r, i) => {
      for (const secret of [
        DATA_SECRET,
        OTHER_SECRET,
        server.password,
        'sk-scripted-tools',
        'SVC_REMOTE_PASSWORD',
        'SVC_AI_API_KEY',
        'root:',
      ]) {
        assert.ok(
          !r.result.includes(secret),
          `Bash #${i} (${commands[i]}) exposed ${secret}: ${r.result.slice(0, 500)}`,
        );
      }
    });
    // Inside, the server process does not exist: only the sandbox's own few processes.
    assert.ok(!/node|main\.js/.test(results[4]!.result), results[4]!.result);
  });

  it('can still work in its own workspace', async () => {
    const [r] = await runTools(server, model, space.id, [
      { name: 'Bash', input: { command: 'pwd; echo made > made.txt; cat made.txt' } },
    ]);
    assert.equal(r!.isError, false, JSON.stringify(r));
    assert.match(r!.result, /made/);
    assert.ok(existsSync(join(space.path, 'made.txt')));
  });
});

describe('security: space folders', () => {
  const api = () => apiClient(server);

  it('customPath inside or containing the data folder, or a system folder, is refused naming the field', async () => {
    for (const customPath of [
      join(server.dataDir, 'db'),
      join(server.dataDir, 'spaces'),
      join(server.dataDir, 'trash'),
      join(server.dataDir, 'new-folder'),
      server.dataDir,
      join(server.dataDir, '..'),
      '/etc',
      '/proc',
      '/usr/local/x',
      '/',
      '/home',
    ]) {
      const res = await api().post('/api/spaces', { name: 'bad', customPath });
      assert.equal(res.status, 400, `${customPath}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.match(res.body.error, /^customPath: /, customPath);
    }
    const names = (await api().get('/api/spaces')).body.data.map((s: { name: string }) => s.name);
    assert.ok(!names.includes('bad'));
  });

  it('working-dir inside the data folder or a system folder is refused naming the field', async () => {
    const space = (await api().post('/api/spaces', { name: 'wd' })).body.data;
    for (const workingDir of [join(server.dataDir, 'spaces'), server.dataDir, '/etc', '/proc', '/usr']) {
      const res = await api().put(`/api/spaces/${space.id}/working-dir`, { workingDir });
      assert.equal(res.status, 400, `${workingDir}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.match(res.body.error, /^workingDir: /, workingDir);
    }
  });

  it('deleting a space removes only a folder it created', async () => {
    const base = mkdtempSync(join(tmpdir(), 'svc-sec-folders-'));
    try {
      const existing = join(base, 'existing');
      mkdirSync(existing);
      writeFileSync(join(existing, 'keep.txt'), 'mine');
      const brought = (await api().post('/api/spaces', { name: 'b', customPath: existing })).body.data;
      const created = join(base, 'created');
      const made = (await api().post('/api/spaces', { name: 'c', customPath: created })).body.data;
      const moved = (await api().post('/api/spaces', { name: 'm' })).body.data;
      const target = join(base, 'target');
      mkdirSync(target);
      writeFileSync(join(target, 'keep.txt'), 'mine too');
      assert.equal((await api().put(`/api/spaces/${moved.id}/working-dir`, { workingDir: target })).status, 200);
      const plain = (await api().post('/api/spaces', { name: 'p' })).body.data;

      for (const s of [brought, made, moved, plain]) {
        assert.equal((await api().del(`/api/spaces/${s.id}`)).status, 200);
      }
      assert.ok(existsSync(join(existing, 'keep.txt')), 'an existing customPath stays');
      assert.ok(existsSync(join(target, 'keep.txt')), 'a working-dir stays');
      assert.ok(!existsSync(created), 'a customPath the server created goes');
      assert.ok(!existsSync(plain.path), 'a default folder goes');
      assert.ok(existsSync(join(server.dataDir, 'spaces')), 'the data folder is intact');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('security: configuration secrets are masked', () => {
  it('GET /api/config masks PGPASSWORD-like keys, auth and passwords inside URLs', async () => {
    const stored = {
      tools: {
        env: { PGPASSWORD: 'pg-secret-1', MYSQL_PWD: 'my-secret-2', PLAIN: 'visible' },
        auth: 'user:auth-secret-3',
        databaseUrl: 'postgres://svc:url-secret-4@db:5432/svc',
        mirrors: ['redis://:url-secret-5@redis:6379', 'https://example.com/a'],
      },
    };
    const saved = await apiClient(server).post('/api/config', stored);
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const res = await apiClient(server).get('/api/config');
    const text = JSON.stringify(res.body);
    for (const secret of ['pg-secret-1', 'my-secret-2', 'auth-secret-3', 'url-secret-4', 'url-secret-5']) {
      assert.ok(!text.includes(secret), `${secret} is visible: ${text}`);
    }
    const tools = res.body.data.tools;
    assert.equal(tools.env.PLAIN, 'visible');
    assert.equal(tools.databaseUrl, 'postgres://svc:***@db:5432/svc');
    assert.deepEqual(tools.mirrors, ['redis://:***@redis:6379', 'https://example.com/a']);
  });
});

describe('security: WebSocket before sign-in', () => {
  const status = async () => (await request(server.url).get('/api/remote/status')).body.data.clients as number;

  it('closes an unauthenticated socket sending a frame over 64 KB (1009), and it does not count as a client', async () => {
    await waitFor(async () => (await status()) === 0, 3000, 'earlier sockets closed');
    const ws = await WsTestClient.connect(server.wsUrl);
    await sleep(100);
    assert.equal(await status(), 0, 'unauthenticated sockets are not clients');
    ws.socket.send(JSON.stringify({ type: 'ping', payload: 'x'.repeat(100 * 1024) }));
    const closed = await Promise.race([ws.closed, sleep(3000).then(() => null)]);
    assert.equal(closed?.code, 1009, `closed: ${JSON.stringify(closed)}`);
  });

  it('after sign-in, a 100 KB frame is accepted and the socket counts', async () => {
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    await waitFor(async () => (await status()) === 1, 3000);
    ws.socket.send(JSON.stringify({ type: 'ping', payload: 'x'.repeat(100 * 1024) }));
    await ws.next((f) => f.type === 'pong', 3000);
    ws.close();
    await waitFor(async () => (await status()) === 0, 3000);
  });

  it('closes a socket that does not sign in in time', async () => {
    const ws = await WsTestClient.connect(server.wsUrl);
    const opened = Date.now();
    const closed = await Promise.race([ws.closed, sleep(5000).then(() => null)]);
    assert.ok(closed, 'still open after 5 s');
    assert.equal(closed.code, 1008);
    assert.ok(closed.at - opened >= 700, `closed after ${closed.at - opened} ms`);
  });
});
