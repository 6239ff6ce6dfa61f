import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DomainError } from '#core/errors/domain-error.js';
import { NodeFileStore, trashDate } from './node-file-store.js';
import { NodeTrashBin, parseTrashDate, parseTrashInfo } from './node-trash-bin.js';

describe('parseTrashInfo', () => {
  it('reads the path (unescaped) and the local deletion date', () => {
    const date = new Date(2025, 2, 4, 5, 6, 7);
    const info = parseTrashInfo(`[Trash Info]\nPath=/data/a%20b/%25c.txt\nDeletionDate=${trashDate(date)}\n`);
    assert.deepEqual(info, { path: '/data/a b/%c.txt', deletedAt: date });
  });

  it('refuses records it cannot use', () => {
    for (const text of [
      '',
      'Path=/a\nDeletionDate=2025-01-01T00:00:00',
      '[Trash Info]\nPath=relative/a\nDeletionDate=2025-01-01T00:00:00',
      '[Trash Info]\nPath=/a%ZZ\nDeletionDate=2025-01-01T00:00:00',
      '[Trash Info]\nPath=/a%00b\nDeletionDate=2025-01-01T00:00:00',
      '[Trash Info]\nPath=/a\nDeletionDate=yesterday',
      '[Trash Info]\nPath=/a',
    ]) {
      assert.equal(parseTrashInfo(text), null, JSON.stringify(text));
    }
  });

  it('refuses dates that would roll over', () => {
    assert.equal(parseTrashDate('2025-13-01T00:00:00'), null);
    assert.equal(parseTrashDate('2025-02-30T00:00:00'), null);
    assert.equal(parseTrashDate('2025-01-01T24:00:00'), null);
    assert.ok(parseTrashDate('2024-02-29T23:59:59'));
  });
});

describe('NodeTrashBin', () => {
  let base: string;
  let space: string;
  let trashDir: string;
  let store: NodeFileStore;
  let bin: NodeTrashBin;
  const guard = (path: string) => store.resolve({ roots: [space], path, base: space });

  before(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'svc-trash-bin-')));
    space = join(base, 'space');
    trashDir = join(base, 'data', 'trash');
    mkdirSync(space);
    store = new NodeFileStore({ trashDir });
    bin = new NodeTrashBin({ trashDir });
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  it('lists nothing before anything was trashed', async () => {
    assert.deepEqual(await bin.list(), []);
  });

  it('lists what FileStore.trash put there and restores it', async () => {
    writeFileSync(join(space, 'a.txt'), 'abc');
    await store.trash(await guard('a.txt'));
    const [item] = await bin.list();
    assert.ok(item);
    assert.equal(item.id, 'a.txt');
    assert.equal(item.originalPath, join(space, 'a.txt'));
    assert.equal(item.kind, 'file');
    assert.equal(item.size, 3);
    await bin.restore(item.id, await guard('b.txt'));
    assert.equal(readFileSync(join(space, 'b.txt'), 'utf8'), 'abc');
    assert.deepEqual(await bin.list(), []);
    assert.equal(existsSync(join(trashDir, 'info', 'a.txt.trashinfo')), false);
  });

  it('restores across devices by copying (EXDEV)', async () => {
    mkdirSync(join(space, 'dir'));
    writeFileSync(join(space, 'dir', 'x'), 'x');
    await store.trash(await guard('dir'));
    const exdev = new NodeTrashBin({
      trashDir,
      rename: () => Promise.reject(Object.assign(new Error('cross-device'), { code: 'EXDEV' })),
    });
    await exdev.restore('dir', await guard('dir'));
    assert.equal(readFileSync(join(space, 'dir', 'x'), 'utf8'), 'x');
    assert.equal(existsSync(join(trashDir, 'files', 'dir')), false);
  });

  it('skips records without content and unusable ids; purges for good', async () => {
    writeFileSync(
      join(trashDir, 'info', 'orphan.trashinfo'),
      '[Trash Info]\nPath=/x\nDeletionDate=2025-01-01T00:00:00\n',
    );
    assert.deepEqual(await bin.list(), []);
    for (const id of ['..', '../info/orphan', 'a/b', '']) {
      assert.equal(await bin.get(id), null, id);
      await assert.rejects(bin.purge(id), (err) => err instanceof DomainError && err.kind === 'not_found');
    }
    writeFileSync(join(space, 'gone.txt'), 'g');
    await store.trash(await guard('gone.txt'));
    await bin.purge('gone.txt');
    assert.equal(existsSync(join(trashDir, 'files', 'gone.txt')), false);
    assert.equal(existsSync(join(trashDir, 'info', 'gone.txt.trashinfo')), false);
    await assert.rejects(bin.restore('gone.txt', await guard('gone.txt')), (err) => err instanceof DomainError);
  });
});
