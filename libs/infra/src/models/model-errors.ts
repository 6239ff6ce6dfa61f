import { ModelCallError, type ModelErrorKind } from '#core/ports/model-provider.port.js';

/** What an adapter learned about a failed call, before classification. */
export interface ProviderFailure {
  /** Provider name for the message ("Anthropic", "OpenAI-compatible endpoint"). */
  provider: string;
  /** HTTP status; null for errors that arrived inside a 200 stream. */
  status: number | null;
  /** The provider's error type (`overloaded_error`, `rate_limit_error`, `insufficient_quota`...). */
  type?: string | null;
  /** The provider's error code (OpenAI-style `code`; some routers put an HTTP status here). */
  code?: string | number | null;
  message: string;
  headers?: HeadersLike | null;
}

export interface HeadersLike {
  get(name: string): string | null;
}

const NOT_RETRYABLE = false;
const RETRYABLE = true;

/** Error types (Anthropic's names, plus OpenAI's where they differ) → HTTP status they stand for. */
const TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  insufficient_quota: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  api_error: 500,
  server_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/**
 * The kind of a failure with an HTTP status:
 * 401/403 authentication_failed; 402 billing_error; 400/404/413/422 and other 4xx
 * invalid_request; 429 rate_limit; 408, 409, 5xx and 529 server_error. The retryable ones
 * are the statuses the providers' own SDKs retry (408, 409, 429, 5xx).
 */
export function kindForStatus(status: number): { kind: ModelErrorKind; retryable: boolean } {
  if (status === 401 || status === 403) return { kind: 'authentication_failed', retryable: NOT_RETRYABLE };
  if (status === 402) return { kind: 'billing_error', retryable: NOT_RETRYABLE };
  if (status === 429) return { kind: 'rate_limit', retryable: RETRYABLE };
  if (status === 408 || status === 409 || status >= 500) return { kind: 'server_error', retryable: RETRYABLE };
  if (status >= 400) return { kind: 'invalid_request', retryable: NOT_RETRYABLE };
  return { kind: 'unknown', retryable: NOT_RETRYABLE };
}

/** A provider's error response or in-stream error event → ModelCallError. */
export function classifyFailure(failure: ProviderFailure): ModelCallError {
  const type = failure.type ?? null;
  let status = failure.status;
  if (status === null) {
    // An error event inside a 200 stream: its type (or a numeric code) says what it is.
    const code = typeof failure.code === 'number' ? failure.code : Number.NaN;
    status = (type ? TYPE_STATUS[type] : undefined) ?? (code >= 400 && code <= 599 ? code : null);
  }
  let { kind, retryable } =
    status === null ? { kind: 'server_error' as const, retryable: RETRYABLE } : kindForStatus(status);
  // A quota or billing problem can come as 400/403/429; it is not worth retrying.
  if (type === 'billing_error' || type === 'insufficient_quota' || failure.code === 'insufficient_quota') {
    kind = 'billing_error';
    retryable = NOT_RETRYABLE;
  }
  // The providers say themselves when a retry makes sense.
  const shouldRetry = failure.headers?.get('x-should-retry');
  if (shouldRetry === 'true' && kind !== 'authentication_failed' && kind !== 'billing_error') retryable = RETRYABLE;
  if (shouldRetry === 'false') retryable = NOT_RETRYABLE;
  const retryAfter = failure.headers ? retryAfterMs(failure.headers) : undefined;
  const label = [status, type].filter((x) => x !== null && x !== undefined && x !== '').join(' ');
  const message = `${failure.provider} error${label ? ` (${label})` : ''}: ${failure.message || 'no details'}`;
  return new ModelCallError(message, kind, status, retryable, retryAfter);
}

/**
 * Milliseconds to wait from `retry-after-ms` (ms) or `retry-after` (seconds, or an HTTP
 * date); undefined when neither is present or readable.
 */
export function retryAfterMs(headers: HeadersLike, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(after);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  let current = err;
  while (current && chain.length < 8 && !chain.includes(current)) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

/** Whether `err` (or its cause chain) is a transport failure: refused, reset, timed out, cut. */
export function isNetworkFailure(err: unknown): boolean {
  return causes(err).some((e) => {
    if (!(e instanceof Error)) return false;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if (e.name === 'APIConnectionError' || e.name === 'APIConnectionTimeoutError') return true;
    return e instanceof TypeError && /^(terminated|fetch failed|network error)/i.test(e.message);
  });
}

/** The most specific message in a cause chain ("connect ECONNREFUSED 127.0.0.1:9"). */
export function rootMessage(err: unknown): string {
  const chain = causes(err).filter((e): e is Error => e instanceof Error && e.message !== '');
  const last = chain[chain.length - 1];
  const first = chain[0];
  if (!first) return String(err);
  return last && last !== first ? `${first.message} (${last.message})` : first.message;
}

export function networkError(provider: string, detail: string): ModelCallError {
  return new ModelCallError(`${provider}: connection problem: ${detail}`, 'network', null, RETRYABLE);
}

export function abortedError(): ModelCallError {
  return new ModelCallError('The model call was stopped.', 'aborted', null, NOT_RETRYABLE);
}
