import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LogThrottle } from './log-throttle.js';

describe('log throttle', () => {
  it('writes the first line, then one per interval with the count left out', () => {
    let now = 0;
    const lines: Array<Record<string, unknown>> = [];
    const throttle = new LogThrottle(
      (f) => lines.push(f),
      1000,
      () => now,
    );
    for (let i = 0; i < 4713; i++) {
      throttle.note({ error: 'down' });
      now += 4; // 4,713 failures in about 19 s
    }
    assert.equal(lines.length, 19);
    assert.deepEqual(lines[0], { error: 'down' });
    assert.equal(lines[1]!.repeatedSinceLastLine, 249);
  });
});
