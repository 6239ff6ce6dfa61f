/** Tells a passing outage of the record store (retry later) from a failure of the request itself. */
export abstract class StorageFaults {
  /** True when the store is away (stopped, unreachable, out of space, read-only). */
  abstract isUnavailable(err: unknown): boolean;
}
