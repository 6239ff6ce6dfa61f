import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_CODE_BY_KIND,
  type ErrorKind,
  ErrorCodes,
  PUBLIC_ERROR_CODES,
  STATUS_BY_KIND,
} from '#contracts/errors.js';
import { DomainError } from './domain-error.js';

describe('error-code catalogue', () => {
  it('names each code by itself', () => {
    for (const [key, code] of Object.entries(ErrorCodes)) assert.equal(code, key);
  });

  it('sends in the envelope only the codes it always sent', () => {
    assert.deepEqual([...PUBLIC_ERROR_CODES].sort(), [
      'ALREADY_INSTALLED',
      'INVALID_YAML',
      'LOCKED',
      'MCP_COMMAND_BLOCKED',
      'NOT_INITIALIZED',
      'PUBLISHING_UNAVAILABLE',
      'VALIDATION_FAILED',
    ]);
  });

  it('has a default for every kind, none of them public', () => {
    for (const kind of Object.keys(STATUS_BY_KIND) as ErrorKind[]) {
      const code = DEFAULT_CODE_BY_KIND[kind];
      assert.ok(Object.values(ErrorCodes).includes(code), kind);
      assert.ok(!PUBLIC_ERROR_CODES.has(code), `${kind}: ${code}`);
    }
  });
});

describe('DomainError', () => {
  it('carries a catalogue code: the one given, else its kind default', () => {
    assert.equal(DomainError.notFound('App not found: x', ErrorCodes.APP_NOT_FOUND).reason, 'APP_NOT_FOUND');
    assert.equal(DomainError.notFound('gone').reason, 'NOT_FOUND');
    assert.equal(DomainError.invalid('bad').reason, 'INVALID_REQUEST');
    assert.equal(new DomainError('conflict', 'taken').reason, 'CONFLICT');
    assert.equal(DomainError.conflict('taken', ErrorCodes.SPACE_BUSY).kind, 'conflict');
  });

  it('shows a code in the envelope only where it is a public one', () => {
    assert.equal(DomainError.notFound('App not found: x', ErrorCodes.APP_NOT_FOUND).code, undefined);
    assert.equal(DomainError.invalid('bad').code, undefined);
    const blocked = DomainError.forbidden('blocked', ErrorCodes.MCP_COMMAND_BLOCKED);
    assert.equal(blocked.code, 'MCP_COMMAND_BLOCKED');
    assert.equal(blocked.reason, 'MCP_COMMAND_BLOCKED');
    const locked = new DomainError('locked', 'wait', ErrorCodes.LOCKED, { retryAfterSeconds: 3 });
    assert.equal(locked.code, 'LOCKED');
    assert.deepEqual(locked.details, { retryAfterSeconds: 3 });
  });
});
