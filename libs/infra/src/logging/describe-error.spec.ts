import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeError } from './describe-error.js';

describe('describeError', () => {
  it('never answers [object Object]', () => {
    assert.equal(describeError(new Error('boom')), 'boom');
    assert.equal(
      describeError(Object.assign(new Error('write failed'), { code: 'ENOSPC', syscall: 'open' })),
      'write failed (code ENOSPC, syscall open)',
    );
    class ErrnoError {
      name = 'ErrnoError';
      errno = 28;
    }
    assert.equal(describeError(new ErrnoError()), 'ErrnoError (errno 28)');
    assert.equal(describeError({ reason: 'disk' }), '{"reason":"disk"}');
    assert.equal(describeError(new Error('outer', { cause: new Error('inner') })), 'outer — caused by: inner');
    assert.equal(describeError('plain'), 'plain');
    assert.doesNotMatch(describeError({}), /object Object/);
  });
});
