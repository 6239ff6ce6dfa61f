import type { DataSource } from 'typeorm';
import { BrowserProfiles, type BrowserStorageState } from '#core/browser/ai-browser.js';
import {
  cookieDomainsOf,
  decryptProfile,
  EMPTY_PROFILE,
  encryptProfile,
  mergeProfile,
  profileKey,
  saverView,
  type StoredProfile,
  storageStateOf,
} from './profile-state.js';

interface ProfileRow {
  state: Buffer;
}

/**
 * Browser profiles in the server's database (embedded or Postgres), encrypted with a key
 * derived from SVC_SECRETS_KEY. A save reads the stored row under a row lock, merges (newest
 * wins per cookie and per origin, see `mergeProfile`) and writes it back in one transaction,
 * so replicas saving the same profile at once each keep their cookies.
 */
export class TypeormBrowserProfiles extends BrowserProfiles {
  private readonly key: Buffer;
  /** What this process last read or wrote per profile: the base of the next save's merge. */
  private readonly lastSeen = new Map<string, StoredProfile>();

  constructor(
    private readonly ds: DataSource,
    secret: string,
    private readonly now: () => number = Date.now,
  ) {
    super();
    this.key = profileKey(secret);
  }

  async load(profile: string): Promise<BrowserStorageState | null> {
    const stored = await this.read(profile);
    if (!stored) return null;
    this.lastSeen.set(profile, stored);
    return storageStateOf(stored);
  }

  async save(profile: string, state: BrowserStorageState): Promise<void> {
    const saved = await this.ds.transaction(async (m) => {
      // The row exists before it is locked: two first saves then queue on one lock too.
      await m.query(
        `INSERT INTO "browser_profile" ("profile", "state", "updated_ms") VALUES ($1, $2, $3) ON CONFLICT ("profile") DO NOTHING`,
        [profile, encryptProfile(this.key, profile, EMPTY_PROFILE), this.now()],
      );
      const rows = (await m.query(`SELECT "state" FROM "browser_profile" WHERE "profile" = $1 FOR UPDATE`, [
        profile,
      ])) as ProfileRow[];
      const stored = decryptProfile(this.key, profile, rows[0]!.state);
      const now = this.now();
      const base = this.lastSeen.get(profile) ?? null;
      const next = mergeProfile(stored, base, state, now);
      await m.query(`UPDATE "browser_profile" SET "state" = $2, "updated_ms" = $3 WHERE "profile" = $1`, [
        profile,
        encryptProfile(this.key, profile, next),
        now,
      ]);
      return saverView(state, next, base);
    });
    this.lastSeen.set(profile, saved);
  }

  async cookieDomains(profile: string): Promise<string[]> {
    const stored = await this.read(profile);
    return stored ? cookieDomainsOf(stored) : [];
  }

  private async read(profile: string): Promise<StoredProfile | null> {
    const rows = (await this.ds.query(`SELECT "state" FROM "browser_profile" WHERE "profile" = $1`, [
      profile,
    ])) as ProfileRow[];
    return rows[0] ? decryptProfile(this.key, profile, rows[0].state) : null;
  }
}
