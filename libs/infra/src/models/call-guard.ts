import { ModelCallError } from '#core/ports/model-provider.port.js';
import { abortedError, isNetworkFailure, networkError, rootMessage } from './model-errors.js';

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * One model call's cancellation: the caller's signal, plus a watchdog that fails the call
 * when the response stream stays silent for `idleTimeoutMs` (a stalled connection would
 * otherwise hold the turn forever). The SDK gets `signal` and `fetch`; every chunk of
 * response bytes (pings included) resets the watchdog.
 */
export class CallGuard {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private idleFired = false;
  private readonly onOuterAbort = (): void => this.controller.abort(this.outer.reason);

  constructor(
    private readonly outer: AbortSignal,
    private readonly idleTimeoutMs: number,
    private readonly provider: string,
  ) {
    if (outer.aborted) this.controller.abort(outer.reason);
    else outer.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** A fetch that arms the watchdog once headers arrive and feeds it on every body chunk. */
  readonly fetch: Fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    // Error bodies are short and read at once; only a streaming success is watched.
    if (!response.ok || !response.body) return response;
    this.touch();
    const touch = (): void => this.touch();
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          touch();
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  private touch(): void {
    if (this.controller.signal.aborted) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.idleFired = true;
      this.controller.abort(new Error('idle timeout'));
    }, this.idleTimeoutMs);
    this.timer.unref();
  }

  /** Throws when the caller stopped the call or the watchdog cut it. */
  check(): void {
    if (this.outer.aborted || this.idleFired) throw this.fail(undefined);
  }

  /**
   * Turns whatever ended the call into a ModelCallError: the caller's stop wins, then the
   * watchdog, then errors already classified, transport failures and `classify`'s verdict.
   */
  fail(err: unknown, classify?: (err: unknown) => ModelCallError | undefined): ModelCallError {
    if (this.outer.aborted) return abortedError();
    if (this.idleFired) {
      const ms = this.idleTimeoutMs;
      return networkError(
        this.provider,
        `no data from the model for ${ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`}`,
      );
    }
    if (err instanceof ModelCallError) return err;
    const classified = classify?.(err);
    if (classified) return classified;
    if (isNetworkFailure(err)) return networkError(this.provider, rootMessage(err));
    if (err instanceof SyntaxError) {
      return new ModelCallError(`${this.provider}: unreadable stream: ${err.message}`, 'server_error', null, true);
    }
    const message = err instanceof Error ? err.message : String(err);
    return new ModelCallError(`${this.provider}: ${message}`, 'unknown', null, false);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.outer.removeEventListener('abort', this.onOuterAbort);
    // Releases the connection when the consumer left early; harmless after a finished stream.
    if (!this.controller.signal.aborted) this.controller.abort();
  }
}
