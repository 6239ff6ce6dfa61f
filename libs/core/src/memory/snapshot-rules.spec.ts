import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  INITIAL_SNAPSHOT,
  isTimestampedSnapshot,
  nextSnapshotName,
  snapshotStamp,
  snapshotsToPrune,
} from './snapshot-rules.js';

const at = (minute: number): Date => new Date(Date.UTC(2025, 0, 2, 3, minute, 5, 678));

describe('snapshot rules', () => {
  it('names snapshots by UTC time without colons, sorting by time', () => {
    assert.equal(snapshotStamp(at(4)), '2025-01-02T03-04-05-678Z');
    assert.ok(isTimestampedSnapshot('2025-01-02T03-04-05-678Z'));
    assert.ok(isTimestampedSnapshot('2025-01-02T03-04-05-678Z-2'));
    assert.ok(!isTimestampedSnapshot(INITIAL_SNAPSHOT));
    assert.ok(!isTimestampedSnapshot('../2025-01-02T03-04-05-678Z'));
    assert.ok(snapshotStamp(at(4)) < snapshotStamp(at(30)));
  });

  it('calls the first snapshot "initial", later ones by a free timestamp', () => {
    assert.equal(nextSnapshotName([], at(1)), 'initial');
    assert.equal(nextSnapshotName(['unrelated'], at(1)), 'initial');
    assert.equal(nextSnapshotName(['initial'], at(1)), '2025-01-02T03-01-05-678Z');
    assert.equal(nextSnapshotName(['initial', '2025-01-02T03-01-05-678Z'], at(1)), '2025-01-02T03-01-05-678Z-2');
    assert.equal(
      nextSnapshotName(['initial', '2025-01-02T03-01-05-678Z', '2025-01-02T03-01-05-678Z-2'], at(1)),
      '2025-01-02T03-01-05-678Z-3',
    );
  });

  it('keeps "initial" and the three newest, never touching other folders', () => {
    const names = [1, 2, 3, 4, 5].map((m) => snapshotStamp(at(m)));
    assert.deepEqual(snapshotsToPrune(['initial', ...names.slice(0, 3)]), []);
    assert.deepEqual(snapshotsToPrune(['initial', ...names.slice(0, 4)]), [names[0]]);
    assert.deepEqual(snapshotsToPrune([names[4]!, 'initial', names[1]!, 'notes', names[0]!, names[3]!, names[2]!]), [
      names[0],
      names[1],
    ]);
    assert.deepEqual(snapshotsToPrune(['initial']), []);
    assert.deepEqual(snapshotsToPrune(['initial', ...names], 0), names);
  });

  it('orders same-millisecond snapshots by their counter', () => {
    const base = snapshotStamp(at(1));
    const later = snapshotStamp(at(2));
    assert.deepEqual(snapshotsToPrune(['initial', `${base}-10`, `${base}-2`, base, later], 2), [base, `${base}-2`]);
  });
});
