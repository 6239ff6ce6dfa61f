import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unknownPrefixOf } from './base-path.js';

describe('unknownPrefixOf', () => {
  it('finds the prefix before /api/ or /ws', () => {
    assert.equal(unknownPrefixOf('/svc/api/system/version'), '/svc');
    assert.equal(unknownPrefixOf('/a/b/api/spaces'), '/a/b');
    assert.equal(unknownPrefixOf('/svc/ws'), '/svc');
    assert.equal(unknownPrefixOf('/svc/ws?x=1'), '/svc');
  });
  it('leaves served and unrelated paths alone', () => {
    assert.equal(unknownPrefixOf('/api/spaces'), null);
    assert.equal(unknownPrefixOf('/ws'), null);
    assert.equal(unknownPrefixOf('/healthz'), null);
    assert.equal(unknownPrefixOf('/svc/apiary'), null);
    assert.equal(unknownPrefixOf('/svc/wsx'), null);
  });
});
