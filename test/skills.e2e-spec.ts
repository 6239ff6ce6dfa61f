import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AgentHarness, toolResults } from '#testing/agent-harness.js';
import { type ScriptedModelServer, textReply } from '#testing/scripted-model-server.js';

const skillSpec = (name: string, description: string, prompt: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  description,
  type: 'skill',
  system_prompt: prompt,
});

describe('skills: installed into their scope, offered to turns, read on use, slash commands', () => {
  const h = new AgentHarness();
  const { api, okData, turn, bodyOf, systemOf, toolNamesOf } = h;
  let model: ScriptedModelServer;
  let space: { id: string; path: string };
  let notesId: string;

  const skillDir = (name: string) => join(space.path, '.claude', 'skills', name);
  const chat = (message: string) => h.chat(space.id, message);
  const results = toolResults;

  before(async () => {
    await h.start();
    model = h.model;
    space = okData(await api.post('/api/spaces', { name: 'Docs' }));
    notesId = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: skillSpec(
          'Release Notes',
          'Writes release notes from a change list.',
          'Write bullet points; end with DONE-NOTES.',
        ),
        spaceId: space.id,
      }),
    ).appId;
  });
  after(() => h.stop());
  beforeEach(() => model.reset());

  it('a skill app installs SKILL.md into its space skills folder; a chat is offered it and reads it with Skill', async () => {
    const skillMd = readFileSync(join(skillDir('release-notes'), 'SKILL.md'), 'utf8');
    assert.match(skillMd, /^---\nname: "release-notes"\ndescription: "Writes release notes from a change list."\n---/);
    assert.match(skillMd, /DONE-NOTES/);
    model.enqueue({ steps: [{ toolCall: { name: 'Skill', input: { name: 'release-notes' } } }] }, textReply('ok'));
    const frames = await chat('Please write the notes for 1.2');
    const info = frames.find((f) => f.channel === 'agent:session-info')!.data as Record<string, unknown>;
    assert.deepEqual(info.skills, ['release-notes']);
    assert.deepEqual(info.slashCommands, ['release-notes']);
    assert.ok(toolNamesOf(0).includes('Skill'));
    assert.match(systemOf(0), /release-notes: Writes release notes from a change list\./);
    assert.ok(!systemOf(0).includes('DONE-NOTES'), 'instructions are read on use, not up front');
    const [read] = results(frames);
    assert.equal(read!.isError, false);
    assert.match(read!.result, /DONE-NOTES/);
    assert.ok(bodyOf(1).includes('DONE-NOTES'));
  });

  it('/name at the start of a message loads the skill into the turn', async () => {
    model.enqueue(textReply('- notes'));
    await chat('/release-notes fixed the login bug');
    assert.match(systemOf(0), /Skill \/release-notes \(loaded by the user's slash command\)/);
    assert.match(systemOf(0), /DONE-NOTES/);
    model.reset();
    model.enqueue(textReply('?'));
    await chat('/no-such-skill hello');
    assert.ok(!systemOf(0).includes('loaded by the user'));
  });

  it('a global skill lives in the data folder and every space sees it; a space skill stays in its space', async () => {
    const globalId = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: skillSpec('Haiku', 'Answers in haiku.', 'Reply as a haiku. HAIKU-RULE'),
        spaceId: null,
      }),
    ).appId;
    assert.ok(existsSync(join(h.server.dataDir, 'skills', 'haiku', 'SKILL.md')));
    const other = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Other' }));
    const conv = okData<{ id: string }>(await api.post(`/api/spaces/${other.id}/conversations`, { title: 'x' })).id;
    model.enqueue({ steps: [{ toolCall: { name: 'Skill', input: { name: 'haiku' } } }] }, textReply('ok'));
    const frames = await turn(conv, () =>
      api.post('/api/agent/message', { spaceId: other.id, conversationId: conv, message: 'hi' }),
    );
    assert.deepEqual((frames.find((f) => f.channel === 'agent:session-info')!.data as { skills: string[] }).skills, [
      'haiku',
    ]);
    assert.match(results(frames)[0]!.result, /HAIKU-RULE/);
    okData(await api.delete(`/api/apps/${globalId}`));
    assert.ok(!existsSync(join(h.server.dataDir, 'skills', 'haiku')), 'uninstall removes the files');
  });

  it("a digital human's bundled requires.skills install with it, serve their files, and go with it", async () => {
    const pkg = mkdtempSync(join(tmpdir(), 'svc-skill-pkg-'));
    writeFileSync(
      join(pkg, 'spec.yaml'),
      [
        'spec_version: "1"',
        'name: Changelog Keeper',
        'version: "1.0"',
        'author: tests',
        'description: Keeps the changelog.',
        'type: automation',
        'system_prompt: Keep the changelog.',
        'requires:',
        '  skills:',
        '    - id: keep-a-changelog',
        '      bundled: true',
        '      files: [SKILL.md, templates/entry.md]',
        '',
      ].join('\n'),
    );
    mkdirSync(join(pkg, 'skills', 'keep-a-changelog', 'templates'), { recursive: true });
    writeFileSync(
      join(pkg, 'skills', 'keep-a-changelog', 'SKILL.md'),
      '---\nname: keep-a-changelog\ndescription: Formats entries the Keep a Changelog way.\n---\nUse the template.\n',
    );
    writeFileSync(join(pkg, 'skills', 'keep-a-changelog', 'templates', 'entry.md'), '### Added\n- TEMPLATE-LINE\n');
    const keeperId = okData<{ appId: string }>(
      await api.post('/api/store/import-dhpkg', { filePath: pkg, spaceId: space.id }),
    ).appId;
    assert.ok(existsSync(join(skillDir('keep-a-changelog'), 'templates', 'entry.md')));

    model.enqueue(
      { steps: [{ toolCall: { name: 'Skill', input: { name: 'keep-a-changelog' } } }] },
      { steps: [{ toolCall: { name: 'Skill', input: { name: 'keep-a-changelog', file: 'templates/entry.md' } } }] },
      {
        steps: [
          { toolCall: { name: 'Skill', input: { name: 'keep-a-changelog', file: '../release-notes/SKILL.md' } } },
        ],
      },
      textReply('done'),
    );
    const frames = await turn(`app-chat:${keeperId}`, () =>
      api.post(`/api/apps/${keeperId}/chat/send`, { spaceId: space.id, message: 'Add an entry' }),
    );
    assert.match(systemOf(0), /keep-a-changelog: Formats entries the Keep a Changelog way\./);
    const [main, template, escape] = results(frames);
    assert.match(main!.result, /Use the template\.[\s\S]*templates\/entry\.md/);
    assert.match(template!.result, /TEMPLATE-LINE/);
    assert.equal(escape!.isError, true, 'a path out of the skill is refused');

    okData(await api.delete(`/api/apps/${keeperId}`));
    assert.ok(!existsSync(skillDir('keep-a-changelog')), 'uninstalling the digital human removes its skills');
    assert.ok(existsSync(skillDir('release-notes')), 'other skills stay');
  });

  it("POST /api/apps/install carries skill files (files): a skill app's own and a digital human's bundled ones", async () => {
    const skillMd =
      '---\nname: style-guide\ndescription: House style for docs.\n---\nRead rules/words.md. STYLE-GUIDE-BODY\n';
    const styleId = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: skillSpec('Style Guide', 'House style for docs.', 'unused: SKILL.md is given'),
        spaceId: space.id,
        files: { 'SKILL.md': skillMd, 'rules/words.md': { base64: Buffer.from('WORDS-LIST').toString('base64') } },
      }),
    ).appId;
    assert.equal(readFileSync(join(skillDir('style-guide'), 'SKILL.md'), 'utf8'), skillMd, 'the given SKILL.md wins');
    assert.equal(readFileSync(join(skillDir('style-guide'), 'rules', 'words.md'), 'utf8'), 'WORDS-LIST');

    const helper = {
      spec_version: '1',
      name: 'Doc Helper',
      version: '1.0.0',
      author: 'tests',
      description: 'Writes docs.',
      type: 'automation',
      system_prompt: 'Write docs.',
      requires: { skills: [{ id: 'doc-templates', bundled: true, files: ['SKILL.md', 'page.md'] }] },
    };
    const stray = await api.post('/api/apps/install', {
      spec: helper,
      spaceId: space.id,
      files: { 'page.md': 'x' },
    });
    assert.equal(stray.status, 400);
    assert.match(stray.body.error, /page\.md is not a bundled skill file/);
    const escaping = await api.post('/api/apps/install', {
      spec: helper,
      spaceId: space.id,
      files: { 'skills/doc-templates/../../x': 'x' },
    });
    assert.equal(escaping.status, 400);
    const keyed = await api.post('/api/apps/install', {
      spec: helper,
      spaceId: space.id,
      files: { 'skills/doc-templates/SKILL.md': 'token sk-ant-abcdefghijklmnopqrstuvwxyz0123' },
    });
    assert.equal(keyed.status, 400);
    assert.match(keyed.body.error, /looks like an API key/);
    assert.equal(
      okData<unknown[]>(await api.get(`/api/apps?spaceId=${space.id}`)).filter(
        (a) => (a as { spec: { name: string } }).spec.name === 'Doc Helper',
      ).length,
      0,
      'nothing installed by a refused body',
    );

    const helperId = okData<{ appId: string }>(
      await api.post('/api/apps/install', {
        spec: helper,
        spaceId: space.id,
        files: {
          'skills/doc-templates/SKILL.md':
            '---\nname: doc-templates\ndescription: Page templates.\n---\nUse page.md.\n',
          'skills/doc-templates/page.md': '# PAGE-TEMPLATE\n',
        },
      }),
    ).appId;
    assert.equal(readFileSync(join(skillDir('doc-templates'), 'page.md'), 'utf8'), '# PAGE-TEMPLATE\n');
    model.enqueue(
      { steps: [{ toolCall: { name: 'Skill', input: { name: 'doc-templates', file: 'page.md' } } }] },
      textReply('ok'),
    );
    const frames = await turn(`app-chat:${helperId}`, () =>
      api.post(`/api/apps/${helperId}/chat/send`, { spaceId: space.id, message: 'Write a page' }),
    );
    assert.match(results(frames)[0]!.result, /PAGE-TEMPLATE/);
    // Kept for export, like an imported package's skills.
    const exported = await api.get(`/api/apps/${helperId}/export`);
    assert.equal(exported.status, 200);
    assert.match(String(exported.headers['content-disposition']), /doc-helper-1\.0\.0\.dhpkg/);

    okData(await api.delete(`/api/apps/${helperId}`));
    okData(await api.delete(`/api/apps/${styleId}`));
    assert.ok(!existsSync(skillDir('doc-templates')), 'uninstall removes the bundled skill');
    assert.ok(!existsSync(skillDir('style-guide')), "uninstall removes the skill app's files");
  });

  it('uninstalling a skill app removes its folder and turns stop seeing it; reinstall brings it back', async () => {
    okData(await api.delete(`/api/apps/${notesId}`));
    assert.ok(!existsSync(skillDir('release-notes')));
    model.enqueue(textReply('ok'));
    await chat('/release-notes x');
    assert.ok(!toolNamesOf(0).includes('Skill'));
    assert.ok(!systemOf(0).includes('release-notes'));
    okData(await api.post(`/api/apps/${notesId}/reinstall`));
    assert.ok(existsSync(join(skillDir('release-notes'), 'SKILL.md')));
  });
});
