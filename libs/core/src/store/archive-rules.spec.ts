import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bundledSkillPath, entryNameProblem, givenFiles, packageRoot, secretProblem } from './archive-rules.js';

describe('package archive rules', () => {
  it('refuses zip-slip names', () => {
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', '\\x', 'C:/x', 'c:x', 'a\\..\\b', '', 'a\0b']) {
      assert.notEqual(entryNameProblem(bad), null, JSON.stringify(bad));
    }
    for (const ok of ['spec.yaml', 'skills/a/SKILL.md', 'pkg/spec.yaml', 'a..b/c'])
      assert.equal(entryNameProblem(ok), null);
  });

  it('finds spec.yaml at the root or in one top-level folder', () => {
    assert.equal(packageRoot(['spec.yaml', 'skills/a/x']), '');
    assert.equal(packageRoot(['pkg/spec.yaml', 'pkg/skills/a/x']), 'pkg/');
    assert.equal(packageRoot(['a/spec.yaml', 'b/x']), null);
    assert.equal(packageRoot(['a/b/spec.yaml']), null);
    assert.equal(packageRoot([]), null);
  });

  it('names bundled skill files', () => {
    assert.deepEqual(bundledSkillPath('skills/x-post/index.js'), { id: 'x-post', file: 'index.js' });
    assert.deepEqual(bundledSkillPath('skills/x/lib/a.js'), { id: 'x', file: 'lib/a.js' });
    assert.equal(bundledSkillPath('skills/x/'), null);
    assert.equal(bundledSkillPath('other/x/a'), null);
  });

  it('spots text that looks like a credential', () => {
    assert.match(secretProblem('key: sk-ant-abcdefghijklmnopqrstuvwxyz012345')!, /API key/);
    assert.match(secretProblem('-----BEGIN RSA PRIVATE KEY-----')!, /private key/);
    assert.match(secretProblem('AKIAABCDEFGHIJKLMNOP')!, /AWS/);
    assert.equal(secretProblem('system_prompt: ask for the sk- prefix'), null);
  });

  it('reads the files of an install body: text or base64, package entry names, a size limit', () => {
    const files = givenFiles({ 'SKILL.md': 'hi', 'bin/x': { base64: Buffer.from([1, 2]).toString('base64') } });
    assert.deepEqual(
      files.map((f) => [f.path, [...f.data]]),
      [
        ['SKILL.md', [104, 105]],
        ['bin/x', [1, 2]],
      ],
    );
    assert.deepEqual(givenFiles(undefined), []);
    assert.throws(() => givenFiles(['x']), /files must be an object/);
    assert.throws(() => givenFiles({ '../x': 'a' }), /a \.\. segment/);
    assert.throws(() => givenFiles({ '/etc/x': 'a' }), /an absolute path/);
    assert.throws(() => givenFiles({ x: 5 }), /files\.x must be the file's text or \{base64\}/);
    assert.throws(() => givenFiles({ a: 'x'.repeat(6 * 1024 * 1024), b: 'y'.repeat(6 * 1024 * 1024) }), /exceed 10 MB/);
  });
});
