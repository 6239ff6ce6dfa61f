import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import picomatch from 'picomatch';
import { compileGlob, expandBraces, GlobPatternError, globPatternProblem } from './glob.js';

const PATHS = [
  'a.md',
  '.hidden.md',
  'docs/a.md',
  'docs/deep/b.md',
  'docs/deep/.x/c.md',
  'src/index.ts',
  'src/lib/util.test.ts',
  'src',
  'README',
  'a',
  'ab',
  'abc',
  'a/b',
  'a/b/c',
  'x[1].txt',
  'file-9.log',
  'file-a.log',
  'weird name.txt',
];

const PATTERNS = [
  '*.md',
  '**/*.md',
  'docs/**',
  'docs/**/*.md',
  '**',
  '*',
  'src/*.ts',
  'src/**/*.ts',
  '**/*.{ts,md}',
  '{src,docs}/**',
  'a?c',
  'a*',
  'a/**',
  'a/**/c',
  '**/b',
  'file-[0-9].log',
  'file-[^a].log',
  'x\\[1\\].txt',
  '*name*',
  '!*.md',
  'docs/*/b.md',
  '**/deep/**',
];

describe('compileGlob', () => {
  it('agrees with picomatch (dotfiles included) on ordinary patterns', () => {
    for (const pattern of PATTERNS) {
      const ours = compileGlob(pattern);
      const theirs = picomatch(pattern, { dot: true });
      for (const path of PATHS) {
        assert.equal(ours(path), theirs(path), `${pattern} against ${path}`);
      }
    }
  });

  it('a class negated with ! or ^ matches any other character', () => {
    assert.equal(compileGlob('file-[!0-9].log')('file-9.log'), false);
    assert.equal(compileGlob('file-[!0-9].log')('file-a.log'), true);
    assert.equal(compileGlob('file-[^a].log')('file-a.log'), false);
  });

  it('matchBase: a pattern without a slash matches the file name at any depth', () => {
    const md = compileGlob('*.md', { matchBase: true });
    assert.equal(md('docs/deep/b.md'), true);
    assert.equal(md('docs/b.txt'), false);
    assert.equal(compileGlob('docs/*.md', { matchBase: true })('x/docs/a.md'), false);
  });

  it('takes linear time on patterns that make a backtracking matcher run for minutes', () => {
    const started = Date.now();
    const stars = compileGlob(`${'*a'.repeat(40)}*b`);
    assert.equal(stars('a'.repeat(4_000)), false);
    assert.equal(compileGlob('**/**/**/**/**/**/**/**/x')(`${'a/'.repeat(500)}y`), false);
    assert.equal(compileGlob('*a*a*a*a*a*a*a*a*a*a*b')('a'.repeat(60)), false);
    assert.equal(compileGlob('*a*a*a*a*a*a*a*a*a*a*b')(`${'a'.repeat(60)}b`), true);
    assert.ok(Date.now() - started < 1_000, `took ${Date.now() - started} ms`);
  });

  it('refuses patterns too large to compile', () => {
    assert.throws(() => compileGlob('a'.repeat(1_001)), GlobPatternError);
    assert.throws(() => compileGlob('{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}'), GlobPatternError);
    assert.match(globPatternProblem('{a,b}'.repeat(9)) ?? '', /alternatives/);
    assert.equal(globPatternProblem('**/*.md'), null);
  });

  it('expands braces, nested; a lone brace is a plain character', () => {
    assert.deepEqual(expandBraces('a{b,c{d,e}}f'), ['abf', 'acdf', 'acef']);
    assert.equal(compileGlob('{x}')('{x}'), true);
    assert.equal(compileGlob('a{b')('a{b'), true);
  });
});
