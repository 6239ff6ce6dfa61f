import { type NewSpace, type SpacePatch, SpaceRepository } from '#core/ports/space.repository.port.js';
import type { Space } from '#core/kernel/space.js';

/** Space records in memory, in the user's order (insertion order until reordered). */
export class FakeSpaceRepository extends SpaceRepository {
  readonly spaces = new Map<string, Space>();

  async listAll(): Promise<Space[]> {
    return [...this.spaces.values()].sort((a, b) => a.sortOrder - b.sortOrder);
  }

  async listFolders(): Promise<string[]> {
    return [...this.spaces.values()].map((s) => s.path);
  }

  async findById(id: string): Promise<Space | null> {
    return this.spaces.get(id) ?? null;
  }

  async insert(space: NewSpace): Promise<Space> {
    const now = new Date();
    const record: Space = {
      ...space,
      ownsFolder: space.ownsFolder ?? false,
      sortOrder: this.spaces.size,
      createdAt: now,
      updatedAt: now,
    };
    this.spaces.set(space.id, record);
    return record;
  }

  async insertIfMissing(space: NewSpace): Promise<void> {
    if (!this.spaces.has(space.id)) await this.insert(space);
  }

  async update(id: string, patch: SpacePatch): Promise<Space | null> {
    const current = this.spaces.get(id);
    if (!current) return null;
    const next = { ...current, ...patch, updatedAt: new Date() };
    this.spaces.set(id, next);
    return next;
  }

  async remove(id: string): Promise<boolean> {
    return this.spaces.delete(id);
  }

  async reorder(ids: readonly string[]): Promise<void> {
    const listed = ids.filter((id) => this.spaces.has(id));
    const rest = (await this.listAll()).map((s) => s.id).filter((id) => !listed.includes(id));
    [...listed, ...rest].forEach((id, sortOrder) => this.spaces.set(id, { ...this.spaces.get(id)!, sortOrder }));
  }
}
