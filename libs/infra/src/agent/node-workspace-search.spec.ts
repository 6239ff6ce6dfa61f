import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { GuardedPath } from '#core/ports/file-store.port.js';
import { SearchTimeLimitError } from '#core/ports/workspace-search.port.js';
import { NodeWorkspaceSearch } from './node-workspace-search.js';

/** The longest gap between ticks of a 10 ms interval while `work` runs (how long the event loop was blocked). */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T | Error; stallMs: number }> {
  let last = Date.now();
  let stallMs = 0;
  const tick = setInterval(() => {
    const now = Date.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    const result = await work().catch((err: Error) => err);
    return { result, stallMs: Math.max(stallMs, Date.now() - last) };
  } finally {
    clearInterval(tick);
  }
}

describe('NodeWorkspaceSearch', () => {
  let dir: string;
  let folder: GuardedPath;

  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-search-')));
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'evil.txt'), `one\n${'a'.repeat(34)}!\ntwo\n`);
    writeFileSync(join(dir, 'notes.md'), 'hello world\n');
    writeFileSync(join(dir, 'a'.repeat(60)), 'x');
    folder = { root: dir, realRoot: dir, path: dir, relativePath: '', entry: dir, real: dir };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('greps and globs as before', async () => {
    const search = new NodeWorkspaceSearch();
    const grep = await search.grep(folder, /hello/, { maxResults: 10 });
    assert.deepEqual(grep.matches, [{ file: 'notes.md', line: 1, text: 'hello world' }]);
    const filtered = await search.grep(folder, /o/, { maxResults: 10, glob: '*.txt' });
    assert.deepEqual(
      filtered.matches.map((m) => `${m.file}:${m.line}`),
      ['docs/evil.txt:1', 'docs/evil.txt:3'],
    );
    assert.deepEqual((await search.glob(folder, '**/*.txt', 10)).paths, ['docs/evil.txt']);
  });

  it('stops a backtracking regular expression at its time limit, off the event loop', async () => {
    const search = new NodeWorkspaceSearch({ timeLimitMs: 1_500 });
    const started = Date.now();
    const { result, stallMs } = await longestStall(() => search.grep(folder, /^(a+)+$/, { maxResults: 10 }));
    assert.ok(result instanceof SearchTimeLimitError, String(result));
    assert.ok(Date.now() - started < 5_000, `stopped after ${Date.now() - started} ms`);
    assert.ok(stallMs < 500, `event loop blocked for ${stallMs} ms`);
  });

  it("a stopped turn's search ends with it, freeing its slot for the next", async () => {
    const search = new NodeWorkspaceSearch({ timeLimitMs: 60_000, concurrency: 1 });
    const stop = new AbortController();
    const stuck = search.grep(folder, /^(a+)+$/, { maxResults: 10, signal: stop.signal });
    setTimeout(() => stop.abort(), 200);
    await assert.rejects(stuck, /stopped with its turn/);
    // The one slot is free again: the next search runs (not queued behind a 60 s worker).
    assert.deepEqual((await search.glob(folder, '*.md', 10)).paths, ['notes.md']);
    await assert.rejects(search.glob(folder, '*.md', 10, { signal: stop.signal }), /abort/i);
  });

  it('a glob with many stars against a long name answers at once', async () => {
    const search = new NodeWorkspaceSearch({ timeLimitMs: 5_000 });
    const { result, stallMs } = await longestStall(() => search.glob(folder, '*a*a*a*a*a*a*a*a*a*a*b', 10));
    assert.deepEqual(result, { paths: [], truncated: false });
    assert.ok(stallMs < 500, `event loop blocked for ${stallMs} ms`);
  });

  it('runs at most `concurrency` searches at once', async () => {
    const search = new NodeWorkspaceSearch({ timeLimitMs: 1_000, concurrency: 1 });
    const started = Date.now();
    const both = await Promise.all([
      search.grep(folder, /^(a+)+$/, { maxResults: 10 }).catch((err: Error) => err),
      search.grep(folder, /hello/, { maxResults: 10 }),
    ]);
    assert.ok(both[0] instanceof SearchTimeLimitError);
    assert.equal(both[1].matches.length, 1);
    assert.ok(Date.now() - started >= 1_000, 'the second waited for the first');
  });
});
