import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { okData } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { automationSpec, TriggerHarness } from '#testing/trigger-harness.js';
import { sleep, waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

const spec = (tag: string, config: Record<string, unknown>) =>
  automationSpec(tag, [{ id: 'files', source: { type: 'file', config } }], `Watcher ${tag}`);

describe(`file triggers (${testMode()})`, () => {
  let h: TriggerHarness;
  const api = () => h.api;
  const data = okData;
  const runsOf = (tag: string) => h.runsOf(tag);
  const changedPaths = (run: { data: Record<string, unknown> }) =>
    (run.data.changes as Array<{ path: string }>).map((c) => c.path).sort();

  before(async () => {
    h = await TriggerHarness.start();
  });
  after(async () => {
    await h?.stop();
  });

  /** Writes a probe file (again) until the watcher reports it, so later writes are surely seen. */
  async function watched(spaceId: string, root: string): Promise<void> {
    const ws = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    const seen = () =>
      ws.frames.some(
        (f) =>
          f.channel === 'artifact:changed-batch' &&
          f.data?.spaceId === spaceId &&
          (f.data.changes as Array<{ relativePath: string }>).some((c) => c.relativePath === 'probe.bin'),
      );
    const deadline = Date.now() + 20_000;
    while (!seen()) {
      if (Date.now() > deadline) throw new Error('the space is not watched');
      writeFileSync(join(root, 'probe.bin'), String(Date.now()));
      await waitFor(seen, 1_500, 'probe').catch(() => undefined);
    }
    ws.close();
  }

  it('a burst of matching changes starts one run with the changed paths; others and .svc never', async () => {
    const space = data<{ id: string; path: string }>(await api().post('/api/spaces', { name: 'file triggers' }));
    await watched(space.id, space.path);
    data(await api().post('/api/apps/install', { spec: spec('md', { pattern: '*.md' }), spaceId: space.id }));
    // Not matching: another extension, and the server's own folder.
    writeFileSync(join(space.path, 'notes.txt'), 'plain');
    mkdirSync(join(space.path, '.svc'), { recursive: true });
    writeFileSync(join(space.path, '.svc', 'hidden.md'), 'never');
    // One burst of three markdown files.
    mkdirSync(join(space.path, 'docs'), { recursive: true });
    for (const name of ['a.md', 'b.md', 'docs/c.md']) {
      writeFileSync(join(space.path, name), `# ${name}`);
      await sleep(100);
    }
    await waitFor(() => runsOf('md').length >= 1, 20_000, 'the file run');
    await sleep(3000);
    const runs = runsOf('md');
    assert.equal(runs.length, 1, 'one run for the burst');
    assert.equal(runs[0]!.type, 'file');
    assert.deepEqual(changedPaths(runs[0]!), ['a.md', 'b.md', 'docs/c.md']);
    // A later change is a new burst.
    writeFileSync(join(space.path, 'a.md'), '# again');
    await waitFor(() => runsOf('md').length === 2, 20_000, 'a second burst');
    assert.deepEqual(changedPaths(runsOf('md')[1]!), ['a.md']);
  });

  it('path keeps the trigger to one folder; another space does not trigger it', async () => {
    const one = data<{ id: string; path: string }>(await api().post('/api/spaces', { name: 'path one' }));
    const two = data<{ id: string; path: string }>(await api().post('/api/spaces', { name: 'path two' }));
    await watched(one.id, one.path);
    await watched(two.id, two.path);
    mkdirSync(join(one.path, 'inbox'), { recursive: true });
    data(
      await api().post('/api/apps/install', {
        spec: spec('inbox', { path: join(one.path, 'inbox') }),
        spaceId: one.id,
      }),
    );
    writeFileSync(join(one.path, 'outside.csv'), '1');
    writeFileSync(join(two.path, 'inbox.csv'), '1');
    writeFileSync(join(one.path, 'inbox', 'in.csv'), '1');
    await waitFor(() => runsOf('inbox').length >= 1, 20_000, 'the inbox run');
    await sleep(2500);
    assert.equal(runsOf('inbox').length, 1);
    assert.deepEqual(changedPaths(runsOf('inbox')[0]!), ['inbox/in.csv']);
  });
});
