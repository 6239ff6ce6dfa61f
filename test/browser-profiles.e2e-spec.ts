import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DataSource } from 'typeorm';
import type { BrowserStorageState } from '#core/browser/ai-browser.js';
import { ProfileKeyError } from '#infra/browser/profile-state.js';
import { TypeormBrowserProfiles } from '#infra/browser/typeorm-browser-profiles.js';
import { resolveSecretsKey } from '#infra/config/load-config.js';
import { createDataSource, migrateUnderLock, pendingSchemaChanges } from '#infra/database/database.js';
import { type FreshDatabase, freshDatabase } from '#testing/fresh-database.js';
import { testMode } from '#testing/test-env.js';
import type { AppConfig } from '#core/config/app-config.js';

type Cookie = BrowserStorageState['cookies'][number];
const cookie = (name: string, value: string, domain: string): Cookie => ({
  name,
  value,
  domain,
  path: '/',
  expires: -1,
  httpOnly: true,
  secure: false,
  sameSite: 'Lax',
});

describe(`browser profiles at rest (${testMode()})`, () => {
  let db: FreshDatabase | undefined;
  let ds: DataSource | undefined;

  before(async () => {
    db = await freshDatabase();
    ds = createDataSource(db.url, 4);
    await ds.initialize();
    await migrateUnderLock(ds);
  });

  after(async () => {
    await ds?.destroy();
    await db?.dispose();
  });

  it('the migration matches the entity', async () => {
    assert.deepEqual(await pendingSchemaChanges(ds!), []);
  });

  it('saves encrypted, loads back, and keeps profiles apart', async () => {
    const profiles = new TypeormBrowserProfiles(ds!, 'integration-secret-key');
    assert.equal(await profiles.load('space-a'), null);
    assert.deepEqual(await profiles.cookieDomains('space-a'), []);
    await profiles.save('space-a', { cookies: [cookie('sid', 'top-secret', '.a.test')], origins: [] });
    const loaded = await profiles.load('space-a');
    assert.equal(loaded!.cookies[0]!.value, 'top-secret');
    assert.deepEqual(await profiles.cookieDomains('space-a'), ['a.test']);
    assert.equal(await profiles.load('space-b'), null);
    const raw = (await ds!.query(`SELECT "state" FROM "browser_profile" WHERE "profile" = 'space-a'`)) as Array<{
      state: Buffer;
    }>;
    assert.ok(!Buffer.from(raw[0]!.state).toString('latin1').includes('top-secret'));
  });

  it('two replicas saving one profile at once both keep their cookies', async () => {
    const a = new TypeormBrowserProfiles(ds!, 'integration-secret-key');
    const b = new TypeormBrowserProfiles(ds!, 'integration-secret-key');
    await a.save('shared', { cookies: [cookie('base', '1', 'base.test')], origins: [] });
    const seenA = await a.load('shared');
    const seenB = await b.load('shared');
    await Promise.all([
      a.save('shared', { cookies: [...seenA!.cookies, cookie('sid', 'A', 'a.test')], origins: [] }),
      b.save('shared', { cookies: [...seenB!.cookies, cookie('sid', 'B', 'b.test')], origins: [] }),
    ]);
    assert.deepEqual(await a.cookieDomains('shared'), ['a.test', 'b.test', 'base.test']);
  });

  it('a replica saving again from its own browser keeps the cookies another replica saved meanwhile', async () => {
    const a = new TypeormBrowserProfiles(ds!, 'integration-secret-key');
    const b = new TypeormBrowserProfiles(ds!, 'integration-secret-key');
    await a.save('again', { cookies: [cookie('sid', '1', 'a.test')], origins: [] });
    await b.save('again', { cookies: [cookie('sid', '1', 'b.test')], origins: [] });
    await a.save('again', { cookies: [cookie('sid', '2', 'a.test')], origins: [] });
    const loaded = await b.load('again');
    assert.deepEqual(loaded!.cookies.map((c) => `${c.domain}=${c.value}`).sort(), ['a.test=2', 'b.test=1']);
  });

  it('another key is a clear error, not garbage', async () => {
    const wrong = new TypeormBrowserProfiles(ds!, 'some-other-secret');
    await assert.rejects(() => wrong.load('space-a'), ProfileKeyError);
    await assert.rejects(
      () => wrong.save('space-a', { cookies: [], origins: [] }),
      /cannot be decrypted: it was saved with another SVC_SECRETS_KEY/,
    );
  });

  it('an unset SVC_SECRETS_KEY is generated into the data folder once, mode 0600', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-secrets-'));
    try {
      const config = { dataDir, secretsKey: null } as AppConfig;
      const first = resolveSecretsKey(config);
      assert.equal(first.source, 'generated');
      assert.equal(statSync(join(dataDir, 'secrets-key')).mode & 0o777, 0o600);
      assert.deepEqual(resolveSecretsKey(config), { value: first.value, source: 'stored' });
      assert.deepEqual(resolveSecretsKey({ ...config, secretsKey: 'from-the-environment' }), {
        value: 'from-the-environment',
        source: 'env',
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
