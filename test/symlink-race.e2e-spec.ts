import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { ScriptedModelServer, scriptedModelEnv } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { runTools } from '#testing/tool-driver.js';

/**
 * Check-then-use races (docs/api.md, "Workspaces and files"): a racer flips `<space>/race` between a real folder
 * and a symlink to an outside folder while file operations run. A swap may make a request
 * fail; it must never make one read, write, trash, rename or move anything outside. The test
 * counts escapes (must be 0) and prints the figures.
 */

const SECRET = 'OUTSIDE-SECRET-c0ffee';
const PER_OPERATION = 100;

/** Every file of a folder with its content (not following symlinks). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) out[name] = readFileSync(join(dir, name), 'latin1');
  return out;
}

/** Flips `race` between the folder `.race-dir` and the symlink `.race-link`, as fast as it can. */
function startRacer(space: string, ms: number): ChildProcess {
  const script = `
    const { existsSync, renameSync } = require('node:fs');
    const [space, ms] = [process.argv[1], Number(process.argv[2])];
    const at = (n) => space + '/' + n;
    const end = Date.now() + ms;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    let flips = 0;
    while (Date.now() < end && (flips % 16 !== 0 || !existsSync(at('.race-stop')))) {
      // Each shape stays in place a moment (fast enough to race every request, slow enough
      // not to drown the file watcher); the gap between the two is two system calls.
      for (const stash of ['.race-dir', '.race-link']) {
        try { renameSync(at(stash), at('race')); } catch { continue; }
        Atomics.wait(pause, 0, 0, 1);
        try { renameSync(at('race'), at(stash)); flips++; } catch {}
      }
    }
    process.stdout.write(String(flips));`;
  return spawn(process.execPath, ['-e', script, space, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
}

describe('symlink swapped between check and use (TOCTOU)', () => {
  let model: ScriptedModelServer;
  let server: TestServer;
  let outside: string;
  let space: { id: string; path: string };
  let racer: ChildProcess | null = null;
  const api = () => apiClient(server);

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: scriptedModelEnv(model) });
    const res = await api().post('/api/spaces', { name: 'race' });
    space = { id: res.body.data.id, path: res.body.data.path };
    outside = mkdtempSync(join(tmpdir(), 'svc-race-outside-'));
    const inside = join(space.path, '.race-dir');
    mkdirSync(inside);
    // Both sides hold the same names, so an operation that follows the swap finds its target outside.
    for (const [dir, content] of [
      [inside, 'inside'],
      [outside, SECRET],
    ] as const) {
      writeFileSync(join(dir, 'f.txt'), content);
      for (let i = 0; i < PER_OPERATION; i++) {
        for (const prefix of ['v', 'r', 'm']) writeFileSync(join(dir, `${prefix}-${i}.txt`), content);
      }
    }
    symlinkSync(outside, join(space.path, '.race-link'));
  });

  after(async () => {
    racer?.kill('SIGKILL');
    await server.stop();
    await model.close();
    rmSync(outside, { recursive: true, force: true });
  });

  it('no request reads, writes, trashes, renames or moves anything outside while the racer flips', async (t) => {
    const before_ = snapshot(outside);
    const race = (rest: string) => join(space.path, 'race', rest);
    const a = `/api/spaces/${space.id}/artifacts`;
    let leakedReads = 0;
    const tries: Record<string, number> = {};
    const statuses: Record<string, Record<number, number>> = {};
    const note = (op: string, status: number) => {
      tries[op] = (tries[op] ?? 0) + 1;
      (statuses[op] ??= {})[status] = (statuses[op]![status] ?? 0) + 1;
    };

    racer = startRacer(space.path, 120_000);
    let flips = '';
    racer.stdout!.on('data', (d: Buffer) => (flips += d.toString()));
    const deadline = Date.now() + 40_000;
    const loop = async (op: string, one: (i: number) => Promise<request.Response>) => {
      for (let i = 0; i < PER_OPERATION && Date.now() < deadline; i++) {
        const res = await one(i);
        note(op, res.status);
        if (JSON.stringify(res.body ?? '').includes(SECRET)) leakedReads++;
      }
    };
    const readCount = { leaked: 0 };
    await Promise.all([
      loop('read', () => api().get(`/api/artifacts/content?path=${encodeURIComponent(race('f.txt'))}`)),
      loop('save', (i) => api().post('/api/artifacts/save', { path: race(`s-${i}.txt`), content: 'planted' })),
      loop('save-over', () => api().post('/api/artifacts/save', { path: race('f.txt'), content: 'planted' })),
      loop('create', (i) => api().post(`${a}/file`, { name: `c-${i}.txt`, parentPath: race(''), content: 'planted' })),
      loop('delete', (i) => api().del(a, { path: race(`v-${i}.txt`) })),
      loop('rename', (i) => api().post(`${a}/rename`, { oldPath: race(`r-${i}.txt`), newName: `r-${i}-x.txt` })),
      loop('move', (i) => api().post(`${a}/move`, { oldPath: race(`m-${i}.txt`) })),
      (async () => {
        // The assistant's Write, Edit and Read under the same racer.
        const calls = Array.from({ length: 15 }, (_, i) => [
          { name: 'Write', input: { file_path: `race/w-${i}.txt`, content: 'planted' } },
          { name: 'Read', input: { file_path: 'race/f.txt' } },
          { name: 'Edit', input: { file_path: 'race/f.txt', old_string: SECRET, new_string: 'edited' } },
        ]).flat();
        const results = await runTools(server, model, space.id, calls, 100_000);
        for (const r of results) if (r.result.includes(SECRET)) readCount.leaked++;
        tries.tools = results.length;
      })(),
    ]);
    writeFileSync(join(space.path, '.race-stop'), '');
    await new Promise((r) => racer!.once('close', r));

    const after_ = snapshot(outside);
    const changed = new Set([...Object.keys(before_), ...Object.keys(after_)].filter((k) => before_[k] !== after_[k]));
    const escapes = leakedReads + readCount.leaked + changed.size;
    t.diagnostic(`racer flips: ${flips || '?'}; tries: ${JSON.stringify(tries)}`);
    t.diagnostic(`statuses: ${JSON.stringify(statuses)}`);
    t.diagnostic(
      `escapes: ${escapes} (leaked reads ${leakedReads}, tool leaks ${readCount.leaked}, outside entries changed ${changed.size})`,
    );
    assert.deepEqual([...changed], [], 'entries outside changed');
    assert.equal(leakedReads + readCount.leaked, 0, 'the outside secret was read');
    // The race really ran: some operations (any kind; which ones win depends on timing) went
    // through the folder while it was one.
    const succeeded = Object.values(statuses).reduce((sum, byStatus) => sum + (byStatus[200] ?? 0), 0);
    assert.ok(succeeded > 0, JSON.stringify(statuses));
  });
});
