import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { orderParentsFirst } from './move-to-postgres.js';

describe('orderParentsFirst', () => {
  it('puts every referenced table before the tables that reference it', () => {
    const order = orderParentsFirst(
      ['a_chunk', 'b_source', 'c_base', 'd_alone'],
      [
        { child: 'a_chunk', parent: 'b_source' },
        { child: 'b_source', parent: 'c_base' },
        { child: 'a_chunk', parent: 'c_base' },
      ],
    );
    assert.deepEqual(order, ['c_base', 'b_source', 'a_chunk', 'd_alone']);
  });

  it('keeps a self-reference and a cycle without looping, each table once', () => {
    const order = orderParentsFirst(
      ['x', 'y', 'z'],
      [
        { child: 'x', parent: 'x' },
        { child: 'y', parent: 'z' },
        { child: 'z', parent: 'y' },
      ],
    );
    assert.deepEqual([...order].sort(), ['x', 'y', 'z']);
    assert.equal(order.length, 3);
  });
});
