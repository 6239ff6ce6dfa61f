/** Error vocabulary shared by server and clients (docs/api.md, "Answers and errors"). */

/** Machine-readable codes that appear in the `code` field of a failure envelope. */
export const ErrorCodes = {
  LOCKED: 'LOCKED',
  MCP_COMMAND_BLOCKED: 'MCP_COMMAND_BLOCKED',
  ALREADY_INSTALLED: 'ALREADY_INSTALLED',
  NOT_INITIALIZED: 'NOT_INITIALIZED',
  /** A digital-human spec or body broke a rule (422); the message names the field. */
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  /** A spec file that is not YAML (400). */
  INVALID_YAML: 'INVALID_YAML',
} as const;
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Kinds of domain failure; one filter maps each to an HTTP status. */
export type ErrorKind =
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'too_large'
  | 'unprocessable'
  | 'locked'
  | 'unavailable'
  | 'internal';

export const STATUS_BY_KIND: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unprocessable: 422,
  locked: 429,
  unavailable: 503,
  internal: 500,
};

/** Exact error texts fixed by the specification. */
export const ErrorTexts = {
  invalidToken: 'Invalid token',
  noToken: 'No authorization token',
  locked: 'Too many failed attempts. Try again later.',
  notAuthenticated: 'Not authenticated',
  terminalUnavailable: 'Terminal is not available on this server',
  bodyTooLarge: 'Request body too large',
} as const;

/** Failure envelope. */
export interface FailureBody {
  success: false;
  error: string;
  code?: string;
}

/** Success envelope. */
export interface SuccessBody<T> {
  success: true;
  data: T;
}
