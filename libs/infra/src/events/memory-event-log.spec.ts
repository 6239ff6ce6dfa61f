import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryEventLog } from './memory-event-log.js';
import { replayFrom } from './replay.js';

describe('event log replay', () => {
  it('stamps increasing seqs into the data and replays what came after afterSeq', async () => {
    const log = new MemoryEventLog(10);
    const a = await log.append('c', 'agent:message', { delta: 'a' });
    const b = await log.append('c', 'agent:message', { delta: 'b' });
    const c = await log.append('c', 'agent:complete', { duration: 1 });
    assert.ok(a.seq < b.seq && b.seq < c.seq);
    assert.equal(b.data.seq, b.seq);
    assert.deepEqual(await log.since('c', a.seq), { complete: true, events: [b, c] });
    assert.deepEqual(await log.since('c', c.seq), { complete: true, events: [] });
  });

  it('answers a gap from the oldest kept seq once the log was trimmed past afterSeq', async () => {
    const log = new MemoryEventLog(3);
    const events = [];
    for (let i = 0; i < 6; i++) events.push(await log.append('c', 'agent:message', { i }));
    const result = await log.since('c', events[0]!.seq);
    assert.equal(result.complete, false);
    assert.equal(!result.complete && result.fromSeq, events[3]!.seq);
    assert.deepEqual(result.events, events.slice(3));
    // Exactly at the edge: the client saw the event just before the oldest kept one.
    assert.deepEqual(await log.since('c', events[2]!.seq), { complete: true, events: events.slice(3) });
  });

  it('answers a gap for a seq the log never assigned (restart) and for an unknown conversation', async () => {
    const log = new MemoryEventLog(3);
    const e = await log.append('c', 'x', {});
    assert.deepEqual(await log.since('c', e.seq + 50), { complete: false, fromSeq: e.seq + 1, events: [] });
    assert.deepEqual(await log.since('nobody', 7), { complete: false, fromSeq: 1, events: [] });
    assert.deepEqual(await log.since('nobody', 0), { complete: true, events: [] });
  });

  it('replayFrom: the rules every log shares', () => {
    const ev = (seq: number) => ({ seq, channel: 'x', data: { seq } });
    assert.deepEqual(replayFrom([ev(5), ev(6)], 4, 5, 6), { complete: true, events: [ev(5), ev(6)] });
    assert.deepEqual(replayFrom([ev(5), ev(6)], 2, 5, 6), { complete: false, fromSeq: 5, events: [ev(5), ev(6)] });
    assert.deepEqual(replayFrom([], 9, 7, 6), { complete: false, fromSeq: 7, events: [] });
  });
});

describe('event log retention', () => {
  it('drops the least recently written conversation first', async () => {
    const log = new MemoryEventLog(10, 2);
    await log.append('old-but-active', 'x', {});
    await log.append('idle', 'x', {});
    await log.append('old-but-active', 'x', {});
    await log.append('new', 'x', {});
    assert.equal((await log.since('old-but-active', 0)).events.length, 2);
    assert.deepEqual(await log.since('idle', 0), { complete: true, events: [] });
  });

  it('keeps exactly the newest `capacity` events however many were written', async () => {
    const log = new MemoryEventLog(8);
    const seqs: number[] = [];
    for (let i = 0; i < 100; i++) {
      seqs.push((await log.append('c', 'x', { i })).seq);
      const kept = (await log.since('c', 0)).events.map((e) => e.seq);
      assert.deepEqual(kept, seqs.slice(-8));
    }
  });
});
