/** Small server-wide records kept in the database, by key. */
export abstract class SettingsRepository {
  abstract get<T>(key: string): Promise<T | null>;
  abstract set<T>(key: string, value: T): Promise<void>;
  /**
   * Stores `next` only if the stored value still equals `expected` (null: only if the key
   * is absent), atomically; true when written. Concurrent writers on several replicas use
   * it to never lose an update.
   */
  abstract compareAndSet<T>(key: string, expected: T | null, next: T): Promise<boolean>;
}
