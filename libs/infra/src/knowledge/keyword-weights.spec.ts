import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keywordPlan, unquoteLexeme } from './keyword-weights.js';

describe('keyword query weights', () => {
  it('weighs a word held by few chunks above one held by many (BM25 inverse document frequency)', () => {
    const { idf } = keywordPlan(["'the'", "'finch'", "'year'"], [1000, 1, 300], 10_000, 2000, 8);
    assert.ok(idf[1]! > idf[2]! && idf[2]! > idf[0]!, JSON.stringify(idf));
    assert.ok(idf[1]! > idf[0]! + idf[2]!, 'one rare word outweighs two common ones');
    assert.ok(idf.every((x) => x > 0));
  });

  it('ranks every match of the rarest words first, within the candidate budget; the rest goes to the others', () => {
    const w = keywordPlan(["'a'", "'b'", "'c'", "'d'", "'e'"], [1000, 5, 0, 900, 1200], 50_000, 2000, 8);
    assert.deepEqual(w.rare, ["'b'", "'d'", "'a'"]);
    assert.deepEqual(w.others, ["'e'"]);
    // 'e' weighs less than each rare word: the 1,000 chunks of 'a' alone fill the 8 hits.
    assert.equal(w.othersBudget, 0);
    assert.equal(keywordPlan(["'a'", "'b'", "'e'"], [1000, 5, 1200], 50_000, 2000, 8).othersBudget, 0);
    assert.equal(keywordPlan(["'a'", "'e'", "'f'"], [1000, 1200, 1300], 50_000, 2000, 8).othersBudget, 1000);
    const none = keywordPlan(["'x'", "'y'"], [2500, 3000], 50_000, 2000, 8);
    assert.deepEqual([none.rare, none.others, none.othersBudget], [[], ["'x'", "'y'"], 2000]);
    const all = keywordPlan(["'x'", "'y'"], [1500, 400], 50_000, 2000, 8);
    assert.deepEqual([all.rare, all.others, all.othersBudget], [["'y'", "'x'"], [], 0]);
  });

  it('ranks no more other chunks than may fill the hits left when the rare words outweigh the others', () => {
    // 'm' (10 chunks of 100,000) outweighs the two words in 90% of them: 8 hits come from its chunks alone.
    const counts = [90_000, 90_000, 10];
    const dominated = keywordPlan(["'w1'", "'w2'", "'m'"], counts, 100_000, 2000, 8);
    assert.deepEqual([dominated.rare, dominated.othersBudget], [["'m'"], 0]);
    // 40 wanted: the other words' chunks fill the 30 the rare word leaves.
    assert.equal(keywordPlan(["'w1'", "'w2'", "'m'"], counts, 100_000, 2000, 40).othersBudget, 30);
    // Other words that together may outweigh the rare one: the whole rest of the budget.
    const close = keywordPlan(["'a'", "'b'", "'c'", "'r'"], [2100, 2100, 2100, 1500], 3000, 2000, 8);
    assert.deepEqual([close.rare, close.othersBudget], [["'r'"], 500]);
  });

  it('counts every chunk searched at least as many as a word is in (a base written to meanwhile)', () => {
    const { idf } = keywordPlan(["'a'"], [10], 3, 2000, 8);
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
