import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lexemeWeights, unquoteLexeme } from './keyword-weights.js';

describe('keyword query weights', () => {
  it('weighs a word held by few chunks above one held by many (BM25 inverse document frequency)', () => {
    const { idf } = lexemeWeights(["'the'", "'finch'", "'year'"], [1000, 1, 300], 10_000, 1000, 2000);
    assert.ok(idf[1]! > idf[2]! && idf[2]! > idf[0]!, JSON.stringify(idf));
    assert.ok(idf[1]! > idf[0]! + idf[2]!, 'one rare word outweighs two common ones');
    assert.ok(idf.every((x) => x > 0));
  });

  it('ranks every match of the rarest words first, within the candidate budget; a capped count is never rare', () => {
    const w = lexemeWeights(["'a'", "'b'", "'c'", "'d'", "'e'"], [1000, 5, 0, 900, 1200], 50_000, 1000, 2000);
    assert.deepEqual(w.rare, ["'b'", "'d'"]);
    assert.deepEqual(lexemeWeights(["'x'", "'y'"], [1000, 1000], 50_000, 1000, 2000).rare, []);
    assert.deepEqual(lexemeWeights(["'x'", "'y'"], [1500, 900], 50_000, 2000, 2000).rare, ["'y'"]);
  });

  it('counts every chunk searched at least as many as a word is in (a base written to meanwhile)', () => {
    const { idf } = lexemeWeights(["'a'"], [10], 3, 1000, 2000);
    assert.ok(Number.isFinite(idf[0]!) && idf[0]! > 0);
  });
});

describe('tsquery lexemes unquoted', () => {
  it('gives back the text of a quoted lexeme', () => {
    assert.equal(unquoteLexeme("'finch'"), 'finch');
    assert.equal(unquoteLexeme("'it''s'"), "it's");
    assert.equal(unquoteLexeme("'a\\\\b'"), 'a\\b');
    assert.equal(unquoteLexeme("'年假'"), '年假');
  });
});
