import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeConsolidationLock, FakeMemoryFiles } from '#testing/fake-files.js';
import { FakeSpaceFolders } from '#testing/fake-space-ports.js';
import { FakeClock } from '#testing/fakes.js';
import { spacesOn } from '#testing/service-worlds.js';
import { DomainError } from '../errors/domain-error.js';
import { MemoryService } from './memory.service.js';

const setup = async () => {
  const clock = new FakeClock();
  const spaces = spacesOn(new FakeSpaceFolders());
  const files = new FakeMemoryFiles();
  const lock = new FakeConsolidationLock(() => clock.now());
  const space = await spaces.create({ name: 'Notes' });
  return { service: new MemoryService(spaces, files, lock), files, lock, clock, space };
};

describe('MemoryService', () => {
  it('reports what the memory files of the space folder say, and no consolidation', async () => {
    const { service, files, space } = await setup();
    files.statuses.set(space.path, {
      exists: true,
      totalBytes: 2048,
      topicCount: 3,
      lastConsolidatedAt: '2025-01-01T00:00:00.000Z',
      lastAttempt: { at: '2025-01-01T00:00:00.000Z', outcome: 'ok' },
    });
    assert.deepEqual(await service.state(space.id), {
      exists: true,
      totalBytes: 2048,
      topicCount: 3,
      lastConsolidatedAt: '2025-01-01T00:00:00.000Z',
      lastAttempt: { at: '2025-01-01T00:00:00.000Z', outcome: 'ok' },
      consolidating: false,
    });
  });

  it('reports a consolidation while its lease is held, not after it expired', async () => {
    const { service, lock, clock, space } = await setup();
    assert.equal(await lock.acquire(space.id, 'job-1', 60_000), true);
    const during = await service.state(space.id);
    assert.equal(during.consolidating, true);
    assert.equal(during.exists, false);
    clock.advance(60_001);
    assert.equal((await service.state(space.id)).consolidating, false);
  });

  it('refuses an unknown space', async () => {
    const { service } = await setup();
    await assert.rejects(service.state('nope'), (err: unknown) => {
      assert.ok(err instanceof DomainError);
      assert.equal(err.kind, 'not_found');
      assert.equal(err.message, 'Space not found');
      return true;
    });
  });
});
