import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PADDED_BYTES, SecretMatcher } from './secret-matcher.js';

describe('SecretMatcher', () => {
  const refusedNear = (secret: string): string[] => [
    '',
    secret.slice(0, -1),
    `${secret}x`,
    `${secret}\0`,
    `${secret}\0\0\0`,
    `\0${secret}`,
    secret.toUpperCase() === secret ? secret.toLowerCase() : secret.toUpperCase(),
    'x'.repeat(Buffer.byteLength(secret)),
    'y'.repeat(PADDED_BYTES),
    'z'.repeat(PADDED_BYTES + 1),
    'w'.repeat(10_000),
  ];

  for (const [name, secret] of [
    ['a short secret', 'Correct-Horse-42'],
    ['a secret of non-ASCII characters', 'пароль-密码-🔑'],
    ['a secret of exactly the padded size', 's'.repeat(PADDED_BYTES)],
    ['a secret longer than the padded size (compared by digest)', 'L'.repeat(PADDED_BYTES + 40)],
  ] as const) {
    it(`accepts ${name} and refuses what is near it`, () => {
      const matcher = new SecretMatcher(secret);
      assert.equal(matcher.matches(secret), true);
      for (const candidate of refusedNear(secret)) {
        assert.equal(matcher.matches(candidate), false, JSON.stringify(candidate.slice(0, 40)));
      }
      // A refused candidate leaves nothing behind for the next check.
      assert.equal(matcher.matches(secret), true);
    });
  }

  it('an empty secret matches only the empty candidate', () => {
    const matcher = new SecretMatcher('');
    assert.equal(matcher.matches(''), true);
    assert.equal(matcher.matches('\0'), false);
    assert.equal(matcher.matches('a'), false);
  });
});
