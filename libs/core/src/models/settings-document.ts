import { ErrorCodes } from '#contracts/errors.js';
import { DomainError } from '../errors/domain-error.js';
import { SettingsRepository } from '../ports/settings.repository.port.js';

/** What a mutation decided: the new value to store, or null to leave the stored one. */
export interface Mutation<T, R> {
  next: T | null;
  result: R;
}

/** Attempts before a write that keeps losing races gives up (503). */
const MAX_ATTEMPTS = 8;

/**
 * Read-modify-write of one settings value that carries a `revision` number.
 *
 * - In this process, updates are serialized (a promise chain shared by the documents of
 *   one service), so concurrent requests never lose each other's writes.
 * - Across replicas, each write is a `compareAndSet` against the value it read: the check
 *   and the write are one atomic statement, and a lost race re-runs the mutation on the
 *   fresh value.
 */
export class SettingsDocument<T extends { revision: number }> {
  constructor(
    private readonly settings: SettingsRepository,
    private readonly key: string,
    private readonly parse: (raw: unknown) => T,
    private readonly serial: Serial,
  ) {}

  async read(): Promise<T> {
    return this.parse(await this.settings.get<unknown>(this.key));
  }

  /**
   * Runs `mutate` on the stored value and stores its `next` with the revision bumped.
   * `mutate` may run more than once (after a lost race) and must be pure; it may throw
   * (a DomainError), which aborts the update with nothing written.
   */
  update<R>(mutate: (current: T) => Mutation<T, R>): Promise<R> {
    return this.serial.run(() => this.attempt(mutate));
  }

  private async attempt<R>(mutate: (current: T) => Mutation<T, R>): Promise<R> {
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const raw = await this.settings.get<unknown>(this.key);
      const current = this.parse(raw);
      const { next, result } = mutate(current);
      if (next === null) return result;
      const value = { ...next, revision: current.revision + 1 };
      if (await this.settings.compareAndSet(this.key, raw, value)) return result;
    }
    throw new DomainError(
      'unavailable',
      'The configuration is being changed concurrently; try again.',
      ErrorCodes.CONCURRENT_CHANGE,
    );
  }
}

/** Runs tasks one at a time, in order; a failing task does not stop the ones after it. */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<R>(task: () => Promise<R>): Promise<R> {
    const result = this.tail.then(() => task());
    this.tail = result.catch(() => undefined);
    return result;
  }
}
