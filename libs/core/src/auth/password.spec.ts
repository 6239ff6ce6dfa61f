import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { describe, it } from 'node:test';
import { GENERATED_PASSWORD_LENGTH, generatePassword } from './password.js';

const LOOK_ALIKES = /[0Oo1lI]/;
const RUNS = 2000;

describe('generatePassword', () => {
  it('is 12 characters long', () => {
    assert.equal(GENERATED_PASSWORD_LENGTH, 12);
    for (let i = 0; i < 100; i++) assert.equal(generatePassword(randomInt).length, 12);
  });

  it(`always has an upper-case letter, a lower-case letter and a digit (${RUNS} generations)`, () => {
    for (let i = 0; i < RUNS; i++) {
      const pw = generatePassword(randomInt);
      assert.equal(pw.length, 12, pw);
      assert.match(pw, /[A-Z]/, `no upper-case letter in ${pw}`);
      assert.match(pw, /[a-z]/, `no lower-case letter in ${pw}`);
      assert.match(pw, /[0-9]/, `no digit in ${pw}`);
      assert.match(pw, /^[A-Za-z0-9]+$/, `unexpected character in ${pw}`);
    }
  });

  it(`never contains the look-alikes 0 O o 1 l I (${RUNS} generations)`, () => {
    for (let i = 0; i < RUNS; i++) {
      const pw = generatePassword(randomInt);
      assert.doesNotMatch(pw, LOOK_ALIKES, `look-alike in ${pw}`);
    }
  });

  it('keeps the guarantees even with a degenerate random source', () => {
    for (const source of [() => 0, (max: number) => max - 1]) {
      const pw = generatePassword(source);
      assert.equal(pw.length, 12);
      assert.match(pw, /[A-Z]/);
      assert.match(pw, /[a-z]/);
      assert.match(pw, /[0-9]/);
      assert.doesNotMatch(pw, LOOK_ALIKES);
    }
  });

  it('asks the random source only for values in range and produces varied output', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      seen.add(
        generatePassword((max) => {
          assert.ok(Number.isInteger(max) && max > 0, `bad max ${max}`);
          return randomInt(max);
        }),
      );
    }
    assert.ok(seen.size > 195, `only ${seen.size} distinct passwords out of 200`);
  });
});
