import { type NewSpace, SpaceRepository, type SpacePatch } from '#core/ports/space.repository.port.js';
import type { Space } from '#core/kernel/space.js';

/**
 * A SpaceRepository that keeps the spaces it has read in memory, for a process that is the
 * only writer of its database: embedded mode, where the data folder lock holds one server
 * process (with DATABASE_URL several replicas may write, so the server does not use it).
 * Every request that names a space (POST /api/agent/message first of all) then finds it
 * without a round trip to the database, and the list (`GET /api/spaces`, and the roots of every
 * file read or download by path) is read once until the next write.
 *
 * Every write goes through here and empties the cache, before it starts and once it is
 * done. A read remembers its answer only if no write began or ended while it was in flight
 * (a generation count), so an answer read before a write can never be kept after it. Each
 * caller gets its own copy, so a caller that changes what it got changes nothing here.
 */
export class CachedSpaceRepository extends SpaceRepository {
  /** Spaces found; a miss is not kept (any string can be asked for). */
  private readonly byId = new Map<string, Space>();
  /** Every space in order, once read. */
  private all: Space[] | null = null;
  /** Bumped at the start and the end of every write. */
  private generation = 0;

  constructor(private readonly inner: SpaceRepository) {
    super();
  }

  async listAll(): Promise<Space[]> {
    return (await this.everySpace()).map(copySpace);
  }

  async listFolders(): Promise<string[]> {
    return (await this.everySpace()).map((s) => s.path);
  }

  async findById(id: string): Promise<Space | null> {
    const kept = this.byId.get(id);
    if (kept) return copySpace(kept);
    const generation = this.generation;
    const space = await this.inner.findById(id);
    if (space && generation === this.generation) this.byId.set(id, copySpace(space));
    return space;
  }

  insert(space: NewSpace): Promise<Space> {
    return this.writing(() => this.inner.insert(space));
  }

  insertIfMissing(space: NewSpace): Promise<void> {
    return this.writing(() => this.inner.insertIfMissing(space));
  }

  update(id: string, patch: SpacePatch): Promise<Space | null> {
    return this.writing(() => this.inner.update(id, patch));
  }

  remove(id: string): Promise<boolean> {
    return this.writing(() => this.inner.remove(id));
  }

  reorder(ids: readonly string[]): Promise<void> {
    return this.writing(() => this.inner.reorder(ids));
  }

  /** The kept list (callers copy what they hand on), read when none is kept. */
  private async everySpace(): Promise<readonly Space[]> {
    if (this.all) return this.all;
    const generation = this.generation;
    const all = await this.inner.listAll();
    if (generation === this.generation) this.all = all;
    return all;
  }

  private async writing<T>(write: () => Promise<T>): Promise<T> {
    this.invalidate();
    try {
      return await write();
    } finally {
      this.invalidate();
    }
  }

  private invalidate(): void {
    this.generation++;
    this.byId.clear();
    this.all = null;
  }
}

/**
 * A caller's own copy of a kept space: its fields, dates and preferences (down to the memory
 * preferences' values, which are plain values) copied. Not `structuredClone`, whose serializer
 * was 8 % of the CPU of `GET /api/spaces` with the list kept in memory.
 */
function copySpace(space: Space): Space {
  const { memory } = space.preferences;
  return {
    ...space,
    preferences: memory === undefined ? { ...space.preferences } : { ...space.preferences, memory: { ...memory } },
    createdAt: new Date(space.createdAt.getTime()),
    updatedAt: new Date(space.updatedAt.getTime()),
  };
}
