/**
 * At most `size` holders at once; the next wait for a slot, first come first served. A wait
 * ends early when its signal aborts.
 */
export class FifoSlots {
  private busy = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(readonly size: number) {}

  /**
   * Resolves with the slot's release (safe to call more than once); rejects with `signal`'s
   * reason if it aborts first (without one, only a release ends the wait).
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.busy < this.size) {
      this.busy++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Holders now and those waiting for a slot. */
  get load(): { busy: number; waiting: number } {
    return { busy: this.busy, waiting: this.waiting.length };
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next.grant();
      else this.busy--;
    };
  }
}
