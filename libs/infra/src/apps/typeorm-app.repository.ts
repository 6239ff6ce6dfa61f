import { type DataSource, In, IsNull, LessThan, Not, QueryFailedError, Raw, type Repository } from 'typeorm';
import type { ActivityEntry, App } from '#core/kernel/app.js';
import {
  ALREADY_INSTALLED,
  type ActivityPage,
  type AlreadyInstalled,
  type AppChanges,
  type AppListFilter,
  AppRepository,
  type NewApp,
} from '#core/ports/app.repository.port.js';
import { AppActivityEntity } from '../database/entities/app-activity.entity.js';
import { entityColumns } from '../database/entity-columns.js';
import { AppEntity } from '../database/entities/app.entity.js';
import { toActivityEntry, toActivityRow, toApp, toChangedColumns, toNewRow } from './app.mapper.js';

/** Postgres' unique_violation: here, the install key of another installed copy. */
const isUniqueViolation = (err: unknown): boolean =>
  err instanceof QueryFailedError && (err.driverError as { code?: string } | undefined)?.code === '23505';

/**
 * The condition an app whose spec subscribes a webhook at a path meets (containment in
 * `spec -> 'subscriptions'`): the form the GIN index of migration AppWebhookPathIndex1766400000000
 * serves, so a delivery reads the one app of its path at any number of apps.
 */
export const webhookPathCondition = (column: string, parameter: string): string =>
  `${column} -> 'subscriptions' @> ${parameter}::jsonb`;

/** The value `webhookPathCondition` compares with. */
export const webhookPathProbe = (path: string): string =>
  JSON.stringify([{ source: { type: 'webhook', config: { path } } }]);

export class TypeormAppRepository extends AppRepository {
  private readonly apps: Repository<AppEntity>;
  private readonly activity: Repository<AppActivityEntity>;

  constructor(private readonly ds: DataSource) {
    super();
    this.apps = ds.getRepository(AppEntity);
    this.activity = ds.getRepository(AppActivityEntity);
  }

  async install(app: NewApp): Promise<App | AlreadyInstalled> {
    try {
      await this.apps.insert(toNewRow(app) as never);
    } catch (err) {
      if (isUniqueViolation(err)) return ALREADY_INSTALLED;
      throw err;
    }
    return (await this.findById(app.id))!;
  }

  async findById(id: string): Promise<App | null> {
    const rows: AppEntity[] = await this.ds.query(`SELECT ${this.columns()} FROM "app" WHERE "id" = $1`, [id]);
    return rows[0] ? toApp(rows[0]) : null;
  }

  /** Every column under its property name, for the look-ups that skip the query builder. */
  private columnList: string | null = null;

  private columns(): string {
    this.columnList ??= entityColumns(this.apps);
    return this.columnList;
  }

  async list(filter: AppListFilter): Promise<App[]> {
    if (
      filter.webhookPath !== undefined &&
      filter.spaceId === undefined &&
      filter.status === undefined &&
      filter.type === undefined
    ) {
      // A webhook delivery's look-up of the app of its path: the same query, without the query builder.
      const rows: AppEntity[] = await this.ds.query(
        `SELECT ${this.columns()} FROM "app" WHERE "status" <> 'uninstalled' AND ${webhookPathCondition('"spec"', '$1')}
         ORDER BY "installed_at" ASC, "id" ASC`,
        [webhookPathProbe(filter.webhookPath)],
      );
      return rows.map(toApp);
    }
    const rows = await this.apps.find({
      where: {
        ...(filter.spaceId === undefined ? {} : { spaceId: filter.spaceId === null ? IsNull() : filter.spaceId }),
        status: filter.status ?? Not('uninstalled'),
        // In the database: a delivery reads the one app of its path, a turn the MCP servers, not every spec.
        ...(filter.webhookPath === undefined && filter.type === undefined
          ? {}
          : {
              spec: Raw(
                (column) =>
                  [
                    filter.webhookPath === undefined ? null : webhookPathCondition(column, ':hook'),
                    filter.type === undefined ? null : `${column} ->> 'type' = :type`,
                  ]
                    .filter((c) => c !== null)
                    .join(' AND '),
                {
                  ...(filter.webhookPath === undefined ? {} : { hook: webhookPathProbe(filter.webhookPath) }),
                  ...(filter.type === undefined ? {} : { type: filter.type }),
                },
              ),
            }),
      },
      order: { installedAt: 'ASC', id: 'ASC' },
    });
    return rows.map(toApp);
  }

  async update(id: string, changes: AppChanges): Promise<App | AlreadyInstalled | null> {
    const current = await this.findById(id);
    if (!current) return null;
    try {
      const result = await this.apps.update({ id }, toChangedColumns(current, changes) as never);
      if (!result.affected) return null;
    } catch (err) {
      if (isUniqueViolation(err)) return ALREADY_INSTALLED;
      throw err;
    }
    return this.findById(id);
  }

  async delete(id: string): Promise<boolean> {
    return this.ds.transaction(async (tx) => {
      await tx.getRepository(AppActivityEntity).delete({ appId: id });
      const result = await tx.getRepository(AppEntity).delete({ id });
      return (result.affected ?? 0) > 0;
    });
  }

  async deleteAllInSpace(spaceId: string): Promise<string[]> {
    return this.ds.transaction(async (tx) => {
      const ids = (await tx.getRepository(AppEntity).find({ select: { id: true }, where: { spaceId } })).map(
        (r) => r.id,
      );
      if (ids.length === 0) return [];
      await tx.getRepository(AppActivityEntity).delete({ appId: In(ids) });
      await tx.getRepository(AppEntity).delete({ id: In(ids) });
      return ids;
    });
  }

  async addActivity(entry: ActivityEntry): Promise<void> {
    await this.activity.insert(toActivityRow(entry) as never);
  }

  async listActivity(appId: string, page: ActivityPage): Promise<ActivityEntry[]> {
    const rows = await this.activity.find({
      where: { appId, ...(page.before !== undefined ? { ts: LessThan(String(page.before)) } : {}) },
      order: { ts: 'DESC', id: 'DESC' },
      take: page.limit,
    });
    return rows.map(toActivityEntry);
  }

  async findActivity(appId: string, entryId: string): Promise<ActivityEntry | null> {
    const row = await this.activity.findOneBy({ appId, id: entryId });
    return row ? toActivityEntry(row) : null;
  }

  async mergeActivityContent(
    appId: string,
    entryId: string,
    patch: Record<string, unknown>,
  ): Promise<ActivityEntry | null> {
    const result = await this.activity
      .createQueryBuilder()
      .update()
      .set({ content: () => `"content" || CAST(:patch AS jsonb)` })
      .setParameter('patch', JSON.stringify(patch))
      .where('"id" = :entryId AND "app_id" = :appId', { entryId, appId })
      .execute();
    if (!result.affected) return null;
    return this.findActivity(appId, entryId);
  }
}
