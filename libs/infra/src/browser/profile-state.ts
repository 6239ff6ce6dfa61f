import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { BrowserStorageState } from '#core/browser/ai-browser.js';

type Cookie = BrowserStorageState['cookies'][number];
type Origin = BrowserStorageState['origins'][number];

/**
 * A profile as stored: the storage state with, per cookie and per origin, when its current
 * content was first saved (epoch ms). The stamps decide which side wins a merge.
 */
export interface StoredProfile {
  cookies: Array<{ cookie: Cookie; at: number }>;
  origins: Array<{ origin: Origin; at: number }>;
}

export const EMPTY_PROFILE: StoredProfile = { cookies: [], origins: [] };

export function cookieKey(c: Pick<Cookie, 'name' | 'domain' | 'path'>): string {
  return `${c.name}\u0000${c.domain}\u0000${c.path}`;
}

const sameCookie = (a: Cookie, b: Cookie): boolean =>
  a.value === b.value &&
  a.expires === b.expires &&
  a.httpOnly === b.httpOnly &&
  a.secure === b.secure &&
  a.sameSite === b.sameSite;

const sameOrigin = (a: Origin, b: Origin): boolean => JSON.stringify(a.localStorage) === JSON.stringify(b.localStorage);

/** Session cookies (-1) never expire here; others are dropped once past their time. */
const expired = (c: Cookie, nowMs: number): boolean => c.expires > 0 && c.expires * 1000 <= nowMs;

/**
 * Three-way merge, newest wins per cookie (name, domain, path) and per origin. `base` is what
 * the saving process last read or wrote for this profile (null: it never did): an entry the
 * saver left as it was in `base` is not news, so the stored one (perhaps newer, from another
 * replica) stays; a changed or new entry is stamped `nowMs` and wins; an entry the saver
 * removed since `base` is removed unless the stored one changed after `base`.
 */
export function mergeProfile(
  stored: StoredProfile,
  base: StoredProfile | null,
  incoming: BrowserStorageState,
  nowMs: number,
): StoredProfile {
  const cookies = mergeEntries(
    stored.cookies.map((e) => ({ key: cookieKey(e.cookie), value: e.cookie, at: e.at })),
    base?.cookies.map((e) => ({ key: cookieKey(e.cookie), value: e.cookie, at: e.at })) ?? null,
    incoming.cookies.map((c) => ({ key: cookieKey(c), value: c })),
    sameCookie,
    nowMs,
  ).filter((e) => !expired(e.value, nowMs));
  const origins = mergeEntries(
    stored.origins.map((e) => ({ key: e.origin.origin, value: e.origin, at: e.at })),
    base?.origins.map((e) => ({ key: e.origin.origin, value: e.origin, at: e.at })) ?? null,
    incoming.origins.map((o) => ({ key: o.origin, value: o })),
    sameOrigin,
    nowMs,
  );
  return {
    cookies: cookies.map((e) => ({ cookie: e.value, at: e.at })),
    origins: origins.map((e) => ({ origin: e.value, at: e.at })),
  };
}

function mergeEntries<T>(
  stored: Array<{ key: string; value: T; at: number }>,
  base: Array<{ key: string; value: T; at: number }> | null,
  incoming: Array<{ key: string; value: T }>,
  same: (a: T, b: T) => boolean,
  nowMs: number,
): Array<{ key: string; value: T; at: number }> {
  const out = new Map(stored.map((e) => [e.key, e]));
  const before = new Map((base ?? []).map((e) => [e.key, e]));
  const seen = new Set<string>();
  for (const entry of incoming) {
    seen.add(entry.key);
    const known = before.get(entry.key);
    if (known && same(known.value, entry.value)) continue; // unchanged by the saver: the stored side stands
    out.set(entry.key, { key: entry.key, value: entry.value, at: nowMs });
  }
  for (const [key, known] of before) {
    if (seen.has(key)) continue;
    const current = out.get(key);
    // Removed by the saver (a sign-out): gone, unless someone changed it after the saver read it.
    if (current && current.at <= known.at) out.delete(key);
  }
  return [...out.values()];
}

/**
 * What the saver holds after a save, as the base of its next merge: its own entries only (the
 * others' entries merged into the row are not in its browser, so their absence next time is no
 * removal), each stamped as stored when the row kept the saver's value, else with the stamp the
 * saver's copy had before (an older value the row overrode stays "unchanged since then").
 */
export function saverView(
  incoming: BrowserStorageState,
  merged: StoredProfile,
  base: StoredProfile | null,
): StoredProfile {
  const mergedCookies = new Map(merged.cookies.map((e) => [cookieKey(e.cookie), e]));
  const baseCookies = new Map((base?.cookies ?? []).map((e) => [cookieKey(e.cookie), e]));
  const mergedOrigins = new Map(merged.origins.map((e) => [e.origin.origin, e]));
  const baseOrigins = new Map((base?.origins ?? []).map((e) => [e.origin.origin, e]));
  return {
    cookies: incoming.cookies.map((cookie) => {
      const key = cookieKey(cookie);
      const kept = mergedCookies.get(key);
      const at = kept && sameCookie(kept.cookie, cookie) ? kept.at : (baseCookies.get(key)?.at ?? 0);
      return { cookie, at };
    }),
    origins: incoming.origins.map((origin) => {
      const kept = mergedOrigins.get(origin.origin);
      const at = kept && sameOrigin(kept.origin, origin) ? kept.at : (baseOrigins.get(origin.origin)?.at ?? 0);
      return { origin, at };
    }),
  };
}

export function storageStateOf(profile: StoredProfile): BrowserStorageState {
  return { cookies: profile.cookies.map((e) => e.cookie), origins: profile.origins.map((e) => e.origin) };
}

/** Domains with at least one cookie, without the leading dot, sorted. */
export function cookieDomainsOf(profile: StoredProfile): string[] {
  return [...new Set(profile.cookies.map((e) => e.cookie.domain.replace(/^\./, '').toLowerCase()))].sort();
}

/** Raised when a stored profile cannot be decrypted with this key (another SVC_SECRETS_KEY, or damaged). */
export class ProfileKeyError extends Error {
  constructor(profile: string) {
    super(
      `Browser profile "${profile}" cannot be decrypted: it was saved with another SVC_SECRETS_KEY ` +
        '(or the stored data is damaged). Restore the key it was saved with, or sign in again after removing it.',
    );
    this.name = 'ProfileKeyError';
  }
}

const FORMAT = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A 32-byte AES key from the configured secret (any length of text: hashed). */
export function profileKey(secret: string): Buffer {
  return createHash('sha256').update(`svc-browser-profile:${secret}`).digest();
}

/**
 * AES-256-GCM: `format(1) | iv(12) | tag(16) | ciphertext`. The profile's name is the
 * additional data, so a row copied under another profile does not decrypt.
 */
export function encryptProfile(key: Buffer, profile: string, value: StoredProfile): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(profile, 'utf8'));
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([FORMAT]), iv, cipher.getAuthTag(), body]);
}

export function decryptProfile(key: Buffer, profile: string, blob: Buffer): StoredProfile {
  if (blob.length < 1 + IV_BYTES + TAG_BYTES || blob[0] !== FORMAT) throw new ProfileKeyError(profile);
  const iv = blob.subarray(1, 1 + IV_BYTES);
  const tag = blob.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(profile, 'utf8'));
    decipher.setAuthTag(tag);
    const text = Buffer.concat([decipher.update(blob.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
    return JSON.parse(text.toString('utf8')) as StoredProfile;
  } catch {
    throw new ProfileKeyError(profile);
  }
}
