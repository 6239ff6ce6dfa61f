import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DomainError } from '#core/errors/domain-error.js';
import { DIRECT_IO, type FileIoFor, POOL_EVERYWHERE } from './file-io.js';
import { NodeFileStore, trashDate, trashInfoPath } from './node-file-store.js';

// Every case with the guard's and reads' calls in libuv's pool and made directly (SVC_FILE_IO).
for (const [calls, fileIo] of [
  ['pool', POOL_EVERYWHERE],
  ['direct', () => DIRECT_IO],
] as Array<[string, FileIoFor]>) {
  describe(`NodeFileStore (calls: ${calls})`, () => {
    let base: string;
    let space: string;
    let trashDir: string;
    let store: NodeFileStore;
    const fixed = new Date(2025, 2, 4, 5, 6, 7); // local time
    const guard = (path: string, allowRoot = false) => store.resolve({ roots: [space], path, base: space, allowRoot });

    before(() => {
      base = realpathSync(mkdtempSync(join(tmpdir(), 'svc-store-')));
      space = join(base, 'space');
      trashDir = join(base, 'data', 'trash');
      mkdirSync(join(space, 'docs'), { recursive: true });
      mkdirSync(join(base, 'outside'));
      store = new NodeFileStore({ trashDir, now: () => fixed, fileIo });
    });
    after(() => rmSync(base, { recursive: true, force: true }));

    it('writes atomically, keeps the mode and leaves no temporary file', async () => {
      const file = await guard('docs/a.sh');
      await store.writeAtomic(file, 'one');
      chmodSync(join(space, 'docs', 'a.sh'), 0o751);
      await store.writeAtomic(file, 'two');
      assert.equal(readFileSync(join(space, 'docs', 'a.sh'), 'utf8'), 'two');
      assert.equal(statSync(join(space, 'docs', 'a.sh')).mode & 0o777, 0o751);
      assert.deepEqual(readdirSync(join(space, 'docs')), ['a.sh']);
    });

    it('writes through a symlink inside the root to its target, keeping the link', async () => {
      writeFileSync(join(space, 'target.txt'), 'old');
      symlinkSync(join(space, 'target.txt'), join(space, 'link.txt'));
      await store.writeAtomic(await guard('link.txt'), 'new');
      assert.equal(readFileSync(join(space, 'target.txt'), 'utf8'), 'new');
      const info = await store.stat(await guard('link.txt'));
      assert.deepEqual([info?.kind, info?.symlink, info?.size], ['file', true, 3]);
    });

    it('reads heads and whole files within a limit', async () => {
      writeFileSync(join(space, 'ten.bin'), Buffer.alloc(10, 7));
      const file = await guard('ten.bin');
      assert.equal((await store.readHead(file, 4)).length, 4);
      assert.equal((await store.readHead(file, 100)).length, 10);
      assert.equal(((await store.readFile(file, 10)) as Buffer).length, 10);
      assert.equal(await store.readFile(file, 9), 'too-large');
    });

    it('looks at and reads an entry in one visit, answering what stat and readFile answer', async () => {
      mkdirSync(join(space, 'both'));
      writeFileSync(join(space, 'both', 'small.md'), '# small\n');
      writeFileSync(join(space, 'both', 'big.bin'), Buffer.alloc(64, 1));
      writeFileSync(join(space, 'both', 'target.md'), 'through a link');
      symlinkSync(join(space, 'both', 'target.md'), join(space, 'both', 'link.md'));
      execFileSync('mkfifo', [join(space, 'both', 'pipe')]);
      const both = async (name: string, upTo: number, maxBytes: number) => {
        const target = await guard(`both/${name}`);
        return { got: await store.statAndRead(target, upTo, maxBytes), stat: await store.stat(target), target };
      };

      const small = await both('small.md', 32, 32);
      assert.deepEqual(small.got.info, small.stat);
      assert.equal((small.got.data as Buffer).toString(), '# small\n');
      // Over `upTo`: looked at, not read; within upTo but over maxBytes: too large.
      const big = await both('big.bin', 63, 1000);
      assert.deepEqual([big.got.info, big.got.data], [big.stat, undefined]);
      assert.equal((await both('big.bin', 64, 63)).got.data, 'too-large');
      // A symlink (looked at and read in two steps, as stat follows it), a folder, a FIFO (not
      // opened: nothing to wait for), a missing entry.
      const link = await both('link.md', 100, 100);
      assert.deepEqual([link.got.info, (link.got.data as Buffer).toString()], [link.stat, 'through a link']);
      assert.equal(link.got.info?.symlink, true);
      const folder = await store.statAndRead(await guard('both'), 100, 100);
      assert.deepEqual([folder.info?.kind, folder.data], ['folder', undefined]);
      const pipe = await both('pipe', 100, 100);
      assert.deepEqual([pipe.got.info, pipe.got.data], [pipe.stat, undefined]);
      assert.equal(pipe.got.info?.kind, 'other');
      assert.deepEqual(await store.statAndRead(await guard('both/none.md'), 100, 100), { info: null });
    });

    it('never reads through a folder swapped for a symlink after the guard looked', async () => {
      mkdirSync(join(space, 'swap', 'inner'), { recursive: true });
      writeFileSync(join(space, 'swap', 'inner', 'f.md'), 'inside');
      mkdirSync(join(base, 'outside', 'inner'), { recursive: true });
      writeFileSync(join(base, 'outside', 'inner', 'f.md'), 'outside secret');
      const target = await guard('swap/inner/f.md');
      assert.equal(((await store.statAndRead(target, 100, 100)).data as Buffer).toString(), 'inside');
      renameSync(join(space, 'swap'), join(space, 'swap-was'));
      symlinkSync(join(base, 'outside'), join(space, 'swap'));
      await assert.rejects(store.statAndRead(target, 100, 100), (e: unknown) => {
        assert.ok(e instanceof DomainError);
        return e.kind === 'forbidden';
      });
    });

    it('lists entries, leaving out symlinks that lead outside the root', async () => {
      mkdirSync(join(space, 'list'));
      writeFileSync(join(space, 'list', 'f.txt'), 'abc');
      mkdirSync(join(space, 'list', 'sub'));
      symlinkSync(join(base, 'outside'), join(space, 'list', 'out-link'));
      symlinkSync(join(space, 'list', 'sub'), join(space, 'list', 'in-link'));
      const entries = (await store.readDir(await guard('list'))).sort((a, b) => a.name.localeCompare(b.name));
      assert.deepEqual(entries, [
        { name: 'f.txt', kind: 'file', size: 3, symlink: false },
        { name: 'in-link', kind: 'folder', size: 0, symlink: true },
        { name: 'sub', kind: 'folder', size: 0, symlink: false },
      ]);
    });

    it('creates folders, accepts an existing one, refuses a file in the way', async () => {
      const folder = await guard('made');
      await store.makeFolder(folder);
      await store.makeFolder(folder);
      writeFileSync(join(space, 'plain'), '');
      await assert.rejects(
        store.makeFolder(await guard('plain')),
        (e: unknown) => (e as DomainError).kind === 'conflict',
      );
      await assert.rejects(
        store.makeFolder(await guard('no/such/parent')),
        (e: unknown) => (e as DomainError).kind === 'not_found',
      );
    });

    it('moves to the freedesktop trash with an info file and unique names', async () => {
      for (let i = 0; i < 3; i++) {
        writeFileSync(join(space, 'gone.txt'), `v${i}`);
        await store.trash(await guard('gone.txt'));
      }
      mkdirSync(join(space, 'gone dir'));
      writeFileSync(join(space, 'gone dir', 'inner'), 'x');
      await store.trash(await guard('gone dir'));
      assert.equal(existsSync(join(space, 'gone.txt')), false);
      assert.deepEqual(readdirSync(join(trashDir, 'files')).sort(), [
        'gone dir',
        'gone.2.txt',
        'gone.3.txt',
        'gone.txt',
      ]);
      assert.equal(readFileSync(join(trashDir, 'files', 'gone.3.txt'), 'utf8'), 'v2');
      assert.equal(readFileSync(join(trashDir, 'files', 'gone dir', 'inner'), 'utf8'), 'x');
      assert.equal(
        readFileSync(join(trashDir, 'info', 'gone dir.trashinfo'), 'utf8'),
        `[Trash Info]\nPath=${trashInfoPath(join(space, 'gone dir'))}\nDeletionDate=2025-03-04T05:06:07\n`,
      );
      assert.match(readFileSync(join(trashDir, 'info', 'gone dir.trashinfo'), 'utf8'), /Path=\/.*\/gone%20dir\n/);
      assert.deepEqual(readdirSync(join(trashDir, 'info')).sort(), [
        'gone dir.trashinfo',
        'gone.2.txt.trashinfo',
        'gone.3.txt.trashinfo',
        'gone.txt.trashinfo',
      ]);
    });

    it('falls back to copy and remove across devices', async () => {
      const exdev = async () => {
        throw Object.assign(new Error('cross-device link not permitted'), { code: 'EXDEV' });
      };
      const crossDevice = new NodeFileStore({ trashDir: join(base, 'other-trash'), now: () => fixed, rename: exdev });
      mkdirSync(join(space, 'far', 'deep'), { recursive: true });
      writeFileSync(join(space, 'far', 'deep', 'f.txt'), 'payload');
      await crossDevice.trash(await guard('far'));
      assert.equal(existsSync(join(space, 'far')), false);
      assert.equal(readFileSync(join(base, 'other-trash', 'files', 'far', 'deep', 'f.txt'), 'utf8'), 'payload');
      writeFileSync(join(space, 'm.txt'), 'm');
      await crossDevice.move(await guard('m.txt'), await guard('docs/m.txt'));
      assert.equal(readFileSync(join(space, 'docs', 'm.txt'), 'utf8'), 'm');
      assert.equal(existsSync(join(space, 'm.txt')), false);
    });

    it('moves a symlink itself, not its target', async () => {
      writeFileSync(join(space, 'real-target'), 't');
      symlinkSync(join(space, 'real-target'), join(space, 'the-link'));
      await store.move(await guard('the-link'), await guard('docs/the-link'));
      assert.equal(existsSync(join(space, 'real-target')), true);
      assert.equal(readFileSync(join(space, 'docs', 'the-link'), 'utf8'), 't');
    });

    it('formats trash dates and paths', () => {
      assert.equal(trashDate(new Date(2024, 11, 31, 23, 59, 1)), '2024-12-31T23:59:01');
      assert.equal(trashInfoPath('/a b/ü/%x'), '/a%20b/%C3%BC/%25x');
    });

    it('maps a missing file to not_found', async () => {
      await assert.rejects(store.readHead(await guard('nope'), 10), (e: unknown) => {
        assert.ok(e instanceof DomainError);
        return e.kind === 'not_found';
      });
      assert.equal(await store.stat(await guard('nope')), null);
    });
  });
}
