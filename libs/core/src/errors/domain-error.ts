import {
  DEFAULT_CODE_BY_KIND,
  type ErrorCode,
  type ErrorKind,
  isPublicErrorCode,
  type PublicErrorCode,
} from '#contracts/errors.js';

/**
 * The only error services throw on purpose. The HTTP layer maps `kind` to a status
 * code and `message` / `code` to the failure envelope; nothing in core knows HTTP.
 *
 * Every one carries a code of the catalogue (`libs/contracts/src/errors.ts`) as its `reason`:
 * the one given, else its kind's default. `code` is that code only where clients get it
 * (PUBLIC_ERROR_CODES), so the envelope shows the codes it always showed and no others.
 */
export class DomainError extends Error {
  /** What failed, from the catalogue: for logs, metrics and callers inside the server. */
  readonly reason: ErrorCode;
  /** The envelope's `code`: the reason where it is a public code, else absent. */
  readonly code?: PublicErrorCode;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    reason: ErrorCode = DEFAULT_CODE_BY_KIND[kind],
    /** Extra facts for the transport, e.g. `retryAfterSeconds` for a lockout. */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.reason = reason;
    if (isPublicErrorCode(reason)) this.code = reason;
  }

  static invalid(message: string, reason: ErrorCode = DEFAULT_CODE_BY_KIND.invalid): DomainError {
    return new DomainError('invalid', message, reason);
  }

  static notFound(message: string, reason: ErrorCode = DEFAULT_CODE_BY_KIND.not_found): DomainError {
    return new DomainError('not_found', message, reason);
  }

  static forbidden(message: string, reason: ErrorCode = DEFAULT_CODE_BY_KIND.forbidden): DomainError {
    return new DomainError('forbidden', message, reason);
  }

  static unauthorized(message: string, reason: ErrorCode = DEFAULT_CODE_BY_KIND.unauthorized): DomainError {
    return new DomainError('unauthorized', message, reason);
  }

  static conflict(message: string, reason: ErrorCode = DEFAULT_CODE_BY_KIND.conflict): DomainError {
    return new DomainError('conflict', message, reason);
  }
}
