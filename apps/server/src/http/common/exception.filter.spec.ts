import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ArgumentsHost } from '@nestjs/common';
import { BadRequestException, NotFoundException } from '@nestjs/common';
import { type ErrorCode, ErrorCodes, type ErrorKind } from '#contracts/errors.js';
import { DomainError } from '#core/errors/domain-error.js';
import { AppLogger, createPino } from '#infra/logging/logger.js';
import { DATABASE_UNAVAILABLE, HttpExceptionFilter } from './exception.filter.js';

interface Captured {
  status?: number;
  body?: unknown;
  headers: Record<string, string>;
  type?: string;
}

function hostFor(method = 'GET'): { host: ArgumentsHost; captured: Captured } {
  const captured: Captured = { headers: {} };
  const res = {
    headersSent: false,
    status(code: number) {
      captured.status = code;
      return this;
    },
    json(body: unknown) {
      captured.body = body;
      return this;
    },
    send(body: unknown) {
      captured.body = body;
      return this;
    },
    type(t: string) {
      captured.type = t;
      return this;
    },
    setHeader(name: string, value: string) {
      captured.headers[name] = value;
    },
  };
  const req = { method, id: 'req-1', path: '/spaces/some-page', headers: {} };
  const host = { switchToHttp: () => ({ getResponse: () => res, getRequest: () => req }) } as unknown as ArgumentsHost;
  return { host, captured };
}

const silent = new AppLogger(createPino('error', { write: () => true } as unknown as NodeJS.WritableStream));
const filter = new HttpExceptionFilter(silent, '');

describe('HttpExceptionFilter', () => {
  const cases: Array<[ErrorKind, number, ErrorCode | undefined]> = [
    ['invalid', 400, undefined],
    ['unauthorized', 401, undefined],
    ['forbidden', 403, ErrorCodes.MCP_COMMAND_BLOCKED],
    ['not_found', 404, undefined],
    ['conflict', 409, ErrorCodes.ALREADY_INSTALLED],
    ['too_large', 413, undefined],
    ['unprocessable', 422, undefined],
    ['locked', 429, ErrorCodes.LOCKED],
    ['unavailable', 503, ErrorCodes.NOT_INITIALIZED],
  ];
  for (const [kind, status, code] of cases) {
    it(`maps ${kind} to ${status}${code ? ` with code ${code}` : ''}`, () => {
      const { host, captured } = hostFor();
      filter.catch(new DomainError(kind, `failure ${kind}`, code), host);
      assert.equal(captured.status, status);
      assert.deepEqual(
        captured.body,
        code ? { success: false, error: `failure ${kind}`, code } : { success: false, error: `failure ${kind}` },
      );
    });
  }

  it('sets Retry-After from a lockout', () => {
    const { host, captured } = hostFor();
    filter.catch(new DomainError('locked', 'locked', ErrorCodes.LOCKED, { retryAfterSeconds: 42 }), host);
    assert.equal(captured.headers['Retry-After'], '42');
  });

  it('wraps framework errors in the envelope', () => {
    const { host, captured } = hostFor();
    filter.catch(new BadRequestException('name must be a string'), host);
    assert.deepEqual([captured.status, captured.body], [400, { success: false, error: 'name must be a string' }]);
  });

  it('hides internal errors behind a 500 envelope', () => {
    const { host, captured } = hostFor();
    filter.catch(new Error('secret internals at /srv/x'), host);
    assert.deepEqual([captured.status, captured.body], [500, { success: false, error: 'Internal server error' }]);
  });

  it('answers 503 NOT_INITIALIZED while the database is away, however the driver says it', () => {
    const failures = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('query failed'), { driverError: { code: '57P01', message: 'terminating connection' } }),
      Object.assign(new Error('could not extend file "base/1/2": No space left on device'), { code: '53100' }),
    ];
    for (const err of failures) {
      const { host, captured } = hostFor();
      filter.catch(err, host);
      assert.deepEqual(
        [captured.status, captured.body, captured.headers['Retry-After']],
        [503, { success: false, error: DATABASE_UNAVAILABLE, code: ErrorCodes.NOT_INITIALIZED }, '5'],
        err.message,
      );
    }
    const { host, captured } = hostFor();
    filter.catch(Object.assign(new Error('syntax error'), { code: '42601' }), host);
    assert.equal(captured.status, 500);
  });

  it('answers unknown routes with the page for GET and a plain 404 otherwise', () => {
    const get = hostFor('GET');
    filter.catch(new NotFoundException(), get.host);
    assert.equal(get.captured.status, 200);
    assert.match(get.captured.type ?? '', /html/);
    const post = hostFor('POST');
    filter.catch(new NotFoundException(), post.host);
    assert.deepEqual([post.captured.status, post.captured.body, post.captured.type], [404, 'Not Found', 'text/plain']);
  });
});
