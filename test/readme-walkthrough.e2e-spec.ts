import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { REPO_ROOT, startServer, type TestServer } from '#testing/test-server.js';

/** The bash block between the walk-through markers of the README. */
function walkthroughScript(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const block = /<!-- walkthrough:start -->\s*```bash\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(readme);
  assert.ok(block, 'the README has a walk-through block');
  return block[1]!;
}

const hasTools = ['bash', 'curl', 'jq'].every((tool) => spawnSync('which', [tool]).status === 0);

describe('the README walk-through', { skip: hasTools ? false : 'needs bash, curl and jq' }, () => {
  let model: ScriptedModelServer;
  let server: TestServer;
  let workDir: string;

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer();
    workDir = mkdtempSync(join(tmpdir(), 'svc-walkthrough-'));
  });
  after(async () => {
    await server?.stop();
    await model?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('runs as written, line by line, and ends with the reply streamed and stored', async () => {
    model.enqueue({
      steps: [{ text: 'It says: ship ' }, { text: 'the walk-through.' }, { usage: { input: 50, output: 9 } }],
    });
    // Each command is checked: the first failing line stops the run and is named.
    const script = [
      'set -euo pipefail',
      `trap 'echo "walk-through failed at line $LINENO: $BASH_COMMAND" >&2' ERR`,
      walkthroughScript(),
    ].join('\n');
    const file = join(workDir, 'walkthrough.sh');
    writeFileSync(file, script);
    const child = spawn('bash', [file], {
      cwd: workDir,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_PATH: join(REPO_ROOT, 'node_modules'),
        SVC_URL: server.url,
        SVC_TOKEN: server.password,
        MODEL_URL: model.url,
        MODEL_API_KEY: 'sk-walkthrough',
        MODEL: 'scripted-model',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(timer);
    assert.equal(code, 0, `stdout:\n${stdout}\nstderr:\n${stderr}`);

    assert.match(stdout, /^\{"success":true\}/, 'sign-in answered success');
    const events = readFileSync(join(workDir, 'events.log'), 'utf8');
    assert.match(events, /^subscribed$/m);
    assert.match(events, /^agent:turn-start /m);
    assert.match(events, /^agent:message "the walk-through\."$/m, 'deltas streamed to the socket');
    assert.match(events, /^agent:complete /m);
    assert.match(stdout.trimEnd(), /It says: ship the walk-through\.$/, 'the stored reply printed last');
    assert.equal(model.requests.length, 1, 'one model call, with the key given in step 3');
  });
});
