import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { FakeFileStore, FakeStoreFolders } from '#testing/fake-files.js';
import { spacesOn } from '#testing/service-worlds.js';
import { DomainError } from '../errors/domain-error.js';
import { ArtifactErrors, ArtifactsService } from './artifacts.service.js';
import { MAX_TEXT_BYTES } from './file-types.js';

const refusal = (kind: DomainError['kind'], message: string) => (err: unknown) => {
  assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
  assert.equal(err.kind, kind);
  assert.equal(err.message, message);
  return true;
};

async function* chunks(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

describe('ArtifactsService', () => {
  let store: FakeFileStore;
  let service: ArtifactsService;
  let spaceId: string;
  const root = '/work/s1';

  beforeEach(async () => {
    store = new FakeFileStore().addFolder('/data', root, '/work/s2');
    const spaces = spacesOn(new FakeStoreFolders(store));
    spaceId = (await spaces.create({ name: 'Files', customPath: root })).id;
    await spaces.create({ name: 'Other', customPath: '/work/s2' });
    store
      .addFile(`${root}/b10.txt`, 'ten')
      .addFile(`${root}/b9.txt`, 'nine')
      .addFile(`${root}/docs/guide.md`, '# Guide')
      .addFile(`${root}/docs/deep/more.md`, 'more')
      .addFile(`${root}/.svc/memory.md`, 'private')
      .addFile(`${root}/half.txt.svc-tmp`, 'partial')
      .addFile('/work/s2/other.txt', 'theirs');
    service = new ArtifactsService(spaces, store);
  });

  describe('listing', () => {
    it('lists folders first, in natural order, without the service folder or temporary files', async () => {
      const entries = await service.list(spaceId);
      assert.deepEqual(
        entries.map((e) => [e.relativePath, e.type, e.size]),
        [
          ['docs', 'folder', 0],
          ['docs/deep', 'folder', 0],
          ['docs/guide.md', 'file', 7],
          ['b9.txt', 'file', 4],
          ['b10.txt', 'file', 3],
        ],
      );
      assert.equal(entries[2]!.extension, 'md');
      assert.equal(entries[2]!.path, `${root}/docs/guide.md`);
      assert.deepEqual(
        (await service.list(spaceId, 1)).map((e) => e.name),
        ['docs', 'b9.txt', 'b10.txt'],
      );
      assert.deepEqual(await service.list(spaceId, 0), []);
      await assert.rejects(service.list(spaceId, -1), refusal('invalid', 'maxDepth must be a non-negative integer'));
      await assert.rejects(service.list('nope'), refusal('not_found', 'Space not found'));
    });

    it('gives the tree with top-level folders loaded, and children of a folder', async () => {
      const tree = await service.tree(spaceId);
      assert.equal(tree.workspaceRoot, root);
      const docs = tree.nodes[0]!;
      assert.equal(docs.childrenLoaded, true);
      assert.deepEqual(
        docs.children!.map((c) => [c.name, c.childrenLoaded]),
        [
          ['deep', false],
          ['guide.md', undefined],
        ],
      );
      assert.deepEqual(
        (await service.children(spaceId, 'docs/deep')).map((c) => c.relativePath),
        ['docs/deep/more.md'],
      );
      await assert.rejects(service.children(spaceId, ''), refusal('invalid', 'dirPath is required'));
      await assert.rejects(service.children(spaceId, '.svc'), refusal('forbidden', ArtifactErrors.reserved));
      await assert.rejects(service.children(spaceId, 'absent'), refusal('not_found', 'Folder not found'));
      await assert.rejects(service.children(spaceId, 'b9.txt'), refusal('invalid', 'Not a folder'));
      await assert.rejects(service.children(spaceId, '/work/s2'), refusal('forbidden', 'Access denied'));
    });
  });

  describe('changing files in a space', () => {
    it('creates files and folders by plain name under an existing parent', async () => {
      assert.deepEqual(await service.createFile(spaceId, { name: 'new.txt', parentPath: 'docs', content: 'hi' }), {
        path: `${root}/docs/new.txt`,
      });
      assert.equal(store.text(`${root}/docs/new.txt`), 'hi');
      assert.deepEqual(await service.createFolder(spaceId, { name: 'assets' }), { path: `${root}/assets` });
      assert.deepEqual(await service.createFolder(spaceId, { name: 'assets' }), { path: `${root}/assets` });
      assert.ok(store.folders.has(`${root}/assets`));
    });

    it('refuses bad names, reserved places and taken paths when creating', async () => {
      await assert.rejects(service.createFile(spaceId, {}), refusal('invalid', 'name is required'));
      await assert.rejects(
        service.createFile(spaceId, { name: 'a/b' }),
        refusal('invalid', 'name must be a plain name without slashes'),
      );
      await assert.rejects(
        service.createFile(spaceId, { name: 'x', parentPath: '.svc' }),
        refusal('forbidden', ArtifactErrors.reserved),
      );
      await assert.rejects(
        service.createFile(spaceId, { name: 'docs' }),
        refusal('conflict', 'A folder already exists at that path'),
      );
      await assert.rejects(
        service.createFolder(spaceId, { name: 'b9.txt' }),
        refusal('conflict', 'A file already exists at that path'),
      );
      await assert.rejects(
        service.createFile(spaceId, { name: 'x', parentPath: 'absent' }),
        refusal('not_found', 'Folder not found'),
      );
      await assert.rejects(
        service.createFile(spaceId, { name: 'x', parentPath: 'b9.txt' }),
        refusal('invalid', 'parentPath is not a folder'),
      );
    });

    it('moves an entry into another folder, not into itself nor onto a taken name', async () => {
      assert.deepEqual(await service.move(spaceId, { oldPath: 'b9.txt', newParentPath: 'docs' }), {
        path: `${root}/docs/b9.txt`,
      });
      assert.equal(store.text(`${root}/docs/b9.txt`), 'nine');
      assert.equal(store.files.has(`${root}/b9.txt`), false);
      await assert.rejects(
        service.move(spaceId, { oldPath: 'docs', newParentPath: 'docs/deep' }),
        refusal('invalid', 'Cannot move a folder into itself'),
      );
      store.addFile(`${root}/b9.txt`, 'again');
      await assert.rejects(
        service.move(spaceId, { oldPath: 'b9.txt', newParentPath: 'docs' }),
        refusal('conflict', 'A file or folder with that name already exists in the destination'),
      );
      await assert.rejects(service.move(spaceId, { oldPath: 'absent' }), refusal('not_found', 'File not found'));
      await assert.rejects(service.move(spaceId, {}), refusal('invalid', 'oldPath is required'));
    });

    it('renames in place and refuses a name another entry has', async () => {
      assert.deepEqual(await service.rename(spaceId, { oldPath: 'b10.txt', newName: 'ten.txt' }), {
        path: `${root}/ten.txt`,
      });
      assert.equal(store.text(`${root}/ten.txt`), 'ten');
      await assert.rejects(
        service.rename(spaceId, { oldPath: 'ten.txt', newName: 'b9.txt' }),
        refusal('conflict', 'A file or folder named b9.txt already exists'),
      );
      await assert.rejects(
        service.rename(spaceId, { oldPath: 'ten.txt', newName: '.svc' }),
        refusal('forbidden', ArtifactErrors.reserved),
      );
    });

    it('moves entries to the trash, never the service folder', async () => {
      await service.trash(spaceId, 'docs');
      assert.equal(store.trashed.get(`${root}/docs/guide.md`)?.toString(), '# Guide');
      assert.equal(store.folders.has(`${root}/docs`), false);
      await assert.rejects(service.trash(spaceId, 'docs'), refusal('not_found', 'File not found'));
      await assert.rejects(service.trash(spaceId, '.svc/memory.md'), refusal('forbidden', ArtifactErrors.reserved));
      await assert.rejects(service.trash(spaceId, undefined), refusal('invalid', 'Missing file path'));
      await assert.rejects(service.trash(spaceId, root), refusal('forbidden', 'Access denied'));
    });

    it('uploads into an existing folder, replacing a file but not a folder', async () => {
      assert.deepEqual(await service.upload(spaceId, 'docs/up.bin', chunks('ab', 'cd')), {
        path: `${root}/docs/up.bin`,
        size: 4,
      });
      assert.equal(store.text(`${root}/docs/up.bin`), 'abcd');
      await assert.rejects(
        service.upload(spaceId, 'docs', chunks('x')),
        refusal('conflict', 'A folder already exists at that path'),
      );
      await assert.rejects(
        service.upload(spaceId, 'absent/x.bin', chunks('x')),
        refusal('not_found', 'Folder not found'),
      );
    });
  });

  describe('files by absolute path', () => {
    it('reads text as UTF-8 and other bytes as base64, in any space', async () => {
      const text = await service.readContent(`${root}/docs/guide.md`);
      assert.equal(text.content, '# Guide');
      assert.equal(text.encoding, 'utf-8');
      assert.equal(text.size, 7);
      store.addFile('/work/s2/pic.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1]));
      const binary = await service.readContent('/work/s2/pic.png');
      assert.equal(binary.encoding, 'base64');
      assert.equal(binary.mimeType, 'image/png');
      assert.equal(Buffer.from(binary.content, 'base64').length, 10);
    });

    it('reads a file within the text limit once; refuses text that grew past it since it was looked at', async () => {
      const reads: string[] = [];
      const readHead = store.readHead.bind(store);
      const readFile = store.readFile.bind(store);
      store.readHead = (file, bytes) => (reads.push('head'), readHead(file, bytes));
      store.readFile = (file, max) => (reads.push('file'), readFile(file, max));
      assert.equal((await service.readContent(`${root}/docs/guide.md`)).content, '# Guide');
      assert.deepEqual(reads, ['file'], 'its type from the bytes read');
      const stat = store.stat.bind(store);
      store.stat = async (target) => ({ ...(await stat(target))!, size: 7 }); // looked at small...
      store.addFile(`${root}/grown.txt`, Buffer.alloc(MAX_TEXT_BYTES + 1, 0x61)); // ...read large
      await assert.rejects(service.readContent(`${root}/grown.txt`), refusal('internal', 'File too large'));
    });

    it('refuses folders, missing files, the service folder and paths outside every space', async () => {
      await assert.rejects(service.readContent(`${root}/docs`), refusal('invalid', 'Path is a directory'));
      await assert.rejects(service.readContent(`${root}/absent.txt`), refusal('not_found', 'File not found'));
      await assert.rejects(
        service.readContent(`${root}/.svc/memory.md`),
        refusal('forbidden', ArtifactErrors.reserved),
      );
      await assert.rejects(service.readContent('/etc/passwd'), refusal('forbidden', 'Access denied'));
      await assert.rejects(service.readContent(''), refusal('invalid', 'Missing file path'));
    });

    it('saves a whole file into an existing folder only', async () => {
      await service.save(`${root}/docs/guide.md`, 'rewritten');
      assert.equal(store.text(`${root}/docs/guide.md`), 'rewritten');
      await service.save('/work/s2/new.txt', 'fresh');
      assert.equal(store.text('/work/s2/new.txt'), 'fresh');
      await assert.rejects(service.save(`${root}/absent/x.txt`, 'x'), refusal('not_found', 'Folder not found'));
      await assert.rejects(service.save(`${root}/docs`, 'x'), refusal('invalid', 'Path is a directory'));
      await assert.rejects(service.save(`${root}/x.txt`, undefined), refusal('invalid', 'content is required'));
      await assert.rejects(service.save(`${root}/.svc/memory.md`, 'x'), refusal('forbidden', ArtifactErrors.reserved));
    });

    it('opens a download with its name, type and bytes', async () => {
      const download = await service.openDownload(`${root}/b9.txt`);
      assert.equal(download.name, 'b9.txt');
      assert.equal(download.size, 4);
      assert.match(download.mimeType, /^text\/plain/);
      const parts: Buffer[] = [];
      for await (const chunk of download.chunks) parts.push(chunk);
      assert.equal(Buffer.concat(parts).toString(), 'nine');
    });
  });
});
