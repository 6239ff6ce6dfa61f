/**
 * Coalesces the items of each key into batches: a key with no call in flight sends its item at
 * once (no added latency when idle); items that come while its call is in flight wait and leave
 * together in its next call. So a burst costs one call per round trip, not one per item.
 *
 * Per key, calls go one at a time in add order, and each item's promise settles with its own
 * result, after every earlier item of the key settled: awaiting an item means it and every item
 * added before it for that key were handled. A failed call rejects each of its items (and only
 * those); the key's later items still go out.
 */
export class KeyedBatcher<I, R> {
  private readonly lanes = new Map<string, Lane<I, R>>();

  /**
   * `send` handles one batch of one key and answers one result per item, in order. A batch holds
   * at most `maxItems` items and, past its first item, at most `maxWeight` of `weigh`.
   */
  constructor(
    private readonly send: (key: string, items: I[]) => Promise<R[]>,
    private readonly maxItems: number,
    private readonly weigh: (item: I) => number = () => 0,
    private readonly maxWeight = Infinity,
  ) {}

  add(key: string, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let lane = this.lanes.get(key);
      if (!lane) {
        lane = { queue: [], busy: false };
        this.lanes.set(key, lane);
      }
      lane.queue.push({ item, resolve, reject });
      if (!lane.busy) this.next(key, lane);
    });
  }

  /** Keys with items queued or in flight (for tests). */
  get activeKeys(): number {
    return this.lanes.size;
  }

  private next(key: string, lane: Lane<I, R>): void {
    if (lane.queue.length === 0) {
      this.lanes.delete(key);
      return;
    }
    let count = 0;
    let weight = 0;
    while (count < lane.queue.length && count < this.maxItems) {
      weight += this.weigh(lane.queue[count]!.item);
      if (count > 0 && weight > this.maxWeight) break;
      count++;
    }
    const batch = lane.queue.splice(0, count);
    lane.busy = true;
    let sent: Promise<R[]>;
    try {
      sent = this.send(key, batch.map((p) => p.item));
    } catch (err) {
      sent = Promise.reject(err as Error);
    }
    sent
      .then((results) => {
        if (results.length !== batch.length) throw new Error(`batch of ${batch.length} answered ${results.length}`);
        batch.forEach((p, i) => p.resolve(results[i]!));
      })
      .catch((err: unknown) => {
        for (const p of batch) p.reject(err);
      })
      .finally(() => {
        lane.busy = false;
        this.next(key, lane);
      });
  }
}

interface Pending<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

interface Lane<I, R> {
  queue: Array<Pending<I, R>>;
  busy: boolean;
}
