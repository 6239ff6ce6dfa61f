import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeClock } from '#testing/fakes.js';
import type { FileChangeType } from '#contracts/artifacts.js';
import { DomainError } from '../errors/domain-error.js';
import { FileTreeScanner, type TreeEntry, type WalkRequest } from '../ports/file-watcher.port.js';
import type { Space } from '../kernel/space.js';
import type { SpacesService } from '../spaces/spaces.service.js';
import { ArtifactSearchService, parseLimit, parseQuery } from './artifact-search.service.js';

Logger.overrideLogger(false);

/** A walk the test finishes by hand, over a list of relative paths. */
class ManualScanner extends FileTreeScanner {
  tree: string[] = [];
  walks: Array<{ request: WalkRequest; finish: () => void }> = [];
  async listFolder(): Promise<TreeEntry[] | null> {
    return [];
  }
  walk(request: WalkRequest): Promise<{ count: number; truncated: boolean }> {
    return new Promise((resolve) => {
      const finish = (): void => {
        const entries = this.tree.slice(0, request.limit).map((rel) => ({
          name: rel.slice(rel.lastIndexOf('/') + 1),
          type: rel.endsWith('/') ? ('folder' as const) : ('file' as const),
          path: `${request.root}/${rel.replace(/\/$/, '')}`,
        }));
        request.onEntries(entries);
        resolve({ count: entries.length, truncated: this.tree.length > request.limit });
      };
      this.walks.push({ request, finish });
    });
  }
  async finishLast(): Promise<void> {
    this.walks[this.walks.length - 1]!.finish();
    await new Promise((r) => setImmediate(r));
  }
}

describe('ArtifactSearchService', () => {
  let bus: RecordingEventBus;
  let scanner: ManualScanner;
  let clock: FakeClock;
  let service: ArtifactSearchService;
  let root: string;

  beforeEach(() => {
    bus = new RecordingEventBus();
    scanner = new ManualScanner();
    clock = new FakeClock();
    root = '/data/s1';
    const spaces = {
      get: async (id: string): Promise<Space> => {
        if (id !== 's1') throw DomainError.notFound('Space not found');
        return { id, path: root } as Space;
      },
    } as unknown as SpacesService;
    service = new ArtifactSearchService(spaces, scanner, bus, clock, { indexLimit: 5, idleEvictMs: 60_000 });
    service.onModuleInit();
  });
  afterEach(() => service.onModuleDestroy());

  const batch = (changes: Array<[string, string]>, resync = false) =>
    bus.publish('artifact:changed-batch', {
      spaceId: 's1',
      changes: changes.map(([type, rel]) => ({
        type: type as FileChangeType,
        path: `${root}/${rel}`,
        relativePath: rel,
      })),
      ...(resync ? { resync: true } : {}),
    });

  it('validates q and limit', () => {
    assert.throws(() => parseQuery(undefined), /q is required/);
    assert.throws(() => parseQuery('  '), /q is required/);
    assert.equal(parseQuery(' a b '), 'a b');
    assert.equal(parseLimit(undefined), 50);
    assert.equal(parseLimit('7'), 7);
    assert.equal(parseLimit('5000'), 1_000);
    for (const bad of ['0', '-2', 'x', '1.5', ['1', '2'], 0]) {
      assert.throws(() => parseLimit(bad), /limit must be a positive integer/, JSON.stringify(bad));
    }
  });

  it('builds on the first query, answering indexing: true until done, then applies changes heard meanwhile', async () => {
    scanner.tree = ['docs/', 'docs/alpha.md', 'beta.txt'];
    const first = await service.query('s1', 'alpha', undefined);
    assert.deepEqual(first, { items: [], truncated: false, indexing: true });
    await batch([
      ['add', 'docs/gamma-alpha.md'],
      ['unlink', 'beta.txt'],
    ]);
    await scanner.finishLast();
    const done = await service.query('s1', 'alpha', undefined);
    assert.equal(done.indexing, false);
    assert.deepEqual(
      done.items.map((i) => i.relativePath),
      ['docs/alpha.md', 'docs/gamma-alpha.md'],
    );
    assert.deepEqual((await service.query('s1', 'beta', undefined)).items, []);
    assert.equal(scanner.walks.length, 1, 'one build');
  });

  it('keeps current with change events; a resync rebuilds while the old index keeps answering', async () => {
    scanner.tree = ['one.txt'];
    await service.query('s1', 'one', undefined);
    await scanner.finishLast();
    await batch([['add', 'two.txt']]);
    await batch([['add', '.git/HEAD']]);
    assert.deepEqual((await service.query('s1', 'txt', undefined)).items.map((i) => i.relativePath).sort(), [
      'one.txt',
      'two.txt',
    ]);
    scanner.tree = ['three.txt'];
    await batch([], true);
    const during = await service.query('s1', 'txt', undefined);
    assert.equal(during.indexing, true);
    assert.equal(during.items.length, 2, 'the old index answers meanwhile');
    await scanner.finishLast();
    assert.deepEqual(
      (await service.query('s1', 'txt', undefined)).items.map((i) => i.relativePath),
      ['three.txt'],
    );
  });

  it('says truncated beyond the limit', async () => {
    scanner.tree = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'];
    await service.query('s1', 'a', undefined);
    await scanner.finishLast();
    const result = await service.query('s1', 'a', undefined);
    assert.equal(result.truncated, true);
    assert.equal(result.items.length, 5);
  });

  it('reconcile rebuilds and waits; its own resync event does not rebuild again', async () => {
    scanner.tree = ['x.md'];
    const reconciled = service.reconcile('s1');
    await new Promise((r) => setImmediate(r));
    await scanner.finishLast();
    await reconciled;
    assert.equal((await service.query('s1', 'x', undefined)).indexing, false);
    await batch([], true);
    assert.equal(scanner.walks.length, 1);
    await batch([], true);
    assert.equal(scanner.walks.length, 2, 'a later resync does');
  });

  it('drops the index of a deleted or re-pointed space, and idle ones', async () => {
    scanner.tree = ['x.md'];
    await service.query('s1', 'x', undefined);
    await scanner.finishLast();
    await bus.publish('space:changed', { spaceId: 's1', change: 'updated' });
    assert.equal(service.hasIndex('s1'), true, 'a rename keeps it');
    await bus.publish('space:changed', { spaceId: 's1', change: 'folder-changed' });
    assert.equal(service.hasIndex('s1'), false);

    await service.query('s1', 'x', undefined);
    root = '/elsewhere';
    const moved = await service.query('s1', 'x', undefined);
    assert.equal(moved.indexing, true, 'a new folder means a new index');
    await scanner.finishLast();
    clock.advance(61_000);
    (service as unknown as { evictIdle(): void }).evictIdle();
    assert.equal(service.hasIndex('s1'), false);
  });

  it('unknown spaces are not found', async () => {
    await assert.rejects(service.query('nope', 'x', undefined), (err: DomainError) => err.kind === 'not_found');
  });
});
