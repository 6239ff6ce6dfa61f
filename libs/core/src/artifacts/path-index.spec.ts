import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type IndexedPath, PathIndex } from './path-index.js';

const ROOT = '/space';
const file = (relativePath: string): IndexedPath => ({
  name: relativePath.slice(relativePath.lastIndexOf('/') + 1),
  type: 'file',
  path: `${ROOT}/${relativePath}`,
  relativePath,
});
const folder = (relativePath: string): IndexedPath => ({ ...file(relativePath), type: 'folder' });

const paths = (index: PathIndex, q: string, limit = 50): string[] =>
  index.search(q, limit).map((hit) => hit.item.relativePath);

describe('PathIndex', () => {
  it('ranks the best matches first and respects the limit', () => {
    const index = new PathIndex({ limit: 1_000 });
    for (const p of [
      'src/domain/maintenance/notes.txt',
      'src/app/main.ts',
      'docs/readme.md',
      'README',
      'deep/a/b/readme-old.md',
      'lib/components/UserInterface.tsx',
    ]) {
      index.add(file(p));
    }
    assert.deepEqual(paths(index, 'readme'), ['README', 'docs/readme.md', 'deep/a/b/readme-old.md']);
    assert.equal(paths(index, 'main')[0], 'src/app/main.ts');
    assert.deepEqual(paths(index, 'readme', 2), ['README', 'docs/readme.md']);
    assert.deepEqual(paths(index, 'usrint'), ['lib/components/UserInterface.tsx']);
    assert.deepEqual(paths(index, 'zzz'), []);
    assert.deepEqual(paths(index, '   '), []);
    const [hit] = index.search('main.ts', 1);
    assert.deepEqual(hit!.item, {
      name: 'main.ts',
      type: 'file',
      path: '/space/src/app/main.ts',
      relativePath: 'src/app/main.ts',
    });
    assert.ok(hit!.score > 0.5);
  });

  it('searches across sealed segments and the tail alike', () => {
    const index = new PathIndex({ limit: 10_000, segmentSize: 16 });
    for (let i = 0; i < 100; i++) index.add(file(`dir${i % 7}/file-${i}.txt`));
    assert.equal(index.size, 100);
    assert.deepEqual(paths(index, 'file-42.txt', 1), ['dir0/file-42.txt']);
    const all = index.search('file', 1_000);
    assert.equal(all.length, 100, 'every path, from every segment');
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.score >= all[i]!.score, 'sorted by score');
  });

  it('applies change events: add, addDir, unlink, unlinkDir with everything below', () => {
    const index = new PathIndex({ limit: 10_000, segmentSize: 16 });
    index.apply({ type: 'addDir', path: '/space/a', relativePath: 'a' });
    for (let i = 0; i < 40; i++) {
      index.apply({ type: 'add', path: `/space/a/b/f${i}.md`, relativePath: `a/b/f${i}.md` });
    }
    index.apply({ type: 'addDir', path: '/space/a/b', relativePath: 'a/b' });
    index.apply({ type: 'add', path: '/space/keep.md', relativePath: 'keep.md' });
    index.apply({ type: 'change', path: '/space/changed-only.md', relativePath: 'changed-only.md' });
    assert.equal(index.size, 44);
    assert.equal(index.get('a/b')?.type, 'folder');
    assert.equal(index.get('changed-only.md')?.type, 'file');

    index.apply({ type: 'unlink', path: '/space/a/b/f3.md', relativePath: 'a/b/f3.md' });
    assert.equal(index.has('a/b/f3.md'), false);
    assert.ok(!paths(index, 'f3.md').includes('a/b/f3.md'));

    index.apply({ type: 'unlinkDir', path: '/space/a', relativePath: 'a' });
    assert.equal(index.size, 2);
    assert.deepEqual(paths(index, 'md').sort(), ['changed-only.md', 'keep.md']);

    // Re-adding a removed path works, and a folder replaced by a file changes type.
    index.apply({ type: 'add', path: '/space/a/b/f3.md', relativePath: 'a/b/f3.md' });
    assert.deepEqual(paths(index, 'f3.md'), ['a/b/f3.md']);
    index.add(folder('keep.md'));
    assert.equal(index.get('keep.md')?.type, 'folder');
    assert.equal(index.size, 3);
  });

  it('keeps search right through heavy churn (segments dissolving back into the tail)', () => {
    const index = new PathIndex({ limit: 100_000, segmentSize: 32 });
    const live = new Set<string>();
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 200; i++) {
        const p = `r${round}/n${i}.txt`;
        index.add(file(p));
        live.add(p);
      }
      for (let i = 0; i < 200; i += 3) {
        const p = `r${round}/n${i}.txt`;
        index.remove(p);
        live.delete(p);
      }
    }
    index.remove('r2');
    for (const p of [...live]) if (p.startsWith('r2/')) live.delete(p);
    assert.equal(index.size, live.size);
    assert.deepEqual(new Set(paths(index, 'txt', 100_000)), live);
  });

  it('refuses paths beyond its limit and says it is truncated', () => {
    const index = new PathIndex({ limit: 3 });
    assert.equal(index.add(file('a')), true);
    assert.equal(index.add(file('b')), true);
    assert.equal(index.add(file('c')), true);
    assert.equal(index.truncated, false);
    assert.equal(index.add(file('d')), false);
    assert.equal(index.truncated, true);
    assert.equal(index.size, 3);
    assert.equal(index.add(file('a')), true, 'an existing path is still fine');
  });

  it('answers a warm query on 100,000 paths quickly', () => {
    const index = new PathIndex({ limit: 200_000 });
    for (let i = 0; i < 100_000; i++) index.add(file(`d${i % 100}/s${i % 37}/file-${i}.ts`));
    index.search('warm', 1); // the first query finishes preparing the snapshots
    const started = performance.now();
    const hits = index.search('file-12345', 50);
    const ms = performance.now() - started;
    assert.equal(hits[0]?.item.name, 'file-12345.ts');
    assert.ok(ms < 500, `took ${ms.toFixed(0)} ms`);
  });
});
