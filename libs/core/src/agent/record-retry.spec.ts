import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StorageFaults } from '../ports/storage-faults.port.js';
import { RecordRetry, retryDelay, RECORD_RETRY_PLAN } from './record-retry.js';

class Outage extends Error {}
const faults = new (class extends StorageFaults {
  isUnavailable(err: unknown): boolean {
    return err instanceof Outage;
  }
})();

function retrying(): RecordRetry {
  const retry = new RecordRetry(faults);
  retry.plan = { firstDelayMs: 1, maxDelayMs: 4, giveUpAfterMs: 200, logEveryMs: 50 };
  return retry;
}

describe('record retry', () => {
  it('backs off doubling up to the cap', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 10, 100].map((a) => retryDelay(RECORD_RETRY_PLAN, a)),
      [200, 400, 800, 1000, 1000, 1000],
    );
  });

  it('retries through an outage until the store answers, once each', async () => {
    let calls = 0;
    const result = await retrying().store('reply', async () => {
      calls++;
      if (calls < 5) throw new Outage('connection refused');
      return 'stored';
    });
    assert.equal(result, 'stored');
    assert.equal(calls, 5);
  });

  it('throws other failures at once, and gives up after the plan says', async () => {
    let calls = 0;
    await assert.rejects(
      retrying().store('reply', async () => {
        calls++;
        throw new Error('syntax error');
      }),
      /syntax error/,
    );
    assert.equal(calls, 1);
    const started = Date.now();
    await assert.rejects(
      retrying().store('reply', async () => {
        throw new Outage('down');
      }),
      /down/,
    );
    assert.ok(Date.now() - started >= 200);
  });
});
