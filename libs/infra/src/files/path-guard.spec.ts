import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DomainError } from '#core/errors/domain-error.js';
import type { PathRequest } from '#core/ports/file-store.port.js';
import { DIRECT_IO, type FileIoFor, POOL_EVERYWHERE } from './file-io.js';
import { canonicalPath, guardPath as guardWith } from './path-guard.js';

// Every case with the calls in libuv's pool and made directly on the event loop (SVC_FILE_IO).
for (const [calls, ioFor] of [
  ['pool', POOL_EVERYWHERE],
  ['direct', () => DIRECT_IO],
] as Array<[string, FileIoFor]>) {
  const guardPath = (request: PathRequest) => guardWith(request, ioFor);

  async function denied(request: PathRequest): Promise<void> {
    await assert.rejects(guardPath(request), (err: unknown) => {
      assert.ok(err instanceof DomainError, String(err));
      assert.equal(err.kind, 'forbidden');
      assert.equal(err.message, 'Access denied');
      return true;
    });
  }

  describe(`path guard (symlinks resolved on disk; calls: ${calls})`, () => {
    let base: string;
    let space: string;
    let other: string;
    let outside: string;
    before(() => {
      base = realpathSync(mkdtempSync(join(tmpdir(), 'svc-guard-')));
      space = join(base, 'space');
      other = join(base, 'space-other');
      outside = join(base, 'outside');
      for (const d of [space, other, outside, join(space, 'docs')]) mkdirSync(d, { recursive: true });
      writeFileSync(join(space, 'docs', 'a.md'), 'a');
      writeFileSync(join(outside, 'secret.txt'), 'secret');
      symlinkSync(outside, join(space, 'escape'));
      symlinkSync(join(outside, 'secret.txt'), join(space, 'secret-link'));
      symlinkSync(join(outside, 'not-yet'), join(space, 'dangling-out'));
      symlinkSync(join(space, 'docs'), join(space, 'docs-link'));
      symlinkSync(join(space, 'docs', 'new.md'), join(space, 'dangling-in'));
      symlinkSync('loop-b', join(space, 'loop-a'));
      symlinkSync('loop-a', join(space, 'loop-b'));
      symlinkSync(space, join(base, 'space-alias'));
    });
    after(() => rmSync(base, { recursive: true, force: true }));

    it('accepts paths inside the root, existing or not', async () => {
      const g = await guardPath({ roots: [space], path: join(space, 'docs', 'a.md') });
      assert.deepEqual(g, {
        root: space,
        realRoot: space,
        path: join(space, 'docs', 'a.md'),
        relativePath: 'docs/a.md',
        entry: join(space, 'docs', 'a.md'),
        real: join(space, 'docs', 'a.md'),
      });
      const missing = await guardPath({ roots: [space], path: join(space, 'new', 'deep', 'x.txt') });
      assert.equal(missing.real, join(space, 'new', 'deep', 'x.txt'));
      assert.equal(missing.relativePath, 'new/deep/x.txt');
    });

    it('takes a relative path from the base and refuses it without one', async () => {
      const g = await guardPath({ roots: [space], path: 'docs/a.md', base: space });
      assert.equal(g.path, join(space, 'docs', 'a.md'));
      await denied({ roots: [space], path: 'docs/a.md' });
      await denied({ roots: [space], path: '../outside/secret.txt', base: space });
    });

    it('refuses .. escapes, absolute paths elsewhere, siblings sharing a prefix and NUL bytes', async () => {
      await denied({ roots: [space], path: join(space, '..', 'outside', 'secret.txt') });
      await denied({ roots: [space], path: `${space}/docs/../../outside/secret.txt` });
      await denied({ roots: [space], path: '/etc/passwd' });
      await denied({ roots: [space], path: '/etc/does-not-exist' });
      await denied({ roots: [space], path: join(other, 'x.txt') });
      await denied({ roots: [space], path: `${space}/docs/a.md\0.txt` });
      await denied({ roots: [], path: join(space, 'docs') });
    });

    it('allows the root itself only when asked', async () => {
      await denied({ roots: [space], path: space });
      await denied({ roots: [space], path: `${space}/docs/..` });
      const root = await guardPath({ roots: [space], path: `${space}/docs/..`, allowRoot: true });
      assert.deepEqual([root.path, root.relativePath, root.real], [space, '', space]);
    });

    it('refuses symlinks inside the root that lead outside, and everything below them', async () => {
      await denied({ roots: [space], path: join(space, 'escape') });
      await denied({ roots: [space], path: join(space, 'escape', 'secret.txt') });
      await denied({ roots: [space], path: join(space, 'escape', 'new-file.txt') });
      await denied({ roots: [space], path: join(space, 'secret-link') });
      await denied({ roots: [space], path: 'escape/secret.txt', base: space });
    });

    it('follows a dangling symlink to where it points before deciding', async () => {
      await denied({ roots: [space], path: join(space, 'dangling-out') });
      const inside = await guardPath({ roots: [space], path: join(space, 'dangling-in') });
      assert.equal(inside.real, join(space, 'docs', 'new.md'));
      assert.equal(inside.entry, join(space, 'dangling-in'));
    });

    it('keeps a symlink inside the root as the entry and its target as the real path', async () => {
      const g = await guardPath({ roots: [space], path: join(space, 'docs-link', 'a.md') });
      assert.equal(g.real, join(space, 'docs', 'a.md'));
      const link = await guardPath({ roots: [space], path: join(space, 'docs-link') });
      assert.deepEqual(
        [link.entry, link.real, link.path],
        [join(space, 'docs-link'), join(space, 'docs'), join(space, 'docs-link')],
      );
    });

    it('refuses symlink loops', async () => {
      await denied({ roots: [space], path: join(space, 'loop-a') });
      await denied({ roots: [space], path: join(space, 'loop-a', 'x') });
    });

    it('accepts a root given through a symlink and reports paths under the root as given', async () => {
      const alias = join(base, 'space-alias');
      const g = await guardPath({ roots: [alias], path: join(alias, 'docs', 'a.md') });
      assert.deepEqual(
        [g.root, g.realRoot, g.path, g.real],
        [alias, space, join(alias, 'docs', 'a.md'), join(space, 'docs', 'a.md')],
      );
      // The same file named by its real path is inside too.
      const real = await guardPath({ roots: [alias], path: join(space, 'docs', 'a.md') });
      assert.equal(real.path, join(alias, 'docs', 'a.md'));
    });

    it('picks the root a path lies in among several', async () => {
      writeFileSync(join(other, 'b.txt'), 'b');
      const g = await guardPath({ roots: [space, other], path: join(other, 'b.txt') });
      assert.deepEqual([g.root, g.relativePath], [other, 'b.txt']);
    });

    it('resolves roots sharing a folder through its listing, with the answers each gives alone', async () => {
      // base holds space, space-other, outside (folders) and space-alias (a symlink to space): with a
      // missing root beside them, five roots in one folder.
      const alias = join(base, 'space-alias');
      const missing = join(base, 'not-created');
      const roots = [other, missing, outside, alias, space];
      for (let pass = 0; pass < 2; pass++) {
        const viaAlias = await guardPath({
          roots: [other, missing, outside, alias],
          path: join(alias, 'docs', 'a.md'),
        });
        assert.deepEqual(
          [viaAlias.root, viaAlias.realRoot, viaAlias.real],
          [alias, space, join(space, 'docs', 'a.md')],
        );
        const inOther = await guardPath({ roots, path: join(other, 'b2.txt') });
        assert.deepEqual([inOther.root, inOther.realRoot, inOther.relativePath], [other, other, 'b2.txt']);
        const inMissing = await guardPath({ roots, path: join(missing, 'x', 'y.md') });
        assert.deepEqual([inMissing.root, inMissing.realRoot, inMissing.relativePath], [missing, missing, 'x/y.md']);
        // The escape under space still leads outside space, into the root `outside`: allowed as outside's.
        const escaped = await guardPath({ roots, path: join(space, 'escape', 'secret.txt') });
        assert.deepEqual([escaped.root, escaped.relativePath], [outside, 'secret.txt']);
        await denied({ roots: [other, missing, alias], path: join(space, 'escape', 'secret.txt') });
      }
    });

    it('keeps a settled folder listing while the folder is unchanged, and lists it again once it changes', async () => {
      const settled = join(base, 'settled');
      const roots = ['s1', 's2', 's3', 's4'].map((name) => join(settled, name));
      for (const root of roots) mkdirSync(root, { recursive: true });
      writeFileSync(join(roots[1]!, 'n.md'), 'n');
      let listings = 0;
      const counting: FileIoFor = (folder) => {
        const io = ioFor(folder);
        return { ...io, readdir: (path) => (listings++, io.readdir(path)) };
      };
      const check = (path: string) => guardWith({ roots, path }, counting);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // settled: unchanged for over a second
      for (let pass = 0; pass < 3; pass++) {
        const g = await check(join(roots[1]!, 'n.md'));
        assert.deepEqual([g.root, g.realRoot, g.relativePath], [roots[1], roots[1], 'n.md']);
      }
      assert.equal(listings, 1, 'listed once, then kept');
      // A root swapped for a symlink: the folder changed, so it is listed again, and the root's
      // canonical form is where the symlink leads (a kept listing would have refused the path).
      rmSync(roots[1]!, { recursive: true });
      symlinkSync(outside, roots[1]!);
      const swapped = await check(join(roots[1]!, 'secret.txt'));
      assert.deepEqual(
        [swapped.root, swapped.realRoot, swapped.real],
        [roots[1], outside, join(outside, 'secret.txt')],
      );
      assert.equal(listings, 2);
    });

    it('resolves roots one by one in a folder much larger than they are, with the same answers', async () => {
      const crowded = join(base, 'crowded');
      mkdirSync(crowded);
      for (let i = 0; i < 80; i++) writeFileSync(join(crowded, `file-${i}.txt`), '');
      const roots = ['r1', 'r2', 'r3'].map((name) => join(crowded, name));
      for (const root of roots) mkdirSync(root);
      symlinkSync(outside, join(crowded, 'r4'));
      // The first check lists the folder (its size unknown yet), the later ones resolve each root.
      for (let pass = 0; pass < 3; pass++) {
        const g = await guardPath({ roots: [...roots, join(crowded, 'r4')], path: join(crowded, 'r4', 'secret.txt') });
        assert.deepEqual([g.root, g.realRoot, g.relativePath], [join(crowded, 'r4'), outside, 'secret.txt']);
        const inR2 = await guardPath({ roots, path: join(crowded, 'r2', 'n.md') });
        assert.deepEqual([inR2.root, inR2.relativePath], [roots[1], 'n.md']);
        await denied({ roots, path: join(crowded, 'r4', 'secret.txt') });
      }
    });

    it('canonicalizes missing paths through their nearest existing ancestor', async () => {
      assert.equal(await canonicalPath(join(space, 'docs-link', 'x', 'y')), join(space, 'docs', 'x', 'y'));
      assert.equal(
        await canonicalPath(join(space, 'docs', 'a.md', 'below-a-file')),
        join(space, 'docs', 'a.md', 'below-a-file'),
      );
    });

    it("shares one check's walks: a missing path's ancestors are resolved once, with the same answers", async () => {
      const walks = new Map<string, Promise<string>>();
      const deep = join(space, 'docs-link', 'new', 'deep', 'x.txt');
      const [entry, folder] = await Promise.all([
        canonicalPath(deep, 0, walks),
        canonicalPath(join(space, 'docs-link', 'new', 'deep'), 0, walks),
      ]);
      assert.equal(entry, join(space, 'docs', 'new', 'deep', 'x.txt'));
      assert.equal(folder, join(space, 'docs', 'new', 'deep'));
      // The walk up from the entry went through its folder: the second walk took that one.
      assert.deepEqual(
        [...walks.keys()].sort(),
        [
          deep,
          join(space, 'docs-link', 'new', 'deep'),
          join(space, 'docs-link', 'new'),
          join(space, 'docs-link'),
        ].sort(),
      );
      // A dangling symlink is still followed (not shared): the same answer as unshared.
      assert.equal(await canonicalPath(join(space, 'dangling-in'), 0, new Map()), join(space, 'docs', 'new.md'));
      assert.equal(
        await canonicalPath(join(space, 'dangling-out', 'x'), 0, new Map()),
        await canonicalPath(join(space, 'dangling-out', 'x')),
      );
    });
  });
}
