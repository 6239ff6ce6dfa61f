/** Small server-wide records kept in the database, by key. */
export abstract class SettingsRepository {
  abstract get<T>(key: string): Promise<T | null>;
  abstract set<T>(key: string, value: T): Promise<void>;
}
