import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type InstalledSkill,
  lastUserText,
  mergeSkills,
  safeSkillPath,
  skillFrontMatter,
  skillMarkdown,
  skillName,
  skillsPrompt,
  slashCommandOf,
  withSkills,
} from './skill-rules.js';

const skill = (name: string, scope: InstalledSkill['scope'] = 'space'): InstalledSkill => ({
  name,
  description: `${name} (${scope})`,
  folder: `/${scope}/${name}`,
  scope,
});

describe('skill rules', () => {
  it('names a skill as its slash command and writes SKILL.md whose front matter reads back', () => {
    assert.equal(skillName('Release Notes!'), 'release-notes');
    const md = skillMarkdown({ name: 'Release Notes', description: 'Says "what changed"', system_prompt: 'Do it.' });
    assert.deepEqual(skillFrontMatter(md), { name: 'release-notes', description: 'Says "what changed"' });
    assert.match(md, /\n---\n\nDo it\.\n$/);
    assert.deepEqual(skillFrontMatter("---\nname: x\ndescription: 'single quoted'\n---\nbody"), {
      name: 'x',
      description: 'single quoted',
    });
    assert.deepEqual(skillFrontMatter('no front matter'), {});
  });

  it('accepts only relative paths that stay inside the skill', () => {
    assert.equal(safeSkillPath('lib/utils.js'), 'lib/utils.js');
    for (const bad of ['', '/etc/passwd', '../x', 'a/../../b', 'a//b', './a', 'a\\b', 'a\0b']) {
      assert.equal(safeSkillPath(bad), null, bad);
    }
  });

  it('reads a slash command at the start of a message only', () => {
    assert.deepEqual(slashCommandOf('/release-notes fixed the bug\nand more'), {
      name: 'release-notes',
      rest: 'fixed the bug\nand more',
    });
    assert.deepEqual(slashCommandOf('  /Haiku'), { name: 'haiku', rest: '' });
    assert.equal(slashCommandOf('please /haiku'), null);
    assert.equal(slashCommandOf('/path/to/file'), null);
    assert.equal(
      lastUserText([
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ]),
      'a',
    );
    assert.equal(lastUserText([]), null);
  });

  it("offers the skills by name and description; a space's own wins over a global one of the same name", () => {
    const merged = mergeSkills([skill('b'), skill('a')], [skill('a', 'global'), skill('c', 'global')]);
    assert.deepEqual(
      merged.map((s) => `${s.name}:${s.scope}`),
      ['a:space', 'b:space', 'c:global'],
    );
    assert.equal(skillsPrompt([]), '');
    assert.match(
      skillsPrompt(merged),
      /^## Skills\n[\s\S]*call Skill[\s\S]*\n- a: a \(space\)\n- b: b \(space\)\n- c: c \(global\)$/,
    );
    assert.equal(withSkills('base', { prompt: '' }), 'base');
    assert.equal(withSkills('base', { prompt: 'more' }), 'base\n\nmore');
  });
});
