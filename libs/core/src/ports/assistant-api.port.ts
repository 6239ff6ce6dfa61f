/** One call of the service's own API on behalf of the assistant. */
export interface AssistantApiCall {
  method: string;
  /** `/api/...`, without query. */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

export interface AssistantApiAnswer {
  status: number;
  /** The JSON answer with its secrets masked (`***`), or the text of a non-JSON one. */
  body: unknown;
}

/**
 * The assistant's access to this service's API: a separate listener on 127.0.0.1 with its
 * own random token, reaching only the operations marked `Assistant`, masking secrets.
 */
export abstract class AssistantApi {
  /** Whether this process serves one (a worker-only process does not). */
  abstract available(): boolean;
  /**
   * The operations it reaches, as `METHOD /api/path/{param}` (read from the OpenAPI document,
   * which is built once the server listens: this waits for it).
   */
  abstract operations(): Promise<string[]>;
  abstract call(call: AssistantApiCall, signal: AbortSignal): Promise<AssistantApiAnswer>;
}
