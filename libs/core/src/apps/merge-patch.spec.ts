import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyMergePatch } from './merge-patch.js';

describe('applyMergePatch (RFC 7386)', () => {
  it('passes the examples of RFC 7386 appendix A', () => {
    const cases: Array<[unknown, unknown, unknown]> = [
      [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
      [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
      [{ a: 'b' }, { a: null }, {}],
      [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
      [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
      [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
      [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
      [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
      [
        ['a', 'b'],
        ['c', 'd'],
        ['c', 'd'],
      ],
      [{ a: 'b' }, ['c'], ['c']],
      [{ a: 'foo' }, null, null],
      [{ a: 'foo' }, 'bar', 'bar'],
      [{ e: null }, { a: 1 }, { e: null, a: 1 }],
      [[1, 2], { a: 'b', c: null }, { a: 'b' }],
      [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    ];
    for (const [target, patch, expected] of cases) {
      assert.deepEqual(
        applyMergePatch(target, patch),
        expected,
        `${JSON.stringify(target)} + ${JSON.stringify(patch)}`,
      );
    }
  });

  it('changes neither input', () => {
    const target = { a: { b: 1 }, list: [1] };
    const patch = { a: { c: 2 }, list: [2] };
    const result = applyMergePatch(target, patch) as { list: number[] };
    result.list.push(3);
    assert.deepEqual(target, { a: { b: 1 }, list: [1] });
    assert.deepEqual(patch, { a: { c: 2 }, list: [2] });
  });
});
