import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ignoreUnder } from '#core/artifacts/watch-events.js';
import type { RawFileChange, TreeEntry } from '#core/ports/file-watcher.port.js';
import { sleep, waitFor } from '#testing/fakes.js';
import { ChokidarFileWatcher } from './chokidar-file-watcher.js';
import { NodeFileTreeScanner } from './node-file-tree-scanner.js';

describe('watch adapters', () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-watch-adapters-'));
  before(() => {
    for (const dir of ['a/b/c', '.git/objects', 'node_modules/x', '.svc', 'a/node_modules/y', 'outside']) {
      mkdirSync(join(root, dir), { recursive: true });
    }
    for (const file of [
      'top.txt',
      'a/one.md',
      'a/b/two.md',
      'a/b/c/three.md',
      '.git/HEAD',
      'node_modules/x/i.js',
      '.svc/m.md',
    ]) {
      writeFileSync(join(root, file), file);
    }
    symlinkSync(join(root, 'a'), join(root, 'link-to-a'));
    symlinkSync(join(root, 'nowhere'), join(root, 'dangling'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  describe('NodeFileTreeScanner', () => {
    const scanner = new NodeFileTreeScanner({ concurrency: 2 });

    it('walks the tree, skipping ignored folders, typing symlinks by target without following them', async () => {
      const seen: TreeEntry[] = [];
      const result = await scanner.walk({
        root,
        ignore: ignoreUnder(root),
        limit: 1_000,
        onEntries: (e) => seen.push(...e),
      });
      const rel = seen.map((e) => `${e.type}:${e.path.slice(root.length + 1)}`).sort();
      assert.deepEqual(rel, [
        'file:a/b/c/three.md',
        'file:a/b/two.md',
        'file:a/one.md',
        'file:top.txt',
        'folder:a',
        'folder:a/b',
        'folder:a/b/c',
        'folder:link-to-a',
        'folder:outside',
      ]);
      assert.deepEqual(result, { count: 9, truncated: false });
    });

    it('stops at the limit and says so', async () => {
      const seen: TreeEntry[] = [];
      const result = await scanner.walk({
        root,
        ignore: ignoreUnder(root),
        limit: 4,
        onEntries: (e) => seen.push(...e),
      });
      assert.equal(seen.length, 4);
      assert.deepEqual(result, { count: 4, truncated: true });
    });

    it('stops when aborted', async () => {
      const abort = new AbortController();
      abort.abort();
      const result = await scanner.walk({
        root,
        ignore: () => false,
        limit: 1_000,
        signal: abort.signal,
        onEntries: () => undefined,
      });
      assert.equal(result.count, 0);
    });

    it('lists one folder, or null when it is gone', async () => {
      const entries = await scanner.listFolder(root, (p) => p.endsWith('.git'));
      assert.ok(entries!.some((e) => e.name === 'node_modules' && e.type === 'folder'));
      assert.ok(!entries!.some((e) => e.name === '.git'));
      assert.equal(await scanner.listFolder(join(root, 'missing'), () => false), null);
      assert.equal(await scanner.listFolder(join(root, 'top.txt'), () => false), null);
    });
  });

  describe('ChokidarFileWatcher', () => {
    it('reports changes after it is ready, never inside ignored folders, and nothing after close', async () => {
      const changes: RawFileChange[] = [];
      const watch = await new ChokidarFileWatcher().watch(
        { root, ignore: ignoreUnder(root) },
        { change: (c) => changes.push(c), error: (e) => assert.fail(e) },
      );
      try {
        writeFileSync(join(root, '.git/objects/new'), 'x');
        writeFileSync(join(root, 'a/node_modules/y/z.js'), 'x');
        writeFileSync(join(root, '.svc/other.md'), 'x');
        mkdirSync(join(root, 'a/b/c/d'));
        writeFileSync(join(root, 'a/b/c/d/new.txt'), 'x');
        writeFileSync(join(root, 'a/one.md'), 'changed');
        unlinkSync(join(root, 'top.txt'));
        await waitFor(() => changes.some((c) => c.type === 'unlink'), { what: 'unlink' });
        await waitFor(() => changes.some((c) => c.path.endsWith('new.txt')), { what: 'new file' });
        await sleep(300);
        const byType = (type: string) =>
          changes.filter((c) => c.type === type).map((c) => c.path.slice(root.length + 1));
        assert.deepEqual(byType('addDir'), ['a/b/c/d']);
        assert.deepEqual(byType('add'), ['a/b/c/d/new.txt']);
        assert.ok(byType('change').includes('a/one.md'));
        assert.deepEqual(byType('unlink'), ['top.txt']);
        assert.ok(!changes.some((c) => /\.git|node_modules|\.svc/.test(c.path)), JSON.stringify(changes));
      } finally {
        await watch.close();
      }
      const count = changes.length;
      writeFileSync(join(root, 'after-close.txt'), 'x');
      await sleep(300);
      assert.equal(changes.length, count);
    });

    it('refuses a folder that does not exist', async () => {
      await assert.rejects(
        new ChokidarFileWatcher().watch(
          { root: join(root, 'missing'), ignore: () => false },
          { change: () => undefined, error: () => undefined },
        ),
      );
    });
  });
});
