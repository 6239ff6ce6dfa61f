import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAbsolute, relative } from 'node:path';
import type { GuardedPath } from '../ports/file-store.port.js';
import {
  childOf,
  findRoot,
  hasNulByte,
  isInside,
  isNormalizedAbsolute,
  isPlainName,
  isSelfOrDescendant,
  isInServiceFolder,
  searchPatternProblem,
  movedPath,
  normalizeRequest,
  relativeInside,
} from './path-rules.js';

describe('path rules (the lexical half of the path guard)', () => {
  describe('normalizeRequest', () => {
    it('resolves dot segments of absolute paths', () => {
      assert.equal(normalizeRequest('/s/a/../b/./c'), '/s/b/c');
      assert.equal(normalizeRequest('/s/a/../../../etc/passwd'), '/etc/passwd');
      assert.equal(normalizeRequest('/s//a///b/'), '/s/a/b');
    });

    it('takes relative paths from the base, and refuses them without one', () => {
      assert.equal(normalizeRequest('a/b.txt', '/s'), '/s/a/b.txt');
      assert.equal(normalizeRequest('../x', '/s/space'), '/s/x');
      assert.equal(normalizeRequest('a/b.txt'), null);
      assert.equal(normalizeRequest('a', 'relative-base'), null);
    });

    it('refuses NUL bytes', () => {
      assert.equal(hasNulByte('/s/a\0b'), true);
      assert.equal(normalizeRequest('/s/a\0/../b'), null);
      assert.equal(normalizeRequest('a\0', '/s'), null);
    });

    it('keeps an absolute path elsewhere absolute (containment decides, not normalization)', () => {
      assert.equal(normalizeRequest('/etc/passwd', '/s'), '/etc/passwd');
    });
  });

  describe('containment', () => {
    it('accepts paths below the root and refuses the rest', () => {
      assert.equal(isInside('/s', '/s/a'), true);
      assert.equal(isInside('/s', '/s/a/b/c'), true);
      assert.equal(isInside('/s', '/etc/passwd'), false);
      assert.equal(isInside('/s', '/'), false);
      assert.equal(isInside('/s/space', '/s/space-other/x'), false, 'a sibling sharing the prefix');
      assert.equal(isInside('/s/space', '/s'), false);
    });

    it('answers what path.relative answers, for normalized paths and any others', () => {
      const paths = [
        '/',
        '/s',
        '/s/',
        '/s/a',
        '/s/a/',
        '/s//a',
        '/s/./a',
        '/s/../s/a',
        '/s/.hidden',
        '/s/..x',
        '/s/a/..',
        '/s/a/.',
        '/sa',
        '/s-other/a',
        '/t/s/a',
        'relative/s',
      ];
      for (const root of paths) {
        for (const target of paths) {
          const rel = relative(root, target);
          const expected = rel === '' ? '' : isAbsolute(rel) || rel === '..' || rel.startsWith('../') ? null : rel;
          assert.equal(relativeInside(root, target), expected, `${root} ${target}`);
        }
      }
      assert.deepEqual(paths.filter(isNormalizedAbsolute), [
        '/',
        '/s',
        '/s/a',
        '/s/.hidden',
        '/s/..x',
        '/sa',
        '/s-other/a',
        '/t/s/a',
      ]);
    });

    it('accepts the root itself only when asked to', () => {
      assert.equal(isInside('/s', '/s'), false);
      assert.equal(isInside('/s', '/s', true), true);
    });

    it('treats names that merely start with two dots as inside', () => {
      assert.equal(isInside('/s', '/s/..hidden'), true);
      assert.equal(relativeInside('/s', '/s/..hidden/x'), '..hidden/x');
      assert.equal(relativeInside('/s', '/s/../x'), null);
    });

    it('finds the root a path lies in', () => {
      const roots = ['/data/spaces/a', '/data/spaces/b'];
      assert.equal(findRoot(roots, '/data/spaces/b/file'), '/data/spaces/b');
      assert.equal(findRoot(roots, '/data/spaces/c/file'), null);
      assert.equal(findRoot(roots, '/data/spaces/a'), null);
      assert.equal(findRoot(roots, '/data/spaces/a', true), '/data/spaces/a');
      assert.equal(findRoot([], '/anything', true), null);
    });
  });

  it('recognizes the service folder at the top of a root and everything inside it', () => {
    assert.equal(isInServiceFolder('/s', '/s/.svc'), true);
    assert.equal(isInServiceFolder('/s', '/s/.svc/memory.md'), true);
    assert.equal(isInServiceFolder('/s', '/s/.svc/memory/topics/a.md'), true);
    assert.equal(isInServiceFolder('/s', '/s/.svcx'), false);
    assert.equal(isInServiceFolder('/s', '/s/sub/.svc'), false);
    assert.equal(isInServiceFolder('/s', '/s'), false);
    assert.equal(isInServiceFolder('/s', '/other/.svc'), false);
  });

  it('refuses search patterns that name places outside the workspace', () => {
    for (const ok of ['**/*.ts', '*.md', 'src/**', '..hidden/*', 'a..b', '{a,b}/*.txt', '.env']) {
      assert.equal(searchPatternProblem(ok), null, ok);
    }
    for (const bad of [
      '../*',
      '../../**',
      'a/../../x',
      '..',
      '..\\..',
      'a\\..\\b',
      '{..,x}/*',
      '/etc/pass*',
      '\\etc',
      '~/x',
      'C:/x',
      'a\0b',
    ]) {
      assert.notEqual(searchPatternProblem(bad), null, bad);
    }
  });

  it('accepts plain names only', () => {
    for (const ok of ['a.txt', 'notes', '.env', '..hidden', 'a b', 'é.md']) assert.equal(isPlainName(ok), true, ok);
    for (const bad of ['', '.', '..', 'a/b', '../x', '/abs', 'a\\b', 'a\0b', 'x'.repeat(256)]) {
      assert.equal(isPlainName(bad), false, JSON.stringify(bad));
    }
  });

  it('detects moving a folder into itself or below it', () => {
    assert.equal(isSelfOrDescendant('/s/a', '/s/a'), true);
    assert.equal(isSelfOrDescendant('/s/a', '/s/a/b/c'), true);
    assert.equal(isSelfOrDescendant('/s/a', '/s/ab'), false);
    assert.equal(isSelfOrDescendant('/s/a', '/s'), false);
    assert.equal(movedPath('/s/a/file.txt', '/s/b'), '/s/b/file.txt');
  });

  it('derives a listed child from its folder', () => {
    const folder: GuardedPath = {
      root: '/link/space',
      realRoot: '/real/space',
      path: '/link/space/docs',
      relativePath: 'docs',
      entry: '/real/space/docs',
      real: '/real/space/docs',
    };
    assert.deepEqual(childOf(folder, 'a.md'), {
      root: '/link/space',
      realRoot: '/real/space',
      path: '/link/space/docs/a.md',
      relativePath: 'docs/a.md',
      entry: '/real/space/docs/a.md',
      real: '/real/space/docs/a.md',
    });
    const top = childOf(
      { ...folder, path: '/link/space', relativePath: '', entry: '/real/space', real: '/real/space' },
      'x',
    );
    assert.equal(top.relativePath, 'x');
  });
});
