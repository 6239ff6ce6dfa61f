import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BrowserStorageState } from '#core/browser/ai-browser.js';
import {
  cookieDomainsOf,
  decryptProfile,
  EMPTY_PROFILE,
  encryptProfile,
  mergeProfile,
  ProfileKeyError,
  profileKey,
  saverView,
  storageStateOf,
} from './profile-state.js';

type Cookie = BrowserStorageState['cookies'][number];

const cookie = (name: string, value: string, over: Partial<Cookie> = {}): Cookie => ({
  name,
  value,
  domain: '.example.com',
  path: '/',
  expires: -1,
  httpOnly: true,
  secure: true,
  sameSite: 'Lax',
  ...over,
});
const state = (cookies: Cookie[], origins: BrowserStorageState['origins'] = []): BrowserStorageState => ({
  cookies,
  origins,
});
const values = (s: BrowserStorageState): Record<string, string> =>
  Object.fromEntries(s.cookies.map((c) => [`${c.domain}${c.path}${c.name}`, c.value]));

describe('browser profile merge', () => {
  it('keeps both replicas’ new cookies when each saves from the same base', () => {
    const base = mergeProfile(EMPTY_PROFILE, null, state([cookie('a', '1')]), 1000);
    // Replica A signs in to one site, replica B to another, both starting from `base`.
    const afterA = mergeProfile(base, base, state([cookie('a', '1'), cookie('sid', 'A', { domain: 'a.test' })]), 2000);
    const afterB = mergeProfile(
      afterA,
      base,
      state([cookie('a', '1'), cookie('sid', 'B', { domain: 'b.test' })]),
      3000,
    );
    assert.deepEqual(values(storageStateOf(afterB)), {
      '.example.com/a': '1',
      'a.test/sid': 'A',
      'b.test/sid': 'B',
    });
  });

  it('newest wins per cookie: a stale unchanged copy does not overwrite a newer value', () => {
    const base = mergeProfile(EMPTY_PROFILE, null, state([cookie('sid', 'old')]), 1000);
    const refreshed = mergeProfile(base, base, state([cookie('sid', 'new')]), 2000);
    // The other replica still holds `old` (unchanged since it loaded): the stored `new` stays.
    const stale = mergeProfile(refreshed, base, state([cookie('sid', 'old')]), 3000);
    assert.equal(storageStateOf(stale).cookies[0]!.value, 'new');
    // A value the saver changed itself is newer and wins.
    const changed = mergeProfile(stale, base, state([cookie('sid', 'mine')]), 4000);
    assert.equal(storageStateOf(changed).cookies[0]!.value, 'mine');
  });

  it('a cookie removed by the saver goes, unless another replica changed it after the saver read it', () => {
    const base = mergeProfile(EMPTY_PROFILE, null, state([cookie('a', '1'), cookie('b', '1')]), 1000);
    const other = mergeProfile(base, base, state([cookie('a', '1'), cookie('b', '2')]), 2000);
    const signedOut = mergeProfile(other, base, state([]), 3000);
    assert.deepEqual(values(storageStateOf(signedOut)), { '.example.com/b': '2' });
  });

  it('a saver’s next save keeps what others merged in meanwhile (their cookies are not in its browser)', () => {
    const fromA = state([cookie('a', '1')]);
    const afterA = mergeProfile(EMPTY_PROFILE, null, fromA, 1000);
    const baseA = saverView(fromA, afterA, null);
    const fromB = state([cookie('b', '1')]);
    const afterB = mergeProfile(afterA, null, fromB, 2000);
    // A saves again from its own browser, which never had b.
    const again = mergeProfile(afterB, baseA, state([cookie('a', '2')]), 3000);
    assert.deepEqual(values(storageStateOf(again)), { '.example.com/a': '2', '.example.com/b': '1' });
    // A stale copy the row overrode stays "unchanged" for the saver: the newer stored value stands.
    const newer = mergeProfile(again, null, state([cookie('a', '3')]), 4000);
    const baseStale = saverView(state([cookie('a', '2')]), again, baseA);
    const stale = mergeProfile(newer, baseStale, state([cookie('a', '2')]), 5000);
    assert.equal(values(storageStateOf(stale))['.example.com/a'], '3');
  });

  it('distinguishes cookies by name, domain and path; drops expired ones; merges origins newest-wins', () => {
    const now = 10_000_000;
    const merged = mergeProfile(
      EMPTY_PROFILE,
      null,
      state(
        [
          cookie('sid', '1'),
          cookie('sid', '2', { path: '/app' }),
          cookie('sid', '3', { domain: 'other.test' }),
          cookie('gone', 'x', { expires: now / 1000 - 1 }),
        ],
        [{ origin: 'https://example.com', localStorage: [{ name: 'k', value: 'v1' }] }],
      ),
      now,
    );
    assert.equal(merged.cookies.length, 3);
    assert.deepEqual(cookieDomainsOf(merged), ['example.com', 'other.test']);
    const next = mergeProfile(
      merged,
      merged,
      state(storageStateOf(merged).cookies, [
        { origin: 'https://example.com', localStorage: [{ name: 'k', value: 'v2' }] },
      ]),
      now + 1,
    );
    assert.deepEqual(storageStateOf(next).origins, [
      { origin: 'https://example.com', localStorage: [{ name: 'k', value: 'v2' }] },
    ]);
  });
});

describe('browser profile encryption', () => {
  const profile = mergeProfile(EMPTY_PROFILE, null, state([cookie('sid', 'secret-value')]), 1000);

  it('round-trips, and the stored bytes hold no cookie value', () => {
    const key = profileKey('a-long-enough-secret');
    const blob = encryptProfile(key, 'space-1', profile);
    assert.ok(!blob.toString('latin1').includes('secret-value'));
    assert.deepEqual(decryptProfile(key, 'space-1', blob), profile);
  });

  it('answers a clear error for another key, another profile or damaged bytes', () => {
    const blob = encryptProfile(profileKey('a-long-enough-secret'), 'space-1', profile);
    assert.throws(() => decryptProfile(profileKey('another-secret-key'), 'space-1', blob), ProfileKeyError);
    assert.throws(() => decryptProfile(profileKey('a-long-enough-secret'), 'space-2', blob), /SVC_SECRETS_KEY/);
    const damaged = Buffer.from(blob);
    damaged[damaged.length - 1] ^= 1;
    assert.throws(() => decryptProfile(profileKey('a-long-enough-secret'), 'space-1', damaged), ProfileKeyError);
    assert.throws(
      () => decryptProfile(profileKey('a-long-enough-secret'), 'space-1', Buffer.alloc(3)),
      ProfileKeyError,
    );
  });
});
