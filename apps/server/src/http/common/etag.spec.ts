import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { weakEtag } from './etag.js';

describe('weakEtag', () => {
  it("is Express's default weak ETag for a JSON body", () => {
    // What Express 5 answered for this body before (its `etag` generator).
    assert.equal(weakEtag('{"success":true,"data":"0.1.0"}', 'utf8'), 'W/"1f-2VU22W4xmzjhOuZB2r82fE5+iFk"');
  });

  it('counts bytes, not characters, and hashes the UTF-8 bytes of a string', () => {
    const text = '{"name":"café ☕"}';
    assert.equal(weakEtag(text), weakEtag(Buffer.from(text, 'utf8')));
    assert.match(weakEtag(text), /^W\/"14-/); // 20 bytes
  });

  it('hashes a string in another encoding as those bytes', () => {
    assert.equal(weakEtag('caf\u00e9', 'latin1'), weakEtag(Buffer.from('caf\u00e9', 'latin1')));
  });

  it('gives the empty body its well-known tag', () => {
    assert.equal(weakEtag(''), 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"');
  });
});
