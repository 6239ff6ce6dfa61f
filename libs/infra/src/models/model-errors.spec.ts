import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyFailure, isNetworkFailure, kindForStatus, retryAfterMs, rootMessage } from './model-errors.js';

const headers = (values: Record<string, string>) => new Headers(values);

describe('kindForStatus', () => {
  const cases: Array<[number, string, boolean]> = [
    [400, 'invalid_request', false],
    [401, 'authentication_failed', false],
    [402, 'billing_error', false],
    [403, 'authentication_failed', false],
    [404, 'invalid_request', false],
    [408, 'server_error', true],
    [409, 'server_error', true],
    [413, 'invalid_request', false],
    [418, 'invalid_request', false],
    [422, 'invalid_request', false],
    [429, 'rate_limit', true],
    [500, 'server_error', true],
    [502, 'server_error', true],
    [503, 'server_error', true],
    [529, 'server_error', true],
  ];
  for (const [status, kind, retryable] of cases) {
    it(`${status} → ${kind}${retryable ? ', retryable' : ''}`, () => {
      assert.deepEqual(kindForStatus(status), { kind, retryable });
    });
  }
});

describe('classifyFailure', () => {
  it('keeps the status, the provider message and retry-after', () => {
    const error = classifyFailure({
      provider: 'Anthropic',
      status: 429,
      type: 'rate_limit_error',
      message: 'Number of requests exceeded',
      headers: headers({ 'retry-after': '12' }),
    });
    assert.equal(error.kind, 'rate_limit');
    assert.equal(error.status, 429);
    assert.equal(error.retryable, true);
    assert.equal(error.retryAfterMs, 12_000);
    assert.equal(error.message, 'Anthropic error (429 rate_limit_error): Number of requests exceeded');
  });

  it('an in-stream error is classified by its type', () => {
    const overloaded = classifyFailure({
      provider: 'A',
      status: null,
      type: 'overloaded_error',
      message: 'Overloaded',
    });
    assert.deepEqual([overloaded.kind, overloaded.status, overloaded.retryable], ['server_error', 529, true]);
    const auth = classifyFailure({ provider: 'A', status: null, type: 'authentication_error', message: 'x' });
    assert.deepEqual([auth.kind, auth.retryable], ['authentication_failed', false]);
    const tooLarge = classifyFailure({ provider: 'A', status: null, type: 'request_too_large', message: 'x' });
    assert.deepEqual([tooLarge.kind, tooLarge.status], ['invalid_request', 413]);
  });

  it('an in-stream error with a numeric code (routers) uses it as the status', () => {
    const error = classifyFailure({ provider: 'O', status: null, type: null, code: 502, message: 'upstream' });
    assert.deepEqual([error.kind, error.status, error.retryable], ['server_error', 502, true]);
  });

  it('an in-stream error nobody can read is a retryable server error', () => {
    const error = classifyFailure({ provider: 'O', status: null, type: 'something_new', message: 'hm' });
    assert.deepEqual([error.kind, error.status, error.retryable], ['server_error', null, true]);
  });

  it('quota and billing problems are billing errors, whatever the status', () => {
    const quota = classifyFailure({
      provider: 'O',
      status: 429,
      type: 'insufficient_quota',
      code: 'insufficient_quota',
      message: 'quota',
    });
    assert.deepEqual([quota.kind, quota.retryable], ['billing_error', false]);
    const credit = classifyFailure({
      provider: 'A',
      status: 400,
      type: 'billing_error',
      message: 'credit balance too low',
    });
    assert.deepEqual([credit.kind, credit.retryable], ['billing_error', false]);
  });

  it('x-should-retry overrides the default', () => {
    const no = classifyFailure({
      provider: 'A',
      status: 500,
      message: 'x',
      headers: headers({ 'x-should-retry': 'false' }),
    });
    assert.equal(no.retryable, false);
    const yes = classifyFailure({
      provider: 'A',
      status: 400,
      message: 'x',
      headers: headers({ 'x-should-retry': 'true' }),
    });
    assert.equal(yes.retryable, true);
    const auth = classifyFailure({
      provider: 'A',
      status: 401,
      message: 'x',
      headers: headers({ 'x-should-retry': 'true' }),
    });
    assert.equal(auth.retryable, false);
  });
});

describe('retryAfterMs', () => {
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);
  it('reads retry-after-ms first, then retry-after seconds or date', () => {
    assert.equal(retryAfterMs(headers({ 'retry-after-ms': '250.4', 'retry-after': '9' }), now), 250);
    assert.equal(retryAfterMs(headers({ 'retry-after': '1.5' }), now), 1500);
    assert.equal(retryAfterMs(headers({ 'retry-after': new Date(now + 30_000).toUTCString() }), now), 30_000);
    assert.equal(retryAfterMs(headers({ 'retry-after': new Date(now - 30_000).toUTCString() }), now), 0);
  });
  it('ignores missing, negative and unreadable values', () => {
    assert.equal(retryAfterMs(headers({}), now), undefined);
    assert.equal(retryAfterMs(headers({ 'retry-after': 'soon' }), now), undefined);
    assert.equal(retryAfterMs(headers({ 'retry-after': '-3' }), now), undefined);
    assert.equal(retryAfterMs(headers({ 'retry-after-ms': 'x', 'retry-after': '2' }), now), 2000);
  });
});

describe('isNetworkFailure', () => {
  it('finds transport errors anywhere in the cause chain', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    assert.equal(isNetworkFailure(new TypeError('fetch failed', { cause: refused })), true);
    assert.equal(isNetworkFailure(new TypeError('terminated')), true);
    const socket = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    assert.equal(isNetworkFailure(new Error('wrapped', { cause: socket })), true);
    assert.equal(
      rootMessage(new TypeError('fetch failed', { cause: refused })),
      'fetch failed (connect ECONNREFUSED 127.0.0.1:9)',
    );
  });
  it('does not take other errors for network ones', () => {
    assert.equal(isNetworkFailure(new Error('boom')), false);
    assert.equal(isNetworkFailure(new SyntaxError('Unexpected token')), false);
    assert.equal(isNetworkFailure('text'), false);
  });
});
