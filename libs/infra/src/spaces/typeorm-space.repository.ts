import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { DataSource, Repository } from 'typeorm';
import { type NewSpace, SpaceRepository, type SpacePatch } from '#core/ports/space.repository.port.js';
import type { Space } from '#core/kernel/space.js';
import { SpaceEntity } from '../database/entities/space.entity.js';
import { entityColumns } from '../database/entity-columns.js';

/**
 * How a space's folder is stored: relative to the data folder when inside it (`spaces/<id>`,
 * `temp`), so a data folder can move, be restored elsewhere or be mounted at another path;
 * absolute otherwise (a `customPath` or `working-dir` outside it).
 */
export function storedSpacePath(path: string, dataDir: string): string {
  const rel = relative(resolve(dataDir), resolve(path));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return path;
  return rel.split(sep).join('/');
}

/** The absolute folder of a stored path: a relative one is under this process's data folder. */
export function spaceFolderOf(stored: string, dataDir: string): string {
  return isAbsolute(stored) ? stored : join(resolve(dataDir), ...stored.split('/'));
}

const toSpace = (e: SpaceEntity, dataDir: string): Space => ({
  id: e.id,
  name: e.name,
  path: spaceFolderOf(e.path, dataDir),
  icon: e.icon,
  color: e.color,
  isTemp: e.isTemp,
  ownsFolder: e.ownsFolder,
  sortOrder: e.sortOrder,
  preferences: (e.preferences ?? {}) as Space['preferences'],
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
});

export class TypeormSpaceRepository extends SpaceRepository {
  private readonly repo: Repository<SpaceEntity>;

  constructor(
    private readonly ds: DataSource,
    private readonly dataDir: string,
  ) {
    super();
    this.repo = ds.getRepository(SpaceEntity);
  }

  async listAll(): Promise<Space[]> {
    const rows = await this.repo.find({ order: { sortOrder: 'ASC', createdAt: 'ASC' } });
    return rows.map((r) => toSpace(r, this.dataDir));
  }

  /** One column of every row, without the query builder: each file read or download by path asks. */
  async listFolders(): Promise<string[]> {
    const rows: Array<{ path: string }> = await this.ds.query(`SELECT "path" FROM "space"`);
    return rows.map((r) => spaceFolderOf(r.path, this.dataDir));
  }

  async findById(id: string): Promise<Space | null> {
    // Read by every turn and channel message: the SQL without the query builder (entityColumns).
    this.columnList ??= entityColumns(this.repo);
    const rows: SpaceEntity[] = await this.ds.query(`SELECT ${this.columnList} FROM "space" WHERE "id" = $1`, [id]);
    return rows[0] ? toSpace(rows[0], this.dataDir) : null;
  }

  private columnList: string | null = null;

  async insert(space: NewSpace): Promise<Space> {
    // The next position is computed in the INSERT itself, so concurrent creates stay ordered.
    await this.ds.query(
      `INSERT INTO "space" ("id", "name", "icon", "color", "path", "is_temp", "sort_order", "preferences", "owns_folder")
       VALUES ($1, $2, $3, $4, $5, $6, (SELECT COALESCE(MAX("sort_order"), -1) + 1 FROM "space"), $7, $8)`,
      [
        space.id,
        space.name,
        space.icon,
        space.color,
        storedSpacePath(space.path, this.dataDir),
        space.isTemp,
        JSON.stringify(space.preferences),
        space.ownsFolder ?? false,
      ],
    );
    return (await this.findById(space.id))!;
  }

  async insertIfMissing(space: NewSpace): Promise<void> {
    await this.ds.query(
      `INSERT INTO "space" ("id", "name", "icon", "color", "path", "is_temp", "sort_order", "preferences")
       VALUES ($1, $2, $3, $4, $5, $6, -1, $7) ON CONFLICT ("id") DO NOTHING`,
      [
        space.id,
        space.name,
        space.icon,
        space.color,
        storedSpacePath(space.path, this.dataDir),
        space.isTemp,
        JSON.stringify(space.preferences),
      ],
    );
  }

  async update(id: string, patch: SpacePatch): Promise<Space | null> {
    const fields: Partial<SpaceEntity> = {};
    if (patch.name !== undefined) fields.name = patch.name;
    if (patch.icon !== undefined) fields.icon = patch.icon;
    if (patch.color !== undefined) fields.color = patch.color;
    if (patch.path !== undefined) fields.path = storedSpacePath(patch.path, this.dataDir);
    if (patch.ownsFolder !== undefined) fields.ownsFolder = patch.ownsFolder;
    if (patch.preferences !== undefined) fields.preferences = patch.preferences as Record<string, unknown>;
    if (Object.keys(fields).length > 0) {
      const result = await this.repo.update({ id }, fields as never);
      if (!result.affected) return null;
    }
    return this.findById(id);
  }

  async remove(id: string): Promise<boolean> {
    const result = await this.repo.delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /** The listed spaces first, in the given order; the others after them, keeping their relative order. */
  async reorder(ids: readonly string[]): Promise<void> {
    await this.ds.transaction(async (tx) => {
      const repo = tx.getRepository(SpaceEntity);
      const current = await repo.find({
        where: { isTemp: false },
        order: { sortOrder: 'ASC', createdAt: 'ASC' },
        lock: { mode: 'pessimistic_write' },
      });
      const listed = new Set(ids);
      const order = [...ids, ...current.map((s) => s.id).filter((id) => !listed.has(id))];
      for (const [position, id] of order.entries()) await repo.update({ id }, { sortOrder: position });
    });
  }
}
