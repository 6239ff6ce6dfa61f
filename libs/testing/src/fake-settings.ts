import { isDeepStrictEqual } from 'node:util';
import { SettingsRepository } from '#core/ports/settings.repository.port.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Settings in memory, stored as JSON (a value read back is a copy, as from a database). Every
 * call takes a turn of the event loop, so concurrent callers interleave as they would against
 * a real store; `compareAndSet` is atomic and counts the races it refused.
 */
export class FakeSettingsRepository extends SettingsRepository {
  /** Key → JSON text. */
  readonly values = new Map<string, string>();
  /** Successful writes (`set`, and `compareAndSet` that wrote). */
  writes = 0;
  /** `compareAndSet` calls refused because the stored value had changed. */
  casFailures = 0;

  async get<T>(key: string): Promise<T | null> {
    await turn();
    const raw = this.values.get(key);
    return raw === undefined ? null : (JSON.parse(raw) as T);
  }

  async set<T>(key: string, value: T): Promise<void> {
    await turn();
    this.writes++;
    this.values.set(key, JSON.stringify(value));
  }

  async compareAndSet<T>(key: string, expected: T | null, next: T): Promise<boolean> {
    await turn();
    const raw = this.values.get(key);
    const current = raw === undefined ? null : (JSON.parse(raw) as unknown);
    if (!isDeepStrictEqual(current, expected)) {
      this.casFailures++;
      return false;
    }
    this.writes++;
    this.values.set(key, JSON.stringify(next));
    return true;
  }
}
