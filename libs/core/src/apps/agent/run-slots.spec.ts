import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunSlots } from './run-slots.js';

describe('RunSlots', () => {
  it('lets `size` runs work and the next wait, first come first served', async () => {
    const slots = new RunSlots(2);
    const signal = new AbortController().signal;
    const first = await slots.acquire(signal);
    await slots.acquire(signal);
    const order: string[] = [];
    const third = slots.acquire(signal).then((release) => (order.push('third'), release));
    const fourth = slots.acquire(signal).then((release) => (order.push('fourth'), release));
    await Promise.resolve();
    assert.deepEqual(slots.load, { busy: 2, waiting: 2 });
    assert.deepEqual(order, []);
    first();
    first(); // a second release of the same slot changes nothing
    const releaseThird = await third;
    assert.deepEqual(order, ['third']);
    assert.deepEqual(slots.load, { busy: 2, waiting: 1 });
    releaseThird();
    await fourth;
    assert.deepEqual(order, ['third', 'fourth']);
    assert.deepEqual(slots.load, { busy: 2, waiting: 0 });
  });

  it('a stopped run stops waiting and takes no slot', async () => {
    const slots = new RunSlots(1);
    const release = await slots.acquire(new AbortController().signal);
    const stop = new AbortController();
    const waiting = slots.acquire(stop.signal);
    stop.abort(new Error('stopped'));
    await assert.rejects(waiting, /stopped/);
    assert.deepEqual(slots.load, { busy: 1, waiting: 0 });
    release();
    assert.deepEqual(slots.load, { busy: 0, waiting: 0 });
    await assert.rejects(slots.acquire(stop.signal), /stopped/, 'an already stopped run does not wait');
  });
});
