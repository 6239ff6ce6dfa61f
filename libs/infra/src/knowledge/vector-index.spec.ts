import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VectorIndexCache, VectorMatrix } from './vector-index.js';

/** A deterministic unit vector. */
function unit(seed: number, dims: number): number[] {
  let s = seed >>> 0;
  const v = Array.from({ length: dims }, () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  });
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const id = (i: number) => `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`;

/** What the SQL scan computes: `real` values, products and an ordered sum in double precision. */
function sqlScore(row: number[], query: number[]): number {
  let s = 0;
  for (let d = 0; d < row.length; d++) s += Math.fround(row[d]!) * Math.fround(query[d]!);
  return s;
}

describe('VectorMatrix', () => {
  it('answers the top rows by dot product with the scores and order of the SQL scan', () => {
    const rows = Array.from({ length: 500 }, (_, i) => ({ id: id(i), vector: unit(i + 1, 16) }));
    const matrix = VectorMatrix.from(16, rows);
    const query = unit(999, 16);
    const expected = rows
      .map((r) => ({ id: r.id, score: sqlScore(r.vector, query) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, 12);
    assert.deepEqual(matrix.top(query, 12), expected);
  });

  it('orders equal scores by id, and skips rows of another length', () => {
    const v = unit(5, 4);
    const matrix = VectorMatrix.from(4, [
      { id: id(3), vector: v },
      { id: id(1), vector: v },
      { id: id(9), vector: unit(6, 8) },
      { id: id(2), vector: v },
    ]);
    assert.equal(matrix.count, 3);
    assert.deepEqual(
      matrix.top(v, 10).map((h) => h.id),
      [id(1), id(2), id(3)],
    );
    assert.deepEqual(
      matrix.top(v, 2).map((h) => h.id),
      [id(1), id(2)],
    );
    assert.deepEqual(matrix.top(unit(1, 3), 5), [], 'a query of another length finds nothing');
  });
});

describe('VectorIndexCache', () => {
  const rows = (n: number, dims: number) => Array.from({ length: n }, (_, i) => ({ id: id(i), vector: unit(i, dims) }));

  it('loads a base once per version, and again when its version changes', async () => {
    const loads: string[] = [];
    const cache = new VectorIndexCache(1 << 20, async (kbId, dims) => {
      loads.push(kbId);
      return VectorMatrix.from(dims, rows(10, dims));
    });
    const [a, b] = await Promise.all([cache.matrix('kb1', '1', 8), cache.matrix('kb1', '1', 8)]);
    assert.equal(a, b, 'concurrent searches share one load');
    assert.equal(await cache.matrix('kb1', '1', 8), a);
    assert.deepEqual(loads, ['kb1']);
    assert.notEqual(await cache.matrix('kb1', '2', 8), a);
    assert.deepEqual(loads, ['kb1', 'kb1']);
  });

  it('answers null for a base over the cap (the caller scans in SQL) and drops the least recently used', async () => {
    const size = VectorMatrix.bytesFor(100, 8);
    const loads: string[] = [];
    const cache = new VectorIndexCache(size * 2, async (kbId, dims, maxBytes) => {
      loads.push(kbId);
      const n = kbId === 'big' ? 300 : 100;
      return VectorMatrix.bytesFor(n, dims) > maxBytes ? null : VectorMatrix.from(dims, rows(n, dims));
    });
    assert.equal(await cache.matrix('big', '1', 8), null);
    assert.equal(await cache.matrix('big', '1', 8), null);
    assert.deepEqual(loads, ['big'], 'not tried again at the same version');
    await cache.matrix('a', '1', 8);
    await cache.matrix('b', '1', 8);
    await cache.matrix('a', '1', 8);
    await cache.matrix('c', '1', 8);
    assert.ok(cache.heldBytes <= size * 2);
    loads.length = 0;
    await cache.matrix('a', '1', 8);
    assert.deepEqual(loads, [], 'the recently used one is kept');
    await cache.matrix('b', '1', 8);
    assert.deepEqual(loads, ['b'], 'the least recently used one was dropped');
  });

  it('holds nothing with a cap of 0', async () => {
    const cache = new VectorIndexCache(0, async (_kbId, dims) => VectorMatrix.from(dims, rows(1, dims)));
    assert.equal(await cache.matrix('kb', '1', 8), null);
  });
});
