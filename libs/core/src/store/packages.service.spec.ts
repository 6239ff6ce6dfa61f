import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeAppRepository, RecordingAppScheduler } from '#testing/fake-apps.js';
import { FakeSpaceFolders } from '#testing/fake-space-ports.js';
import { FakeSpaceRepository } from '#testing/fake-spaces.js';
import { FakeStoreRepository } from '#testing/fake-store.js';
import { FakePackageFiles } from '#testing/fake-tools.js';
import { FakeClock } from '#testing/fakes.js';
import { AppData } from '../apps/app-data.js';
import { AppLifecycle } from '../apps/app-lifecycle.js';
import { AppsService } from '../apps/apps.service.js';
import { DomainError } from '../errors/domain-error.js';
import { parseSpecYaml, specToYaml } from '../kernel/app-spec/spec-yaml.js';
import type { AppSpec } from '../kernel/app-spec/app-spec.js';
import type { FileStore } from '../ports/file-store.port.js';
import type { SkillsService } from '../skills/skills.service.js';
import { PackagesService } from './packages.service.js';
import type { StoreCatalog } from './store-catalog.js';

Logger.overrideLogger(false);

const noSkills = { installFor: async () => undefined, removeFor: async () => undefined } as unknown as SkillsService;

const SPEC = {
  name: 'Reviewer',
  version: '1.2.0',
  author: 'alice',
  description: 'Reviews pull requests.',
  type: 'automation',
  system_prompt: 'Review.',
  subscriptions: [{ id: 'hook', source: { type: 'webhook', config: { path: 'github/push', secret: 'hush-hush' } } }],
  requires: { skills: [{ id: 'lint' }] },
} as const;

const text = (s: string) => new TextEncoder().encode(s);
const refusal = (kind: DomainError['kind'], message: string) => (err: unknown) => {
  assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
  assert.equal(err.kind, kind);
  assert.equal(err.message, message);
  return true;
};

describe('PackagesService', () => {
  let files: FakePackageFiles;
  let apps: AppsService;
  let repo: FakeStoreRepository;
  let storeSkills: string[];
  let service: PackagesService;

  beforeEach(async () => {
    const clock = new FakeClock();
    const spaces = new FakeSpaceRepository();
    await spaces.insert({
      id: 's1',
      name: 's1',
      icon: '📁',
      color: null,
      path: '/work/s1',
      isTemp: false,
      preferences: {},
    });
    const folders = new FakeSpaceFolders().add('/work/s1');
    apps = new AppsService(
      new FakeAppRepository(() => clock.now()),
      spaces,
      new AppData({} as FileStore, folders, spaces),
      new AppLifecycle(),
      new RecordingAppScheduler(),
      new RecordingEventBus(),
      clock,
      { allowMcpCommands: false },
      noSkills,
    );
    apps.onApplicationBootstrap();
    files = new FakePackageFiles();
    repo = new FakeStoreRepository();
    storeSkills = [];
    const catalog = {
      catalog: async () => ({ entries: storeSkills.map((slug) => ({ entry: { type: 'skill', slug } })) }),
    } as unknown as StoreCatalog;
    service = new PackagesService(files, apps, repo, catalog, spaces, folders);
  });

  const packageWith = (path: string, extra: Array<{ path: string; data: Uint8Array }> = []) =>
    files.add(path, {
      specYaml: specToYaml(SPEC as unknown as AppSpec),
      files: [{ path: 'skills/lint/SKILL.md', data: text('---\ndescription: lints\n---\nLint it.') }, ...extra],
    });

  describe('import', () => {
    it('installs the app and keeps its bundled skills in the install record', async () => {
      packageWith('/tmp/reviewer.dhpkg');
      const app = await service.import('/tmp/reviewer.dhpkg', 's1');
      assert.equal(app.spec.name, 'Reviewer');
      assert.equal(app.spaceId, 's1');
      const install = await repo.findInstall(app.id);
      assert.equal(install?.registryId, null);
      assert.equal(install?.slug, null);
      assert.deepEqual(install?.skills, [
        {
          id: 'lint',
          files: [
            { path: 'SKILL.md', base64: Buffer.from('---\ndescription: lints\n---\nLint it.').toString('base64') },
          ],
        },
      ]);
    });

    it('refuses a package that holds a credential, installing nothing', async () => {
      packageWith('/tmp/leaky.dhpkg', [{ path: 'skills/lint/.env', data: text(`KEY=sk-ant-${'a'.repeat(30)}`) }]);
      await assert.rejects(
        service.import('/tmp/leaky.dhpkg', null),
        refusal(
          'invalid',
          'The package is refused: skills/lint/.env holds what looks like an API key (sk-...); a package must never hold API keys, tokens or passwords',
        ),
      );
      assert.deepEqual(await apps.list({}), []);
      assert.deepEqual(await repo.listInstalls(), []);
    });

    it('refuses a missing path, and lets the assistant import only from inside a space folder', async () => {
      await assert.rejects(service.import('', null), refusal('invalid', 'filePath is required'));
      packageWith('/tmp/reviewer.dhpkg');
      await assert.rejects(
        service.import('/tmp/reviewer.dhpkg', null, 'assistant'),
        refusal('forbidden', 'filePath: the assistant can import packages from inside a space folder only'),
      );
      await assert.rejects(
        service.import('/work/s1', null, 'assistant'),
        refusal('forbidden', 'filePath: the assistant can import packages from inside a space folder only'),
      );
      packageWith('/work/s1/reviewer.dhpkg');
      assert.equal((await service.import('/work/s1/reviewer.dhpkg', 's1', 'assistant')).spec.name, 'Reviewer');
    });

    it('takes the app back when its install record cannot be written', async () => {
      packageWith('/tmp/reviewer.dhpkg');
      repo.saveInstall = async () => {
        throw new Error('database away');
      };
      await assert.rejects(service.import('/tmp/reviewer.dhpkg', null), /database away/);
      assert.deepEqual(await apps.list({}), []);
    });
  });

  describe('installGiven', () => {
    it('refuses a file of a digital human that is no bundled skill file', async () => {
      await assert.rejects(
        service.installGiven({ spec: SPEC, files: { 'notes.txt': 'x' } }),
        refusal(
          'invalid',
          'files: notes.txt is not a bundled skill file (skills/<id>/<file>, the id listed in requires.skills)',
        ),
      );
      assert.deepEqual(await apps.list({}), []);
    });

    it("keeps a skill app's own files under its command name", async () => {
      const app = await service.installGiven({
        spec: { ...SPEC, type: 'skill', subscriptions: undefined, requires: undefined, name: 'Tidy Up' },
        files: { 'SKILL.md': '# tidy', 'scripts/run.py': 'print(1)' },
      });
      assert.deepEqual(
        (await repo.findInstall(app.id))?.skills.map((s) => [s.id, s.files.map((f) => f.path)]),
        [['tidy-up', ['SKILL.md', 'scripts/run.py']]],
      );
    });
  });

  describe('export', () => {
    it('packs the spec without secrets and the bundled skills a source does not provide', async () => {
      packageWith('/tmp/reviewer.dhpkg');
      const app = await service.import('/tmp/reviewer.dhpkg', null);
      const exported = await service.export(app.id);
      assert.equal(exported.fileName, 'reviewer-1.2.0.dhpkg');
      files.add('/tmp/out.dhpkg', exported.data);
      const contents = await files.read('/tmp/out.dhpkg');
      assert.deepEqual(
        contents.files.map((f) => [f.path, Buffer.from(f.data).toString()]),
        [['skills/lint/SKILL.md', '---\ndescription: lints\n---\nLint it.']],
      );
      const spec = parseSpecYaml(contents.specYaml) as unknown as AppSpec;
      assert.equal(spec.subscriptions![0]!.source.config.secret, '');
      assert.deepEqual(spec.requires?.skills, [{ id: 'lint', bundled: true, files: ['SKILL.md'] }]);
    });

    it('leaves out a required skill that a Store source lists', async () => {
      packageWith('/tmp/reviewer.dhpkg');
      const app = await service.import('/tmp/reviewer.dhpkg', null);
      storeSkills = ['tools/lint'];
      files.add('/tmp/out.dhpkg', (await service.export(app.id)).data);
      assert.deepEqual((await files.read('/tmp/out.dhpkg')).files, []);
    });

    it('stops when a required skill is neither in a source nor installed with the app', async () => {
      const app = await apps.install({ spec: SPEC, spaceId: null });
      await assert.rejects(
        service.export(app.id),
        refusal(
          'not_found',
          'Export stopped: skill lint is neither in a Store source nor installed with this digital human',
        ),
      );
    });

    it('exports a skill app as a zip with SKILL.md at the root', async () => {
      const app = await apps.install({
        spec: { ...SPEC, type: 'skill', subscriptions: undefined, requires: undefined, name: 'Tidy' },
        spaceId: null,
      });
      const exported = await service.export(app.id);
      assert.equal(exported.fileName, 'tidy-1.2.0.zip');
      files.add('/tmp/tidy.zip', exported.data);
      assert.deepEqual(
        (await files.read('/tmp/tidy.zip')).files.map((f) => f.path),
        ['SKILL.md', 'spec.yaml'],
      );
    });
  });
});
