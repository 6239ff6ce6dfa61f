import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  consolidationJobId,
  escalationExpiryJobId,
  occurrenceJobId,
  turnJobId,
  webhookDeliveryJobId,
} from './job-ids.js';

const MIN = 60_000;
const bodyClaim = { key: 'hook:a1:abc:body:0123', windowMs: 10 * MIN };
const idClaim = { key: 'hook:a1:abc:id:4567', windowMs: 7 * 24 * 60 * MIN };

describe('job ids', () => {
  it('name a turn, an occurrence and an escalation expiry by what they are, without `:`', () => {
    assert.equal(turnJobId('t-1'), 'turn-t-1');
    assert.equal(escalationExpiryJobId('e-1'), 'escalation-expire-e-1');
    const occurrence = occurrenceJobId('a1', 'tick:1', 1000);
    assert.match(occurrence, /^sched-a1-[0-9a-f]{12}-1000$/);
    for (const id of [turnJobId('t'), escalationExpiryJobId('e'), occurrence, consolidationJobId('s')]) {
      assert.ok(!id.includes(':'), id);
    }
  });

  it('give each consolidation run its own id, naming the space', () => {
    const a = consolidationJobId('s1');
    assert.ok(a.startsWith('memory-consolidate-s1-'));
    assert.notEqual(a, consolidationJobId('s1'));
  });

  it('give a webhook delivery an id from its claims, the same within a claim window', () => {
    const t = 1_700_000_000_000;
    const id = webhookDeliveryJobId([idClaim, bodyClaim], t);
    assert.match(id, /^hook-[0-9a-f]{24}$/);
    // Not the time of the call: a retry of the same accepted delivery shares the id.
    assert.equal(webhookDeliveryJobId([idClaim, bodyClaim], t + 1), id);
    assert.notEqual(webhookDeliveryJobId([bodyClaim], t), webhookDeliveryJobId([{ ...bodyClaim, key: 'other' }], t));
  });

  it('give a later delivery of the same body a new id once the claim could be taken again', () => {
    // A claim is taken again only after its window has passed since it was last taken: every
    // such moment falls in a later bucket, so the queue (which keeps completed jobs by id)
    // never drops it as a repeat.
    for (const t of [0, 1, 10 * MIN - 1, 10 * MIN, 123_456_789]) {
      const first = webhookDeliveryJobId([bodyClaim], t);
      for (const later of [t + 10 * MIN + 1, t + 11 * MIN, t + 24 * 60 * MIN]) {
        assert.notEqual(webhookDeliveryJobId([bodyClaim], later), first, `${t} then ${later}`);
      }
    }
  });
});
