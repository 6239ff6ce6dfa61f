import { ApiExtension } from './swagger-decorators.js';
import type { Schema } from './schema.js';

/** The operation extension the document builder reads (and removes). */
export const RESPONSE_EXTENSION = 'x-svc-response';

/** Failure statuses an operation can document, with what they mean (docs/api.md, "Answers and errors"). */
export const ERROR_STATUSES = {
  400: 'Missing or invalid input (the message names the field)',
  401: 'No token or wrong token',
  403: 'Path outside allowed folders or a feature turned off',
  404: 'Id does not exist',
  409: 'Conflicts with the current state (already exists, already running)',
  413: 'Request body too large',
  422: 'A rule was broken (code VALIDATION_FAILED; the message names the field)',
  429: 'Sign-in locked (code LOCKED, Retry-After)',
  500: 'Internal error',
  503: 'Not available yet (code NOT_INITIALIZED) or a dependency is down',
} as const;
export type ErrorStatus = keyof typeof ERROR_STATUSES;

export interface ResponseDoc {
  /** The schema of `data`; null when the operation answers `{success:true}` alone. */
  data: Schema | null;
  /** Failure statuses besides the ones the document adds by itself (see `ApiData`). */
  errors: ErrorStatus[];
  /** Some failures also come back as HTTP 200 with `success:false` (docs/api.md, "Answers and errors"). */
  failureAs200?: boolean;
  /** Answers raw bytes (this media type), not JSON; failures still in the error envelope. */
  bytes?: string;
}

/**
 * Documents what an operation answers: the schema of `data` (the document wraps it in the
 * `{success:true, data}` envelope) and the failure statuses it can answer. Every operation
 * gets 401 (unless public) and 500; one with a request body 400 and 413; one with path
 * parameters 404. List any other status it answers:
 *
 *     @Post(':appId/install')
 *     @ApiData(APP, 409, 422)
 *
 * Schemas come from `response-schemas.ts` (`shape<ContractType>()` keeps them in step with
 * `libs/contracts`). `test/openapi.e2e-spec.ts` fails for an operation without one.
 */
export const ApiData = (data: Schema, ...errors: ErrorStatus[]): MethodDecorator =>
  ApiExtension(RESPONSE_EXTENSION, { data, errors } satisfies ResponseDoc) as MethodDecorator;

/** An operation answering `{success:true}` with no `data`; statuses as for `ApiData`. */
export const ApiDone = (...errors: ErrorStatus[]): MethodDecorator =>
  ApiExtension(RESPONSE_EXTENSION, { data: null, errors } satisfies ResponseDoc) as MethodDecorator;

/** `ApiDone` for an operation that also answers some failures as 200 with `success:false`. */
export const ApiDoneOrFailure = (...errors: ErrorStatus[]): MethodDecorator =>
  ApiExtension(RESPONSE_EXTENSION, { data: null, errors, failureAs200: true } satisfies ResponseDoc) as MethodDecorator;

/** An operation answering a file's bytes (`mediaType`) rather than JSON; statuses as for `ApiData`. */
export const ApiBytes = (mediaType: string, ...errors: ErrorStatus[]): MethodDecorator =>
  ApiExtension(RESPONSE_EXTENSION, { data: null, errors, bytes: mediaType } satisfies ResponseDoc) as MethodDecorator;
