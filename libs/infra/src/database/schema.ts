import { SettingEntity } from './entities/setting.entity.js';
import { Init1763700000000 } from './migrations/1763700000000-init.js';

/** Every entity and migration, in order. Add new ones here. */
export const ENTITIES = [SettingEntity];
export const MIGRATIONS = [Init1763700000000];
