import type { DataSource } from 'typeorm';
import { SettingsRepository } from '#core/ports/settings.repository.port.js';
import { SettingEntity } from './entities/setting.entity.js';

export class TypeormSettingsRepository extends SettingsRepository {
  constructor(private readonly ds: DataSource) {
    super();
  }

  async get<T>(key: string): Promise<T | null> {
    const row = await this.ds.getRepository(SettingEntity).findOneBy({ key });
    return row ? (row.value as T) : null;
  }

  async set<T>(key: string, value: T): Promise<void> {
    await this.ds.getRepository(SettingEntity).upsert({ key, value: value as never }, ['key']);
  }
}
