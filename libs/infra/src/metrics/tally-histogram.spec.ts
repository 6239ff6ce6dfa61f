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
    const labelled = new TallyHistogram({ name: 'x', help: 'x', buckets: BUCKETS, labelNames: ['a'] });
    assert.throws(() => labelled.observeKeyed('b', () => ({ b: '1' }) as never, 1), /label/i);
    labelled.observeKeyed('a1', () => ({ a: '1' }), 0.5);
    assert.throws(() => labelled.observeKeyed('a1', () => ({ a: '1' }), Number.NaN), /not a valid number/);
  });

  it('prints label sets observed by key as the plain histogram prints them, across reads and a reset', async () => {
    const observations: Array<[string, string, number]> = [
      ['GET', '/a', 0.002],
      ['GET', '/a', 0.5],
      ['POST', '/b', 0.02],
      ['GET', '/a', 7],
      ['POST', '/b', 0.0001],
      ['GET', '/c', 0.05],
    ];
    const labelled = { name: 'svc_test_seconds', help: 'A test', buckets: BUCKETS, labelNames: ['method', 'route'] };
    const plainRegistry = new Registry();
    const plainHistogram = new Histogram({ ...labelled, registers: [plainRegistry] });
    const tallyRegistry = new Registry();
    const tallyHistogram = new TallyHistogram({ ...labelled, registers: [tallyRegistry] });
    const both = async (): Promise<void> => assert.equal(await tallyRegistry.metrics(), await plainRegistry.metrics());
    for (const [i, [method, route, value]] of observations.entries()) {
      plainHistogram.observe({ method, route }, value);
      tallyHistogram.observeKeyed(`${method} ${route}`, () => ({ method, route }), value);
      if (i % 2 === 1) await both();
    }
    await both();
    plainHistogram.reset();
    tallyHistogram.reset();
    await both();
    for (const [method, route, value] of observations.slice(0, 3)) {
      plainHistogram.observe({ method, route }, value);
      tallyHistogram.observeKeyed(`${method} ${route}`, () => ({ method, route }), value);
    }
    await both();
    assert.match(await tallyRegistry.metrics(), /svc_test_seconds_count\{method="GET",route="\/a"\} 2\n/);
  });
});
