import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { ErrorCodes } from '#contracts/errors.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeStoreRepository } from '#testing/fake-store.js';
import { FakeCatalogFetcher } from '#testing/fake-tools.js';
import { FakeClock } from '#testing/fakes.js';
import type { AppsService } from '../apps/apps.service.js';
import type { AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import type { SkillsService } from '../skills/skills.service.js';
import type { StoreServerClient } from './store-server.js';
import { CatalogReader } from './catalog-reader.js';
import type { PublicCatalogs } from './public-catalogs.js';
import { StoreCatalog } from './store-catalog.js';
import { StoreErrors } from './store-errors.js';
import { StoreService } from './store.service.js';

Logger.overrideLogger(false);

const refusal = (kind: DomainError['kind'], message: string | RegExp, code?: string) => (err: unknown) => {
  assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
  assert.equal(err.kind, kind);
  if (typeof message === 'string') assert.equal(err.message, message);
  else assert.match(err.message, message);
  if (code !== undefined) assert.equal(err.reason, code);
  return true;
};

const BUILTIN = 'https://catalog.example.com/svc';

/**
 * The source rules of StoreService (docs/api/store-and-packages.md, "Sources"). Installing,
 * updates and publishing have their own specs (packages.service.spec.ts and the e2e files); the
 * collaborators only those use are not reached here.
 */
describe('StoreService sources', () => {
  let repo: FakeStoreRepository;
  let fetcher: FakeCatalogFetcher;
  let service: StoreService;

  beforeEach(() => {
    const clock = new FakeClock();
    const bus = new RecordingEventBus();
    repo = new FakeStoreRepository();
    fetcher = new FakeCatalogFetcher();
    const publicCatalogs = {} as PublicCatalogs;
    const config = { storeSources: [BUILTIN], storeCatalogs: [] } as unknown as AppConfig;
    const catalog = new StoreCatalog(
      config,
      repo,
      new CatalogReader(fetcher, repo, clock, publicCatalogs),
      fetcher,
      clock,
      bus,
    );
    service = new StoreService(
      catalog,
      repo,
      {} as AppsService,
      fetcher,
      clock,
      {} as StoreServerClient,
      publicCatalogs,
      {} as SkillsService,
      bus,
    );
  });

  it('lists the built-in source first, seeded once', async () => {
    const sources = await service.listSources();
    assert.equal(sources.length, 1);
    assert.equal(sources[0]!.url, BUILTIN);
    assert.equal(sources[0]!.isDefault, true);
    assert.equal((await service.listSources()).length, 1);
  });

  it('adds a user source enabled, trimmed, its url normalized, typed svc by default', async () => {
    const added = await service.addSource({ name: '  Team  ', url: 'https://apps.example.org/catalog/#top' });
    assert.match(added.id, /^src-[0-9a-f]{8}$/);
    assert.equal(added.name, 'Team');
    assert.equal(added.url, 'https://apps.example.org/catalog');
    assert.equal(added.enabled, true);
    assert.equal(added.isDefault, false);
    assert.equal(added.sourceType, 'svc');
    assert.equal(added.adapterConfig, null);
    const urls = (await service.listSources()).map((s) => s.url);
    assert.deepEqual(urls, [BUILTIN, 'https://apps.example.org/catalog'], 'built-ins first');
  });

  it('refuses bad sources naming the field, adding nothing', async () => {
    await assert.rejects(service.addSource({ url: 'https://a.example.com' }), refusal('invalid', 'name is required'));
    await assert.rejects(
      service.addSource({ name: ' ', url: 'https://a.example.com' }),
      refusal('invalid', 'name is required'),
    );
    await assert.rejects(service.addSource({ name: 'A', url: 7 }), refusal('invalid', 'url is required'));
    await assert.rejects(
      service.addSource({ name: 'A', url: 'ftp://a.example.com' }),
      refusal('invalid', 'url must be an http:// or https:// URL'),
    );
    await assert.rejects(
      service.addSource({ name: 'A', url: 'https://u:p@a.example.com' }),
      refusal('invalid', 'url must not carry a user name or password'),
    );
    await assert.rejects(
      service.addSource({ name: 'A', url: 'https://a.example.com', sourceType: 'clawhub' }),
      refusal('invalid', 'sourceType must be svc or dhp-v2 for a source added by a user'),
    );
    await assert.rejects(
      service.addSource({ name: 'A', url: 'https://a.example.com', adapterConfig: [1] }),
      refusal('invalid', 'adapterConfig must be a plain JSON object'),
    );
    await assert.rejects(
      service.addSource({ name: 'A', url: 'https://a.example.com', adapterConfig: { nested: { a: 1 } } }),
      refusal('invalid', 'adapterConfig.nested must be a string, number or boolean'),
    );
    assert.equal(repo.sources.size, 0, 'not even the built-ins were needed');
  });

  it('refuses a host that resolves to a private address, saying which', async () => {
    fetcher.blockedHosts.set('intranet.example.com', '10.0.0.5');
    await assert.rejects(
      service.addSource({ name: 'A', url: 'https://intranet.example.com/c' }),
      refusal('invalid', `${StoreErrors.privateHost} (intranet.example.com resolves to 10.0.0.5)`),
    );
  });

  it('refuses a second source with the same url as a conflict with its code', async () => {
    await service.addSource({ name: 'A', url: 'https://a.example.com/c/' });
    await assert.rejects(
      service.addSource({ name: 'B', url: 'https://a.example.com/c' }),
      refusal('conflict', StoreErrors.duplicateUrl, ErrorCodes.REGISTRY_SOURCE_DUPLICATE),
    );
    await assert.rejects(
      service.addSource({ name: 'B', url: BUILTIN }),
      refusal('conflict', StoreErrors.duplicateUrl),
      'nor the url of a built-in one',
    );
  });

  it('a built-in source cannot be deleted (the answer says so); a user one can', async () => {
    const [builtin] = await service.listSources();
    assert.equal(await service.deleteSource(builtin!.id), StoreErrors.builtInSource);
    assert.ok(repo.sources.has(builtin!.id));
    const added = await service.addSource({ name: 'A', url: 'https://a.example.com' });
    assert.equal(await service.deleteSource(added.id), null);
    assert.equal(repo.sources.has(added.id), false);
    await assert.rejects(
      service.deleteSource(added.id),
      refusal('not_found', StoreErrors.sourceNotFound(added.id), ErrorCodes.REGISTRY_SOURCE_NOT_FOUND),
    );
  });

  it('turns a source off and on; an unknown one is not found', async () => {
    const [builtin] = await service.listSources();
    await service.toggleSource(builtin!.id, false);
    assert.equal(repo.sources.get(builtin!.id)?.enabled, false);
    await service.toggleSource(builtin!.id, true);
    assert.equal(repo.sources.get(builtin!.id)?.enabled, true);
    await assert.rejects(
      service.toggleSource('src-missing', false),
      refusal('not_found', StoreErrors.sourceNotFound('src-missing')),
    );
  });

  it('merges flat adapter settings (null removes a key, none left is null) and refuses nested ones', async () => {
    const added = await service.addSource({ name: 'A', url: 'https://a.example.com', adapterConfig: { token: 't' } });
    await service.patchAdapterConfig(added.id, { region: 'eu', retries: 3 });
    assert.deepEqual(repo.sources.get(added.id)?.adapterConfig, { token: 't', region: 'eu', retries: 3 });
    await service.patchAdapterConfig(added.id, { token: null });
    assert.deepEqual(repo.sources.get(added.id)?.adapterConfig, { region: 'eu', retries: 3 });
    await service.patchAdapterConfig(added.id, { region: null, retries: null });
    assert.equal(repo.sources.get(added.id)?.adapterConfig, null);
    await assert.rejects(
      service.patchAdapterConfig(added.id, { deep: ['x'] }),
      refusal('invalid', 'body.deep must be a string, number or boolean'),
    );
    await assert.rejects(
      service.patchAdapterConfig(added.id, 'x'),
      refusal('invalid', 'body must be a plain JSON object'),
    );
  });

  it('ignoreVersion checks its fields before looking anything up', async () => {
    await assert.rejects(service.ignoreVersion('not-a-uuid', '1.0.0'), refusal('invalid', 'appId must be a UUID'));
    await assert.rejects(
      service.ignoreVersion('11111111-1111-4111-8111-111111111111', ''),
      refusal('invalid', 'version is required'),
    );
  });
});
