/** Error vocabulary shared by server and clients (docs/api.md, "Answers and errors"). */

/**
 * The error-code catalogue: every `DomainError` carries one of these (its `reason`), by kind and
 * meaning. Only PUBLIC_ERROR_CODES appear in the `code` field of a failure envelope; the others
 * name the failure for the server's logs, metrics and callers, and never change an answer.
 */
export const ErrorCodes = {
  // Sent to clients in the envelope's `code` (docs/api.md, "Answers and errors").
  LOCKED: 'LOCKED',
  MCP_COMMAND_BLOCKED: 'MCP_COMMAND_BLOCKED',
  ALREADY_INSTALLED: 'ALREADY_INSTALLED',
  NOT_INITIALIZED: 'NOT_INITIALIZED',
  /** A digital-human spec or body broke a rule (422); the message names the field. */
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  /** A spec file that is not YAML (400). */
  INVALID_YAML: 'INVALID_YAML',
  /** Publishing needs a store source that offers it, with a signed-in creator (403). */
  PUBLISHING_UNAVAILABLE: 'PUBLISHING_UNAVAILABLE',

  // The default of each kind, for a failure no more specific code names.
  INVALID_REQUEST: 'INVALID_REQUEST',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  TOO_LARGE: 'TOO_LARGE',
  UNPROCESSABLE: 'UNPROCESSABLE',
  RATE_LIMITED: 'RATE_LIMITED',
  UNAVAILABLE: 'UNAVAILABLE',
  INTERNAL: 'INTERNAL',

  // not_found, by resource.
  SPACE_NOT_FOUND: 'SPACE_NOT_FOUND',
  CONVERSATION_NOT_FOUND: 'CONVERSATION_NOT_FOUND',
  MESSAGE_NOT_FOUND: 'MESSAGE_NOT_FOUND',
  FILE_NOT_FOUND: 'FILE_NOT_FOUND',
  FOLDER_NOT_FOUND: 'FOLDER_NOT_FOUND',
  APP_NOT_FOUND: 'APP_NOT_FOUND',
  RUN_NOT_FOUND: 'RUN_NOT_FOUND',
  ESCALATION_NOT_FOUND: 'ESCALATION_NOT_FOUND',
  TEAM_NOT_FOUND: 'TEAM_NOT_FOUND',
  TEAM_MEMBER_NOT_FOUND: 'TEAM_MEMBER_NOT_FOUND',
  KNOWLEDGE_BASE_NOT_FOUND: 'KNOWLEDGE_BASE_NOT_FOUND',
  CHANNEL_INSTANCE_NOT_FOUND: 'CHANNEL_INSTANCE_NOT_FOUND',
  CHANNEL_SESSION_NOT_FOUND: 'CHANNEL_SESSION_NOT_FOUND',
  MODEL_SOURCE_NOT_FOUND: 'MODEL_SOURCE_NOT_FOUND',
  /** No model source is configured. */
  NO_MODEL: 'NO_MODEL',
  REGISTRY_SOURCE_NOT_FOUND: 'REGISTRY_SOURCE_NOT_FOUND',
  STORE_ITEM_NOT_FOUND: 'STORE_ITEM_NOT_FOUND',
  /** A store item needs a skill or MCP server its source lacks. */
  STORE_REQUIREMENT_MISSING: 'STORE_REQUIREMENT_MISSING',
  /** A file a package or store item names is missing from it. */
  PACKAGE_FILE_MISSING: 'PACKAGE_FILE_MISSING',

  // conflict, by meaning.
  /** A file, folder or source already exists where one was to be created. */
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  CONVERSATION_ID_TAKEN: 'CONVERSATION_ID_TAKEN',
  SPACE_BUSY: 'SPACE_BUSY',
  SPACE_FOLDER_TAKEN: 'SPACE_FOLDER_TAKEN',
  APP_UNINSTALLED: 'APP_UNINSTALLED',
  APP_NOT_PAUSED: 'APP_NOT_PAUSED',
  /** Another run is active, or none is running. */
  RUN_STATE_CONFLICT: 'RUN_STATE_CONFLICT',
  CHAT_THREAD_TAKEN: 'CHAT_THREAD_TAKEN',
  TEAM_MEMBER_NAME_TAKEN: 'TEAM_MEMBER_NAME_TAKEN',
  /** A team run is already running, or none is. */
  TEAM_RUN_STATE: 'TEAM_RUN_STATE',
  REGISTRY_SOURCE_DUPLICATE: 'REGISTRY_SOURCE_DUPLICATE',
  NO_UPDATE: 'NO_UPDATE',
  UPDATE_REFUSED: 'UPDATE_REFUSED',
  /** A Store update would send stored settings to a new address: they must be given again. */
  SETTINGS_TO_NEW_ADDRESS: 'SETTINGS_TO_NEW_ADDRESS',
  NOT_FROM_STORE: 'NOT_FROM_STORE',
  /** An approve or reject with a policy active and no tool call waiting. */
  NO_APPROVAL_PENDING: 'NO_APPROVAL_PENDING',

  // unavailable and internal, by meaning.
  /** A registry or store server did not answer as it should. */
  STORE_SERVER_FAILED: 'STORE_SERVER_FAILED',
  /** The configuration was changed concurrently. */
  CONCURRENT_CHANGE: 'CONCURRENT_CHANGE',
  DISK_FULL: 'DISK_FULL',
} as const;
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** The codes a failure envelope shows (the others stay in the server). */
export type PublicErrorCode =
  | typeof ErrorCodes.LOCKED
  | typeof ErrorCodes.MCP_COMMAND_BLOCKED
  | typeof ErrorCodes.ALREADY_INSTALLED
  | typeof ErrorCodes.NOT_INITIALIZED
  | typeof ErrorCodes.VALIDATION_FAILED
  | typeof ErrorCodes.INVALID_YAML
  | typeof ErrorCodes.PUBLISHING_UNAVAILABLE;

export const PUBLIC_ERROR_CODES: ReadonlySet<ErrorCode> = new Set<PublicErrorCode>([
  ErrorCodes.LOCKED,
  ErrorCodes.MCP_COMMAND_BLOCKED,
  ErrorCodes.ALREADY_INSTALLED,
  ErrorCodes.NOT_INITIALIZED,
  ErrorCodes.VALIDATION_FAILED,
  ErrorCodes.INVALID_YAML,
  ErrorCodes.PUBLISHING_UNAVAILABLE,
]);

export function isPublicErrorCode(code: ErrorCode): code is PublicErrorCode {
  return PUBLIC_ERROR_CODES.has(code);
}

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

/** The code of a failure of each kind that no more specific code names (none of them public). */
export const DEFAULT_CODE_BY_KIND: Readonly<Record<ErrorKind, ErrorCode>> = {
  invalid: ErrorCodes.INVALID_REQUEST,
  unauthorized: ErrorCodes.UNAUTHORIZED,
  forbidden: ErrorCodes.FORBIDDEN,
  not_found: ErrorCodes.NOT_FOUND,
  conflict: ErrorCodes.CONFLICT,
  too_large: ErrorCodes.TOO_LARGE,
  unprocessable: ErrorCodes.UNPROCESSABLE,
  locked: ErrorCodes.RATE_LIMITED,
  unavailable: ErrorCodes.UNAVAILABLE,
  internal: ErrorCodes.INTERNAL,
};

/** Exact error texts fixed by the specification. */
export const ErrorTexts = {
  invalidToken: 'Invalid token',
  noToken: 'No authorization token',
  locked: 'Too many failed attempts. Try again later.',
  notAuthenticated: 'Not authenticated',
  terminalUnavailable: 'Terminal is not available on this server',
  /** The HTTP terminal operations' answer (403), as the original's where it has no terminal. */
  terminalUnavailableHere: 'Terminal is not available on this host',
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
