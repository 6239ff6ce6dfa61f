import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { FakeFileStore, FakeStoreFolders, FakeTrashBin } from '#testing/fake-files.js';
import { spacesOn } from '#testing/service-worlds.js';
import { DomainError } from '../errors/domain-error.js';
import { TrashErrors, TrashService } from './trash.service.js';

const refusal = (kind: DomainError['kind'], message: string | RegExp) => (err: unknown) => {
  assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
  assert.equal(err.kind, kind);
  if (typeof message === 'string') assert.equal(err.message, message);
  else assert.match(err.message, message);
  return true;
};

describe('TrashService', () => {
  let store: FakeFileStore;
  let bin: FakeTrashBin;
  let service: TrashService;
  let spaceId: string;
  let otherId: string;
  const root = '/work/s1';
  const at = (seconds: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, seconds));

  beforeEach(async () => {
    store = new FakeFileStore().addFolder('/data', root, '/work/s2', '/work/s10');
    const spaces = spacesOn(new FakeStoreFolders(store));
    spaceId = (await spaces.create({ name: 'Mine', customPath: root })).id;
    otherId = (await spaces.create({ name: 'Other', customPath: '/work/s2' })).id;
    await spaces.create({ name: 'Prefix', customPath: '/work/s10' });
    bin = new FakeTrashBin(store)
      .put('old.txt', `${root}/old.txt`, at(1), 'old')
      .put('new.txt', `${root}/docs/new.txt`, at(5), 'new!')
      .put('dir', `${root}/dir`, at(3), 'folder')
      .put('theirs.txt', '/work/s2/theirs.txt', at(9), 'theirs')
      .put('prefix.txt', '/work/s10/prefix.txt', at(9), 'a sibling folder whose name starts like ours')
      .put('memory.md', `${root}/.svc/memory.md`, at(9), 'private')
      .put('etc', '/etc/passwd', at(9), 'x');
    service = new TrashService(spaces, store, bin);
  });

  it("lists this space's entries only, newest first, with paths relative to the space", async () => {
    assert.deepEqual(await service.list(spaceId), [
      { id: 'new.txt', path: 'docs/new.txt', deletedAt: at(5).toISOString(), isDirectory: false, size: 4 },
      { id: 'dir', path: 'dir', deletedAt: at(3).toISOString(), isDirectory: true },
      { id: 'old.txt', path: 'old.txt', deletedAt: at(1).toISOString(), isDirectory: false, size: 3 },
    ]);
    assert.deepEqual(
      (await service.list(otherId)).map((e) => e.id),
      ['theirs.txt'],
    );
  });

  it('restores to the original path, creating the folders on the way', async () => {
    assert.deepEqual(await service.restore(spaceId, { id: 'new.txt' }), {
      path: `${root}/docs/new.txt`,
      relativePath: 'docs/new.txt',
    });
    assert.ok(store.folders.has(`${root}/docs`));
    assert.equal(store.files.get(`${root}/docs/new.txt`)?.toString(), 'new!');
    assert.equal(await bin.get('new.txt'), null);
  });

  it('answers a conflict when something is there now, and restores under another path', async () => {
    store.addFile(`${root}/old.txt`, 'a newer one');
    await assert.rejects(
      service.restore(spaceId, { id: 'old.txt' }),
      refusal('conflict', 'A file or folder already exists at old.txt; restore it under another path'),
    );
    assert.ok(await bin.get('old.txt'), 'still in the trash');
    const restored = await service.restore(spaceId, { id: 'old.txt', path: 'kept/old (restored).txt' });
    assert.equal(restored.path, `${root}/kept/old (restored).txt`);
    assert.equal(store.files.get(`${root}/old.txt`)?.toString(), 'a newer one');
    store.addFile(`${root}/blocker`, 'x');
    await assert.rejects(
      service.restore(spaceId, { id: 'dir', path: 'blocker/dir' }),
      refusal('conflict', /blocker is a file now/),
    );
  });

  it("refuses bad ids, unknown ids, other spaces' entries and paths outside the space", async () => {
    await assert.rejects(service.restore(spaceId, {}), refusal('invalid', TrashErrors.missingId));
    for (const id of ['..', '.', '../x', 'a/b', 'a\\b', 'a\0b']) {
      await assert.rejects(service.restore(spaceId, { id }), refusal('invalid', TrashErrors.badId), id);
      await assert.rejects(service.purge(spaceId, id), refusal('invalid', TrashErrors.badId), id);
    }
    for (const id of ['nothing', 'theirs.txt', 'prefix.txt', 'memory.md', 'etc']) {
      await assert.rejects(service.restore(spaceId, { id }), refusal('not_found', TrashErrors.notInTrash), id);
      await assert.rejects(service.purge(spaceId, id), refusal('not_found', TrashErrors.notInTrash), id);
    }
    await assert.rejects(
      service.restore(spaceId, { id: 'old.txt', path: '../s2/old.txt' }),
      refusal('forbidden', /Access denied/),
    );
    await assert.rejects(
      service.restore(spaceId, { id: 'old.txt', path: '.svc/old.txt' }),
      refusal('forbidden', /\.svc/),
    );
    assert.ok(await bin.get('theirs.txt'));
  });

  it('purges an entry for good', async () => {
    await service.purge(spaceId, 'old.txt');
    assert.equal(await bin.get('old.txt'), null);
    await assert.rejects(service.purge(spaceId, 'old.txt'), refusal('not_found', TrashErrors.notInTrash));
  });
});
