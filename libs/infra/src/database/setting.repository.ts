import type { DataSource } from 'typeorm';
import { SettingsRepository } from '#core/ports/settings.repository.port.js';
import { SettingEntity } from './entities/setting.entity.js';
import { returningRows } from './returning-rows.js';

export class TypeormSettingsRepository extends SettingsRepository {
  constructor(private readonly ds: DataSource) {
    super();
  }

  /** Without the query builder: every turn reads two settings (its approvals and models), and building took longer than running. */
  async get<T>(key: string): Promise<T | null> {
    const rows = (await this.ds.query(`SELECT "value" FROM "app_setting" WHERE "key" = $1`, [key])) as Array<{
      value: unknown;
    }>;
    return rows[0] ? (rows[0].value as T) : null;
  }

  async compareAndSet<T>(key: string, expected: T | null, next: T): Promise<boolean> {
    const rows: unknown =
      expected === null
        ? await this.ds.query(
            `INSERT INTO "app_setting" ("key", "value") VALUES ($1, $2) ON CONFLICT ("key") DO NOTHING RETURNING "key"`,
            [key, JSON.stringify(next)],
          )
        : await this.ds.query(
            `UPDATE "app_setting" SET "value" = $3, "updated_at" = now() WHERE "key" = $1 AND "value" = $2::jsonb RETURNING "key"`,
            [key, JSON.stringify(expected), JSON.stringify(next)],
          );
    return returningRows(rows).length > 0;
  }

  async set<T>(key: string, value: T): Promise<void> {
    await this.ds.getRepository(SettingEntity).upsert({ key, value: value as never }, ['key']);
  }
}
