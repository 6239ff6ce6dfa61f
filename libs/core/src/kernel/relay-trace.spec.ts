import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RelayTrace } from './relay-trace.js';

describe('RelayTrace', () => {
  it('keeps nothing while off', () => {
    const trace = new RelayTrace();
    trace.mark('c1', 1, 'built', 10);
    assert.deepEqual(trace.dump(), {});
  });

  it('dumps each event stage by stage, keyed by conversation and seq', () => {
    const trace = new RelayTrace();
    trace.enabled = true;
    const seq = Date.now() * 1000 + 7; // seqs start from the clock: must come back exact
    trace.mark('c1', seq, 'built', 1.5);
    trace.mark('c2', 1, 'gateway', 4);
    trace.mark('c1', seq, 'appended', 2.25);
    trace.mark('c1', seq, 'published', 2.5);
    trace.mark('c1', seq, 'gateway', 3);
    trace.mark('c1', seq, 'written', 3.75);
    const dump = trace.dump();
    assert.deepEqual(dump[`c1:${seq}`], [1.5, 2.25, 2.5, 3, 3.75]);
    assert.equal(dump['c2:1']![3], 4);
    assert.equal(Object.keys(dump).length, 2);
  });

  it('stamps appended and published together for an event kept and published in one step', () => {
    const trace = new RelayTrace();
    trace.markLogged('c', 1);
    assert.deepEqual(trace.dump(), {});
    trace.enabled = true;
    trace.markLogged('c', 2);
    const row = trace.dump()['c:2']!;
    assert.equal(typeof row[1], 'number');
    assert.equal(row[1], row[2]);
  });

  it('stamps only the conversations it selects, asking once for each', () => {
    const trace = new RelayTrace();
    trace.enabled = true;
    const asked: string[] = [];
    trace.selects = (conversationId) => {
      asked.push(conversationId);
      return conversationId === 'paced';
    };
    trace.mark('burst', 1, 'built', 1);
    trace.markLogged('burst', 1);
    trace.mark('paced', 1, 'built', 2);
    trace.mark('burst', 2, 'gateway', 3);
    trace.markLogged('paced', 1);
    assert.equal(trace.traces('burst'), false);
    assert.equal(trace.traces('paced'), true);
    assert.deepEqual(asked, ['burst', 'paced']);
    const dump = trace.dump();
    assert.deepEqual(Object.keys(dump), ['paced:1']);
    assert.equal(dump['paced:1']![0], 2);
    assert.equal(typeof dump['paced:1']![1], 'number');
  });

  it('grows past its first buffer without losing stamps', () => {
    const trace = new RelayTrace();
    trace.enabled = true;
    for (let seq = 0; seq < 70_000; seq++) trace.mark('c', seq, 'built', seq / 2);
    const dump = trace.dump();
    assert.equal(Object.keys(dump).length, 70_000);
    assert.equal(dump['c:69999']![0], 69_999 / 2);
  });
});
