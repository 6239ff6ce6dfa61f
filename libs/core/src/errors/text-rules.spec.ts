import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  findUnsafeText,
  jsonDepthExceeds,
  nameLengthProblem,
  storableJson,
  storableText,
  unsafeTextReason,
} from './text-rules.js';

describe('text rules', () => {
  it('names NUL and unpaired surrogates, accepts paired ones', () => {
    assert.equal(unsafeTextReason('a\u0000b'), 'must not contain NUL characters');
    assert.equal(unsafeTextReason('a\uD800'), 'must not contain unpaired surrogate characters');
    assert.equal(unsafeTextReason('\uDC00a'), 'must not contain unpaired surrogate characters');
    assert.equal(unsafeTextReason('emoji 😀 ok'), null);
    assert.equal(unsafeTextReason('plain'), null);
  });

  it('replaces what storage refuses with U+FFFD, twice in a row the same', () => {
    assert.equal(storableText('a\u0000b\u0000'), 'a\uFFFDb\uFFFD');
    assert.equal(storableText('x\uD800y😀'), 'x\uFFFDy😀');
    assert.equal(storableText('x\uD800y'), 'x\uFFFDy');
    assert.equal(storableText('clean'), 'clean');
  });

  it('makes JSON storable, keys included, without touching literal backslash-u text', () => {
    const json = storableJson({ 'k\u0000': ['a\u0000', 'lone \uDFFF', 'pair 😀'], lit: '\\u0000 stays' });
    assert.deepEqual(JSON.parse(json), { 'k\uFFFD': ['a\uFFFD', 'lone \uFFFD', 'pair 😀'], lit: '\\u0000 stays' });
    assert.ok(!/(?<!\\)(\\\\)*\\u0000/.test(json));
  });

  it('finds the first unsafe string with its field path, without recursion', () => {
    assert.deepEqual(findUnsafeText({ todos: [{ content: 'ok' }, { content: 'x\u0000' }] }, ''), {
      field: 'todos[1].content',
      reason: 'must not contain NUL characters',
    });
    assert.deepEqual(findUnsafeText('a\u0000', 'spaceId'), {
      field: 'spaceId',
      reason: 'must not contain NUL characters',
    });
    assert.equal(findUnsafeText({ a: 1, b: [true, null, 'fine'] }, ''), null);
    let deep: unknown = 'x\uD800';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.equal(findUnsafeText(deep, 'v')?.reason, 'must not contain unpaired surrogate characters');
  });

  it('measures JSON depth in one pass, ignoring brackets inside strings', () => {
    assert.equal(jsonDepthExceeds('[[[]]]', 3), false);
    assert.equal(jsonDepthExceeds('[[[[]]]]', 3), true);
    assert.equal(jsonDepthExceeds('{"a":"[[[[[[\\"[[["}', 1), false);
    assert.equal(jsonDepthExceeds('['.repeat(5000) + ']'.repeat(5000), 64), true);
  });

  it('limits names to 255 UTF-8 bytes', () => {
    assert.equal(nameLengthProblem('a'.repeat(255)), null);
    assert.match(
      nameLengthProblem('é'.repeat(128))!,
      /^Name too long: file and folder names are limited to 255 bytes \(this one has 256\)$/,
    );
  });
});
