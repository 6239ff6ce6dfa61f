import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import { FakeFileStore, FakeStoreFolders } from '#testing/fake-files.js';
import { FakeSpaceRepository } from '#testing/fake-spaces.js';
import { DomainError } from '../errors/domain-error.js';
import type { App } from '../kernel/app.js';
import { ToolInputError } from '../kernel/tool.js';
import { SkillsService } from './skills.service.js';

Logger.overrideLogger(false);

const b64 = (text: string) => Buffer.from(text).toString('base64');
const ctx = { signal: new AbortController().signal, toolUseId: 't', space: {} } as never;

const skillApp = (id: string, spaceId: string | null, name: string, description = `${name} help`): App =>
  ({ id, spaceId, spec: { type: 'skill', name, description, system_prompt: `Do ${name} well.` } }) as unknown as App;

const human = (id: string, spaceId: string | null, skills: string[]): App =>
  ({
    id,
    spaceId,
    spec: {
      type: 'automation',
      name: 'Helper',
      description: 'd',
      requires: { skills: skills.map((s) => ({ id: s })) },
    },
  }) as unknown as App;

describe('SkillsService', () => {
  let store: FakeFileStore;
  let service: SkillsService;
  let spaces: FakeSpaceRepository;
  /** A space as a turn read it. */
  const space = async (id: string) => (await spaces.findById(id))!;

  beforeEach(async () => {
    store = new FakeFileStore().addFolder('/data', '/work/s1', '/work/s2', '/data/temp');
    spaces = new FakeSpaceRepository();
    for (const [id, path] of [
      ['s1', '/work/s1'],
      ['s2', '/work/s2'],
      [TEMP_SPACE_ID, '/data/temp'],
    ] as const) {
      await spaces.insert({
        id,
        name: id,
        icon: '📁',
        color: null,
        path,
        isTemp: id === TEMP_SPACE_ID,
        preferences: {},
      });
    }
    service = new SkillsService(store, new FakeStoreFolders(store), spaces, { dataDir: '/data' });
  });

  it('moves the skills kept in .svc/skills by an earlier version to .claude/skills once', async () => {
    store.addFolder('/work/s1/.svc/skills/old-one');
    store.addFile('/work/s1/.svc/skills/old-one/SKILL.md', '---\nname: old-one\ndescription: From before\n---\n');
    assert.deepEqual(
      (await service.list('s1')).map((s) => [s.name, s.folder]),
      [['old-one', '/work/s1/.claude/skills/old-one']],
    );
    assert.equal(store.files.has('/work/s1/.svc/skills/old-one/SKILL.md'), false);
  });

  it('installs a skill app in its space: SKILL.md from the spec, marked with its owner', async () => {
    await service.installFor(skillApp('app-1', 's1', 'Code Review'));
    assert.equal(
      store.text('/work/s1/.claude/skills/code-review/SKILL.md'),
      '---\nname: "code-review"\ndescription: "Code Review help"\n---\n\nDo Code Review well.\n',
    );
    assert.equal(store.text('/work/s1/.claude/skills/code-review/.installed-by'), 'app-1');
    assert.deepEqual(await service.list('s1'), [
      {
        name: 'code-review',
        description: 'Code Review help',
        folder: '/work/s1/.claude/skills/code-review',
        scope: 'space',
      },
    ]);
    assert.deepEqual(await service.list('s2'), [], 'another space does not see it');
  });

  it('installs a global skill under the data folder, seen by every space and the temporary one', async () => {
    await service.installFor(skillApp('app-g', null, 'Translate'));
    assert.ok(store.files.has('/data/skills/translate/SKILL.md'));
    for (const space of ['s1', 's2', TEMP_SPACE_ID]) {
      assert.deepEqual(
        (await service.list(space)).map((s) => [s.name, s.scope]),
        [['translate', 'global']],
      );
    }
  });

  it("lets a space's skill win over a global one of the same name", async () => {
    await service.installFor(skillApp('app-g', null, 'Translate', 'global one'));
    await service.installFor(skillApp('app-s', 's1', 'Translate', 'space one'));
    assert.deepEqual(
      (await service.list('s1')).map((s) => s.description),
      ['space one'],
    );
    assert.deepEqual(
      (await service.list('s2')).map((s) => s.description),
      ['global one'],
    );
  });

  it("writes a digital human's bundled skills that it requires and that come with files", async () => {
    await service.installFor(human('dh-1', 's1', ['Lint', 'Empty', 'Absent']), [
      { id: 'Lint', files: [{ path: 'SKILL.md', base64: b64('---\ndescription: lints\n---\nRun it.') }] },
      { id: 'Empty', files: [] },
      { id: 'Unlisted', files: [{ path: 'SKILL.md', base64: b64('x') }] },
    ]);
    assert.deepEqual(
      (await service.list('s1')).map((s) => [s.name, s.description]),
      [['lint', 'lints']],
    );
    assert.equal(store.text('/work/s1/.claude/skills/lint/.installed-by'), 'dh-1');
  });

  it('refuses an unsafe file path and a skill without a usable name', async () => {
    await assert.rejects(
      service.installFor(skillApp('a', 's1', 'Evil'), [
        { id: 'evil', files: [{ path: '../escape.sh', base64: b64('x') }] },
      ]),
      (err: unknown) =>
        err instanceof DomainError &&
        err.kind === 'invalid' &&
        err.message === 'The skill evil has an unsafe file path: ../escape.sh',
    );
    assert.equal(store.files.has('/work/s1/.svc/escape.sh'), false);
    await assert.rejects(
      service.installFor(skillApp('a', 's1', '   ')),
      (err: unknown) => err instanceof DomainError && err.message === 'The skill has no usable name',
    );
  });

  it('replaces the folder on reinstall and removes only what the app installed', async () => {
    const files = [
      { path: 'SKILL.md', base64: b64('---\ndescription: v1\n---') },
      { path: 'docs/old.md', base64: b64('old') },
    ];
    await service.installFor(skillApp('app-1', 's1', 'Docs'), [{ id: 'docs', files }]);
    await service.installFor(skillApp('app-1', 's1', 'Docs'), [{ id: 'docs', files: [files[0]!] }]);
    assert.equal(store.files.has('/work/s1/.claude/skills/docs/docs/old.md'), false);
    await service.installFor(skillApp('app-2', 's1', 'Other'));
    await service.removeFor(skillApp('app-1', 's1', 'Docs'));
    assert.deepEqual(
      (await service.list('s1')).map((s) => s.name),
      ['other'],
    );
  });

  it('refuses an unknown space', async () => {
    await assert.rejects(
      service.installFor(skillApp('a', 'nope', 'X')),
      (err: unknown) => err instanceof DomainError && err.kind === 'not_found' && err.message === 'Space not found',
    );
  });

  describe('turns', () => {
    it('offer nothing when no skill is installed', async () => {
      assert.deepEqual(await service.forTurn(await space('s1'), '/anything'), { tools: [], prompt: '', names: [] });
    });

    it('offer the Skill tool and the list, and load the skill a slash command names', async () => {
      await service.installFor(skillApp('a', 's1', 'Deploy'), [
        {
          id: 'deploy',
          files: [
            { path: 'SKILL.md', base64: b64('---\ndescription: ships it\n---\nStep one.') },
            { path: 'scripts/run.sh', base64: b64('echo go') },
          ],
        },
      ]);
      const plain = await service.forTurn(await space('s1'), 'hello');
      assert.deepEqual(plain.names, ['deploy']);
      assert.equal(plain.tools[0]!.name, 'Skill');
      assert.match(plain.prompt, /^## Skills\n/);
      assert.match(plain.prompt, /- deploy: ships it/);
      assert.doesNotMatch(plain.prompt, /loaded by the user's slash command/);
      const loaded = await service.forTurn(await space('s1'), '/deploy now');
      assert.match(loaded.prompt, /## Skill \/deploy \(loaded by the user's slash command\)[\s\S]*Step one\./);

      const tool = plain.tools[0]!;
      assert.deepEqual(await tool.run({ name: 'deploy' }, ctx), {
        output: '---\ndescription: ships it\n---\nStep one.\n\n(Other files of this skill: scripts/run.sh)',
        isError: false,
      });
      assert.deepEqual(await tool.run({ name: 'deploy', file: 'scripts/run.sh' }, ctx), {
        output: 'echo go',
        isError: false,
      });
      assert.deepEqual(await tool.run({ name: 'deploy', file: 'nope.md' }, ctx), {
        output: 'The skill deploy has no file nope.md',
        isError: true,
      });
      await assert.rejects(tool.run({ name: 'other' }, ctx), (err: unknown) => {
        assert.ok(err instanceof ToolInputError);
        assert.equal(err.message, 'No installed skill is named other');
        return true;
      });
      await assert.rejects(
        tool.run({ name: 'deploy', file: '.installed-by' }, ctx),
        /file must be a path inside the skill/,
      );
    });
  });
});
