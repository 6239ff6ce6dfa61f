import { type DataSource, In, QueryFailedError, type Repository } from 'typeorm';
import type { ActivityEntry, App } from '#core/kernel/app.js';
import {
  ALREADY_INSTALLED,
  type ActivityOutcome,
  type ActivityPage,
  type AlreadyInstalled,
  type AppChanges,
  type AppListFilter,
  AppRepository,
  type NewApp,
} from '#core/ports/app.repository.port.js';
import { AppActivityEntity } from '../database/entities/app-activity.entity.js';
import { entityColumns } from '../database/entity-columns.js';
import { returningRows } from '../database/returning-rows.js';
import { AppEntity } from '../database/entities/app.entity.js';
import { changesInstallKey, toActivityEntry, toActivityRow, toApp, toChangedColumns, toNewRow } from './app.mapper.js';

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
  private activityColumnList: string | null = null;
  /** Entity property → column name, for the automation update's SET list. */
  private columnNames: Map<string, string> | undefined;

  private columns(): string {
    this.columnList ??= entityColumns(this.apps);
    return this.columnList;
  }

  /** An entity property's column name (the map is built once: every automation update names a few). */
  private columnName(property: string): string {
    this.columnNames ??= new Map(this.apps.metadata.columns.map((c) => [c.propertyName, c.databaseName]));
    const name = this.columnNames.get(property);
    if (name === undefined) throw new Error(`the app entity has no column for ${property}`);
    return name;
  }

  /** One query without the query builder: a turn reads the MCP servers, a delivery its app, a run start both. */
  async list(filter: AppListFilter): Promise<App[]> {
    const params: unknown[] = [];
    const param = (value: unknown): string => `$${params.push(value)}`;
    const where: string[] = [];
    if (filter.spaceId !== undefined) {
      where.push(filter.spaceId === null ? '"space_id" IS NULL' : `"space_id" = ${param(filter.spaceId)}`);
    }
    where.push(filter.status === undefined ? `"status" <> 'uninstalled'` : `"status" = ${param(filter.status)}`);
    if (filter.webhookPath !== undefined) {
      where.push(webhookPathCondition('"spec"', param(webhookPathProbe(filter.webhookPath))));
    }
    if (filter.type !== undefined) where.push(`"spec" ->> 'type' = ${param(filter.type)}`);
    const rows: AppEntity[] = await this.ds.query(
      `SELECT ${this.columns()} FROM "app" WHERE ${where.join(' AND ')} ORDER BY "installed_at" ASC, "id" ASC`,
      params,
    );
    return rows.map(toApp);
  }

  /**
   * One statement that answers the updated app (`RETURNING`), read first only when the install
   * key moves: a run's start and end and a schedule's next time change automation fields alone,
   * and were three statements each (read, update, read again) on the path of every tick.
   */
  async update(id: string, changes: AppChanges): Promise<App | AlreadyInstalled | null> {
    let current: App | null = null;
    if (changesInstallKey(changes)) {
      current = await this.findById(id);
      if (!current) return null;
    }
    const columns = toChangedColumns(current, changes);
    if (Object.keys(columns).length === 0) return current ?? this.findById(id);
    // Automation fields alone (numbers, text or null) skip the query builder: a run's start and
    // end and every tick write them, and building the statement cost more than running it.
    if (current === null && Object.keys(changes).every((key) => key === 'automation')) {
      const values = Object.entries(columns);
      const sets = values.map(([property], i) => `"${this.columnName(property)}" = $${i + 2}`);
      // As the query builder does for the entity's @UpdateDateColumn.
      const result: unknown = await this.ds.query(
        `UPDATE "app" SET ${sets.join(', ')}, "updated_at" = CURRENT_TIMESTAMP WHERE "id" = $1 RETURNING ${this.columns()}`,
        [id, ...values.map(([, value]) => value as unknown)],
      );
      const [row] = returningRows<AppEntity>(result);
      return row ? toApp(row) : null;
    }
    try {
      const result = await this.apps
        .createQueryBuilder()
        .update()
        .set(columns as never)
        .where({ id })
        .returning(this.columns())
        .execute();
      const rows = result.raw as AppEntity[];
      return rows[0] ? toApp(rows[0]) : null;
    } catch (err) {
      if (isUniqueViolation(err)) return ALREADY_INSTALLED;
      throw err;
    }
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

  async addActivityIfAppExists(entry: ActivityEntry): Promise<boolean> {
    const row = toActivityRow(entry);
    const result: unknown = await this.ds.query(
      `INSERT INTO "app_activity" ("id", "app_id", "run_id", "type", "ts", "content")
       SELECT $1, $2::uuid, $3, $4, $5::bigint, $6::jsonb WHERE EXISTS (SELECT 1 FROM "app" WHERE "id" = $2::uuid)
       RETURNING "id"`,
      [row.id, row.appId, row.runId, row.type, row.ts, JSON.stringify(row.content)],
    );
    return returningRows(result).length > 0;
  }

  /** Without the query builder too: every run start reads the last 50 (its failure count). */
  async listActivity(appId: string, page: ActivityPage): Promise<ActivityEntry[]> {
    this.activityColumnList ??= entityColumns(this.activity);
    const before = page.before === undefined ? '' : 'AND "ts" < $3::bigint';
    const rows: AppActivityEntity[] = await this.ds.query(
      `SELECT ${this.activityColumnList} FROM "app_activity" WHERE "app_id" = $1 ${before}
       ORDER BY "ts" DESC, "id" DESC LIMIT $2`,
      page.before === undefined ? [appId, page.limit] : [appId, page.limit, String(page.before)],
    );
    return rows.map(toActivityEntry);
  }

  async recentOutcomes(appId: string, limit: number): Promise<ActivityOutcome[]> {
    const rows: Array<{ type: ActivityEntry['type']; outage: boolean }> = await this.ds.query(
      `SELECT "type", COALESCE("content" -> 'outage' = 'true'::jsonb, false) AS "outage" FROM "app_activity"
       WHERE "app_id" = $1 ORDER BY "ts" DESC, "id" DESC LIMIT $2`,
      [appId, limit],
    );
    return rows.map((r) => ({ type: r.type, content: r.outage ? { outage: true } : {} }));
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
