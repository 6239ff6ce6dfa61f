import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { TallyHistogram } from './tally-histogram.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];

async function printed(make: (registry: Registry) => Histogram, values: number[], reads = 1): Promise<string> {
  const registry = new Registry();
  const histogram = make(registry);
  const step = Math.ceil(values.length / reads);
  let text = '';
  for (let from = 0; from < values.length || from === 0; from += step) {
    for (const value of values.slice(from, from + step)) histogram.observe(value);
    text = await registry.metrics();
    if (values.length === 0) break;
  }
  return text;
}

const plain = (registry: Registry): Histogram =>
  new Histogram({ name: 'svc_test_seconds', help: 'A test', buckets: BUCKETS, registers: [registry] });
const tally = (registry: Registry): Histogram =>
  new TallyHistogram({ name: 'svc_test_seconds', help: 'A test', buckets: BUCKETS, registers: [registry] });

describe('TallyHistogram', () => {
  const values = [0.0005, 0.001, 0.002, 0.05, 0.1, 0.5, 3, 0, 0.0099];

  it("prints what prom-client's histogram prints for the same observations", async () => {
    assert.equal(await printed(tally, values), await printed(plain, values));
    assert.match(await printed(tally, values), /svc_test_seconds_count 9/);
  });

  it('keeps counting across reads, and from zero after a reset', async () => {
    assert.equal(await printed(tally, values, 3), await printed(plain, values, 3));
    const registry = new Registry();
    const histogram = tally(registry);
    histogram.observe(0.5);
    await registry.metrics();
    histogram.reset();
    histogram.observe(0.002);
    const text = await registry.metrics();
    assert.match(text, /svc_test_seconds_count 1\n/);
    assert.match(text, /svc_test_seconds_bucket\{le="0.01"\} 1\n/);
    assert.equal(text, await printed(plain, [0.002]));
  });

  it('prints an empty histogram as the plain one does', async () => {
    assert.equal(await printed(tally, []), await printed(plain, []));
  });

  it("refuses what prom-client's histogram refuses", () => {
    const histogram = tally(new Registry());
    assert.throws(() => histogram.observe(Number.NaN), /not a valid number/);
    assert.throws(() => new TallyHistogram({ name: 'x', help: 'x', buckets: BUCKETS, labelNames: ['a'] }), /no labels/);
  });
});
