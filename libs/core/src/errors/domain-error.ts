import type { ErrorKind } from '#contracts/errors.js';

/**
 * The only error services throw on purpose. The HTTP layer maps `kind` to a status
 * code and `message` / `code` to the failure envelope; nothing in core knows HTTP.
 */
export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly code?: string,
    /** Extra facts for the transport, e.g. `retryAfterSeconds` for a lockout. */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }

  static invalid(message: string): DomainError {
    return new DomainError('invalid', message);
  }

  static notFound(message: string): DomainError {
    return new DomainError('not_found', message);
  }

  static forbidden(message: string, code?: string): DomainError {
    return new DomainError('forbidden', message, code);
  }

  static unauthorized(message: string): DomainError {
    return new DomainError('unauthorized', message);
  }
}
