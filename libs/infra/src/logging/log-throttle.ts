/**
 * At most one line per `intervalMs` for a repeating failure (a worker polling a database
 * that is away fails many times a second): the first one at once, then one per interval
 * carrying how many were left out since.
 */
export class LogThrottle {
  private lastAt = -Infinity;
  private suppressed = 0;

  constructor(
    private readonly write: (fields: Record<string, unknown>) => void,
    private readonly intervalMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  note(fields: Record<string, unknown>): void {
    const at = this.now();
    if (at - this.lastAt < this.intervalMs) {
      this.suppressed++;
      return;
    }
    this.write(this.suppressed > 0 ? { ...fields, repeatedSinceLastLine: this.suppressed } : fields);
    this.lastAt = at;
    this.suppressed = 0;
  }
}
