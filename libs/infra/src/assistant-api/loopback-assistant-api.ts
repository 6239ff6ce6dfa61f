import { AssistantApi, type AssistantApiAnswer, type AssistantApiCall } from '#core/ports/assistant-api.port.js';

/** How long one call may take. */
const CALL_TIMEOUT_MS = 60_000;

/**
 * Calls the assistant's listener (127.0.0.1, its own token) over HTTP. The server connects it
 * once the listener is up; until then (and in a worker-only process) it is not available.
 */
export class LoopbackAssistantApi extends AssistantApi {
  private target: { url: string; token: string; operations: () => Promise<string[]> } | null = null;

  /** `operations`: read from the OpenAPI document, built on first use. */
  connect(url: string, token: string, operations: () => Promise<string[]>): void {
    this.target = { url, token, operations };
  }

  available(): boolean {
    return this.target !== null;
  }

  operations(): Promise<string[]> {
    return this.target?.operations() ?? Promise.resolve([]);
  }

  async call(call: AssistantApiCall, signal: AbortSignal): Promise<AssistantApiAnswer> {
    if (!this.target) return { status: 503, body: { success: false, error: 'The service API is not available here' } };
    const url = new URL(call.path, this.target.url);
    for (const [k, v] of Object.entries(call.query ?? {})) url.searchParams.set(k, v);
    const res = await fetch(url, {
      method: call.method,
      headers: {
        Authorization: `Bearer ${this.target.token}`,
        ...(call.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(call.body !== undefined && call.method !== 'GET' ? { body: JSON.stringify(call.body) } : {}),
      signal: AbortSignal.any([signal, AbortSignal.timeout(CALL_TIMEOUT_MS)]),
    });
    const text = await res.text();
    try {
      return { status: res.status, body: JSON.parse(text) as unknown };
    } catch {
      return { status: res.status, body: text };
    }
  }
}
