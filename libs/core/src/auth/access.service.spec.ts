import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { ErrorCodes } from '#contracts/errors.js';
import { FakeClock, FakeLockoutStore } from '#testing/fakes.js';
import { DomainError } from '../errors/domain-error.js';
import { AccessPassword, AccessService } from './access.service.js';

const PASSWORD = 'Correct-Horse-42';
const SECOND = 1000;
const MINUTE = 60 * SECOND;

describe('AccessService', () => {
  let clock: FakeClock;
  let store: FakeLockoutStore;
  let access: AccessService;

  beforeEach(() => {
    clock = new FakeClock();
    store = new FakeLockoutStore();
    access = new AccessService(new AccessPassword(PASSWORD), store, clock);
  });

  /** `count` wrong attempts from `ip`, `spacingMs` apart (the clock ends at the last one). */
  async function fail(ip: string, count: number, spacingMs = 0): Promise<void> {
    for (let i = 0; i < count; i++) {
      if (i > 0) clock.advance(spacingMs);
      const outcome = await access.signIn('wrong-password', ip);
      assert.deepEqual(outcome, { ok: false, reason: 'invalid' }, `attempt ${i + 1} from ${ip}`);
    }
  }

  describe('isValidToken', () => {
    it('accepts the exact password', () => assert.equal(access.isValidToken(PASSWORD), true));

    it('refuses other tokens, whatever their length', () => {
      for (const candidate of [
        '',
        'C',
        PASSWORD.slice(0, -1),
        `${PASSWORD}x`,
        PASSWORD.toLowerCase(),
        ` ${PASSWORD}`,
        'x'.repeat(PASSWORD.length),
        'y'.repeat(10_000),
      ]) {
        assert.equal(access.isValidToken(candidate), false, JSON.stringify(candidate.slice(0, 40)));
      }
    });
  });

  describe('signIn', () => {
    it('succeeds with the correct token and refuses a wrong or non-string one', async () => {
      assert.deepEqual(await access.signIn(PASSWORD, '10.0.0.1'), { ok: true });
      assert.deepEqual(await access.signIn('nope', '10.0.0.1'), { ok: false, reason: 'invalid' });
      assert.deepEqual(await access.signIn(undefined, '10.0.0.1'), { ok: false, reason: 'invalid' });
      assert.deepEqual(await access.signIn(12345678, '10.0.0.1'), { ok: false, reason: 'invalid' });
    });

    it('5 failures from one IP within 5 minutes lock that IP for 15 minutes', async () => {
      const ip = '10.0.0.5';
      await fail(ip, 5, MINUTE); // 0, 1, 2, 3, 4 minutes
      const lockedAt = clock.now();

      assert.deepEqual(await access.signIn(PASSWORD, ip), { ok: false, reason: 'locked', retryAfterSeconds: 900 });
      assert.deepEqual(await access.signIn('wrong-password', ip), {
        ok: false,
        reason: 'locked',
        retryAfterSeconds: 900,
      });

      clock.advance(10 * MINUTE);
      assert.deepEqual(await access.signIn(PASSWORD, ip), { ok: false, reason: 'locked', retryAfterSeconds: 300 });

      clock.set(lockedAt + 15 * MINUTE - 1);
      assert.deepEqual(await access.signIn(PASSWORD, ip), { ok: false, reason: 'locked', retryAfterSeconds: 1 });

      clock.set(lockedAt + 15 * MINUTE);
      assert.deepEqual(await access.signIn(PASSWORD, ip), { ok: true });
    });

    it('the lock of one IP does not affect another IP', async () => {
      await fail('10.0.0.5', 5, 10 * SECOND);
      assert.equal((await access.signIn(PASSWORD, '10.0.0.5')).ok, false);
      assert.deepEqual(await access.signIn(PASSWORD, '10.0.0.6'), { ok: true });
    });

    it('the fifth failure itself answers invalid; only later attempts see the lock', async () => {
      await fail('10.0.0.7', 4);
      assert.deepEqual(await access.signIn('wrong-password', '10.0.0.7'), { ok: false, reason: 'invalid' });
      assert.equal(((await access.signIn(PASSWORD, '10.0.0.7')) as { reason: string }).reason, 'locked');
    });

    it('failures spread over more than 5 minutes do not lock', async () => {
      const ip = '10.0.0.8';
      // 80 s apart: any 5-minute window holds at most 4 of them. 9 stays under the global rule.
      await fail(ip, 9, 80 * SECOND);
      assert.deepEqual(await access.signIn(PASSWORD, ip), { ok: true });
    });

    it('5 failures exactly 5 minutes apart from first to last do not lock (the window is 5 minutes)', async () => {
      const ip = '10.0.0.9';
      await fail(ip, 5, 75 * SECOND); // first at 0, fifth at 300 s: the first has left the window
      assert.deepEqual(await access.signIn(PASSWORD, ip), { ok: true });
    });

    it('10 failures within an hour from 10 IPs lock sign-in for everyone for 30 minutes', async () => {
      for (let i = 0; i < 10; i++) {
        if (i > 0) clock.advance(5 * MINUTE);
        assert.deepEqual(await access.signIn('wrong-password', `192.0.2.${i + 1}`), { ok: false, reason: 'invalid' });
      }
      const lockedAt = clock.now();

      const fresh = '198.51.100.77';
      assert.deepEqual(await access.signIn(PASSWORD, fresh), { ok: false, reason: 'locked', retryAfterSeconds: 1800 });
      assert.deepEqual(await access.signIn(PASSWORD, '192.0.2.1'), {
        ok: false,
        reason: 'locked',
        retryAfterSeconds: 1800,
      });

      clock.set(lockedAt + 30 * MINUTE - 500);
      assert.deepEqual(await access.signIn(PASSWORD, fresh), { ok: false, reason: 'locked', retryAfterSeconds: 1 });

      clock.set(lockedAt + 30 * MINUTE);
      assert.deepEqual(await access.signIn(PASSWORD, fresh), { ok: true });
    });

    it('10 failures spread over more than an hour do not lock everyone', async () => {
      for (let i = 0; i < 10; i++) {
        if (i > 0) clock.advance(7 * MINUTE); // first to last: 63 minutes
        await access.signIn('wrong-password', `192.0.2.${i + 1}`);
      }
      assert.deepEqual(await access.signIn(PASSWORD, '198.51.100.77'), { ok: true });
    });

    it('when the IP lock and the global lock overlap, the later end is announced', async () => {
      await fail('192.0.2.1', 5, SECOND); // IP lock: +15 min
      for (let i = 2; i <= 6; i++) await access.signIn('wrong-password', `192.0.2.${i}`); // 10th failure: global +30 min
      assert.deepEqual(await access.signIn(PASSWORD, '192.0.2.1'), {
        ok: false,
        reason: 'locked',
        retryAfterSeconds: 1800,
      });
    });

    it("a success clears that IP's failures (and only that IP's)", async () => {
      await fail('10.0.1.1', 4, SECOND);
      await fail('10.0.1.2', 3, SECOND);
      assert.deepEqual(await access.signIn(PASSWORD, '10.0.1.1'), { ok: true });
      assert.equal(store.failures.has('ip:10.0.1.1'), false);
      assert.equal(store.failures.get('ip:10.0.1.2')?.length, 3, "another IP's failures are kept");

      // Without the reset these two would be the 5th and 6th within 5 minutes (global total: 9).
      await fail('10.0.1.1', 2, SECOND);
      assert.deepEqual(await access.signIn(PASSWORD, '10.0.1.1'), { ok: true });
    });
  });

  describe('login', () => {
    it('resolves on success, throws unauthorized on a wrong token and locked with retryAfterSeconds', async () => {
      await access.login(PASSWORD, '10.0.2.1');
      await assert.rejects(access.login('bad', '10.0.2.1'), (err: unknown) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.kind, 'unauthorized');
        assert.equal(err.message, 'Invalid token');
        return true;
      });
      await fail('10.0.2.1', 4);
      await assert.rejects(access.login(PASSWORD, '10.0.2.1'), (err: unknown) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.kind, 'locked');
        assert.equal(err.code, ErrorCodes.LOCKED);
        assert.deepEqual(err.details, { retryAfterSeconds: 900 });
        return true;
      });
    });
  });
});
