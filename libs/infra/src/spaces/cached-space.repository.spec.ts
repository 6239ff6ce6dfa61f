import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NewSpace } from '#core/ports/space.repository.port.js';
import type { Space } from '#core/kernel/space.js';
import { FakeSpaceRepository } from '#testing/fake-spaces.js';
import { CachedSpaceRepository } from './cached-space.repository.js';

const space = (id: string, name = id): NewSpace => ({
  id,
  name,
  icon: 'folder',
  color: null,
  path: `/spaces/${id}`,
  isTemp: false,
  preferences: {},
});

/** The fake, counting the reads that reach it; `hold` keeps the next read's answer back until released. */
class CountingSpaces extends FakeSpaceRepository {
  reads = 0;
  lists = 0;
  listGate: Promise<void> | null = null;

  override async listAll(): Promise<Space[]> {
    this.lists++;
    const answer = (await super.listAll()).map((s) => ({ ...s, preferences: { ...s.preferences } }));
    const gate = this.listGate;
    this.listGate = null;
    if (gate) await gate;
    return answer;
  }

  private gate: { reached: () => void; wait: Promise<void> } | null = null;

  hold(): { reached: Promise<void>; release: () => void } {
    let release!: () => void;
    let reached!: () => void;
    const arrived = new Promise<void>((r) => (reached = r));
    this.gate = { reached, wait: new Promise<void>((r) => (release = r)) };
    return { reached: arrived, release };
  }

  override async findById(id: string): Promise<Space | null> {
    this.reads++;
    const answer = await super.findById(id);
    const gate = this.gate;
    this.gate = null;
    if (gate) {
      gate.reached();
      await gate.wait;
    }
    return answer === null ? null : { ...answer };
  }
}

describe('CachedSpaceRepository', () => {
  it('answers a space it has read without reading it again, each caller with its own copy', async () => {
    const stored = new CountingSpaces();
    const cached = new CachedSpaceRepository(stored);
    await cached.insert(space('a'));
    stored.reads = 0;
    const first = await cached.findById('a');
    const second = await cached.findById('a');
    assert.equal(stored.reads, 1);
    assert.deepEqual(second, first);
    first!.name = 'changed by a caller';
    first!.preferences.memory = { enabled: false };
    first!.createdAt.setTime(0);
    assert.equal((await cached.findById('a'))!.name, 'a');
    assert.deepEqual((await cached.findById('a'))!.preferences, {});
    assert.notEqual((await cached.findById('a'))!.createdAt.getTime(), 0);
    assert.equal(stored.reads, 1);
  });

  it('does not keep a miss: a space created later is found', async () => {
    const stored = new CountingSpaces();
    const cached = new CachedSpaceRepository(stored);
    assert.equal(await cached.findById('a'), null);
    assert.equal(await cached.findById('a'), null);
    assert.equal(stored.reads, 2);
    await stored.insert(space('a')); // even one written behind its back
    assert.equal((await cached.findById('a'))?.id, 'a');
  });

  it('reads again after each of its writes: update, remove, reorder, insert, insertIfMissing', async () => {
    const stored = new CountingSpaces();
    const cached = new CachedSpaceRepository(stored);
    await cached.insert(space('a'));
    await cached.insert(space('b'));
    await cached.findById('a');

    await cached.update('a', { name: 'renamed', preferences: { memory: { enabled: false } } });
    assert.equal((await cached.findById('a'))!.name, 'renamed');
    assert.deepEqual((await cached.findById('a'))!.preferences, { memory: { enabled: false } });
    (await cached.findById('a'))!.preferences.memory!.enabled = true; // a caller's own copy, down to here
    assert.deepEqual((await cached.findById('a'))!.preferences, { memory: { enabled: false } });

    const reads = stored.reads;
    await cached.reorder(['b', 'a']);
    await cached.findById('a');
    assert.equal(stored.reads, reads + 1);

    await cached.insert(space('c'));
    await cached.findById('a');
    assert.equal(stored.reads, reads + 2);

    await cached.insertIfMissing(space('d'));
    await cached.findById('a');
    assert.equal(stored.reads, reads + 3);

    await cached.remove('a');
    assert.equal(await cached.findById('a'), null);
  });

  it('never keeps what a read in flight during a write answered', async () => {
    const stored = new CountingSpaces();
    const cached = new CachedSpaceRepository(stored);
    await cached.insert(space('a'));
    const held = stored.hold();
    const reading = cached.findById('a'); // reads the old name, then waits
    await held.reached;
    await cached.update('a', { name: 'renamed' });
    held.release();
    assert.equal((await reading)!.name, 'a'); // what the database said when it was asked
    assert.equal((await cached.findById('a'))!.name, 'renamed');
  });

  it('reads the list once until a write, each caller with its own copy; the folders from it', async () => {
    const stored = new CountingSpaces();
    const cached = new CachedSpaceRepository(stored);
    await cached.insert(space('a'));
    await cached.insert(space('b'));
    const first = await cached.listAll();
    assert.deepEqual(
      first.map((s) => s.id),
      ['a', 'b'],
    );
    first[0]!.name = 'changed by a caller';
    first[0]!.preferences.memory = { enabled: false };
    first.pop();
    assert.deepEqual(await cached.listAll(), await stored.listAll());
    assert.deepEqual((await cached.listFolders()).sort(), ['/spaces/a', '/spaces/b']);
    assert.equal(stored.lists, 2, 'one read through the cache (and one by the test itself)');

    for (const write of [
      () => cached.update('a', { name: 'renamed' }),
      () => cached.reorder(['b', 'a']),
      () => cached.insert(space('c')),
      () => cached.insertIfMissing(space('d')),
      () => cached.remove('b'),
    ]) {
      await write();
      const lists: number = stored.lists;
      assert.deepEqual(await cached.listAll(), await stored.listAll(), 'read again after the write');
      assert.equal(stored.lists, lists + 2);
    }
    assert.deepEqual(
      (await cached.listAll()).map((s) => [s.id, s.name]),
      [
        ['a', 'renamed'],
        ['c', 'c'],
        ['d', 'd'],
      ],
    );
  });

  it('never keeps a list read while a write was in flight', async () => {
    const stored = new CountingSpaces();
    const cached = new CachedSpaceRepository(stored);
    await cached.insert(space('a'));
    let release!: () => void;
    stored.listGate = new Promise<void>((r) => (release = r));
    const reading = cached.listAll(); // reads [a], then waits
    await cached.insert(space('b'));
    release();
    assert.deepEqual(
      (await reading).map((s) => s.id),
      ['a'],
    );
    assert.deepEqual(
      (await cached.listAll()).map((s) => s.id),
      ['a', 'b'],
    );
  });

  it('forgets everything when a write fails, too', async () => {
    const stored = new CountingSpaces();
    stored.update = async () => {
      throw new Error('database gone');
    };
    const cached = new CachedSpaceRepository(stored);
    await cached.insert(space('a'));
    await cached.findById('a');
    const reads = stored.reads;
    await assert.rejects(cached.update('a', { name: 'x' }), /database gone/);
    await cached.findById('a');
    assert.equal(stored.reads, reads + 1);
  });
});
