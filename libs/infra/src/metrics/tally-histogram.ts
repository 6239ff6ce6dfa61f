import { Histogram, type HistogramConfiguration, type LabelValues, type ObserveDataWithExemplar } from 'prom-client';

/** prom-client's state of one label set of a histogram (its `hashMap` values; not part of its typings). */
interface LabelSetValues {
  labels: LabelValues<string>;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/** One label set's observations since the last fold. */
class Tally {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  /** prom-client's values of this label set, as last found (`generation` says whether still theirs). */
  values: LabelSetValues | null = null;
  generation = -1;

  constructor(
    readonly labels: LabelValues<string>,
    buckets: number,
  ) {
    this.counts = new Float64Array(buckets);
  }
}

/**
 * A histogram for hot paths (every event published, every request): an observation is a bucket
 * search and three additions into arrays of its own, folded into prom-client's histogram when
 * the registry reads it. prom-client's own `observe` converts, validates and hashes the labels
 * and builds a closure on every call (about 2 µs; 2-5 % of the server's CPU in a relay burst,
 * bench/agent). Unlabelled, `observe(value)`; labelled, `observeKeyed(key, labels, value)`, where
 * the caller's key names the label set (`labels` is called once per key). What the registry
 * prints is the same as the plain histogram's for the same observations (tally-histogram.spec).
 */
export class TallyHistogram<T extends string = string> extends Histogram<T> {
  private readonly bounds: readonly number[];
  private readonly unlabelled: Tally;
  private readonly keyed = new Map<string, Tally>();
  /** Bumped by `reset`, which replaces prom-client's values of every label set. */
  private generation = 0;
  private readonly plainObserve: (...args: unknown[]) => void;

  constructor(configuration: HistogramConfiguration<T> & { buckets: number[] }) {
    super(configuration);
    this.bounds = [...configuration.buckets].sort((a, b) => a - b);
    this.unlabelled = new Tally({}, this.bounds.length);
    // prom-client's constructor sets `observe` on the instance (with or without exemplars).
    this.plainObserve = this.observe.bind(this) as (...args: unknown[]) => void;
    this.observe = this.observeTallied;
  }

  /** An observation of the label set `key` names; `labels` gives its labels the first time. */
  observeKeyed(key: string, labels: () => LabelValues<T>, value: number): void {
    const tally = this.keyed.get(key);
    if (!tally) {
      const set = labels();
      this.plainObserve(set, value); // validated, and counted, as prom-client does
      this.keyed.set(key, new Tally(set, this.bounds.length));
      return;
    }
    this.add(tally, value);
  }

  private observeTallied(value: number | LabelValues<T> | ObserveDataWithExemplar<T>, maybe?: number): void {
    // The plain histogram's way for anything but a bare value (`add` refuses a non-finite one).
    if (typeof value !== 'number' || maybe !== undefined) {
      this.plainObserve(value, maybe);
      return;
    }
    this.add(this.unlabelled, value);
  }

  private add(tally: Tally, value: number): void {
    if (!Number.isFinite(value)) {
      this.plainObserve(tally.labels, value);
      return;
    }
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    if (i < bounds.length) tally.counts[i]!++;
    tally.sum += value;
    tally.count++;
  }

  /** What the registry reads (and `get` calls): prom-client's, once the tallies are folded in. */
  getForPromString(): Promise<unknown> {
    this.fold(this.unlabelled);
    for (const tally of this.keyed.values()) this.fold(tally);
    return (Histogram.prototype as unknown as { getForPromString(): Promise<unknown> }).getForPromString.call(this);
  }

  override reset(): void {
    // Also called by prom-client's constructor, before this class's fields exist.
    if (this.keyed) {
      this.generation++;
      this.clear(this.unlabelled);
      for (const tally of this.keyed.values()) this.clear(tally);
    }
    super.reset();
  }

  /** Adds what was tallied since the last read to prom-client's values of the tally's label set. */
  private fold(tally: Tally): void {
    if (tally.count === 0) return;
    if (tally.generation !== this.generation || !tally.values) {
      tally.values = this.valuesOf(tally.labels);
      tally.generation = this.generation;
    }
    const values = tally.values;
    for (let i = 0; i < this.bounds.length; i++) {
      const bound = this.bounds[i]!;
      if (tally.counts[i]! > 0) values.bucketValues[bound] = (values.bucketValues[bound] ?? 0) + tally.counts[i]!;
    }
    values.sum += tally.sum;
    values.count += tally.count;
    this.clear(tally);
  }

  /** prom-client's values of a label set, made (zero) where it has none yet. */
  private valuesOf(labels: LabelValues<string>): LabelSetValues {
    const state = this as unknown as { hashMap: Record<string, LabelSetValues> };
    const find = (): LabelSetValues | undefined =>
      Object.values(state.hashMap).find((values) => sameLabels(values.labels, labels));
    let values = find();
    if (!values) {
      this.zero(labels as LabelValues<T>);
      values = find()!;
    }
    return values;
  }

  private clear(tally: Tally): void {
    tally.counts.fill(0);
    tally.sum = 0;
    tally.count = 0;
  }
}

function sameLabels(a: LabelValues<string>, b: LabelValues<string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => String(a[key]) === String(b[key]));
}
