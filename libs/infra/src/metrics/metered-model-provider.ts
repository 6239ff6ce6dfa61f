import type { Metrics } from '#core/ports/metrics.port.js';
import {
  ModelCallError,
  type ModelEndpoint,
  type ModelInfo,
  ModelProvider,
  type ModelProviderKind,
  type ModelRequest,
  type ModelStreamEvent,
} from '#core/ports/model-provider.port.js';
import type { AppLogger } from '../logging/logger.js';
import { currentLogContext } from '../logging/log-context.js';
import { traceModelCall } from '../tracing/tracing.js';

/**
 * Wraps the ModelProvider the server binds: times each call, counts failures by kind and
 * status and the tokens reported, and logs each failed call at info (provider, model,
 * status, kind; never the key or the prompt). Stream events pass through untouched; a
 * failure's message loses any copy of the API key before it goes further. With tracing on,
 * each call is a span (provider, model, outcome, HTTP status, tokens).
 */
export class MeteredModelProvider extends ModelProvider {
  /**
   * Retryable failures not yet followed by another call, by the turn (or job) that made them
   * (error kind): the next call of that turn is the retry, counted with its provider.
   */
  private readonly awaitingRetry = new Map<string, string>();

  constructor(
    private readonly inner: ModelProvider,
    private readonly metrics: Metrics,
    private readonly logger: AppLogger,
  ) {
    super();
  }

  info(provider: ModelProviderKind, model: string): ModelInfo {
    return this.inner.info(provider, model);
  }

  async *stream(endpoint: ModelEndpoint, request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const started = performance.now();
    const provider = endpoint.provider;
    const span = traceModelCall(provider, request.model);
    const caller = currentLogContext();
    const retryKey = caller?.turnId ?? caller?.jobId;
    const retriedKind = retryKey === undefined ? undefined : this.awaitingRetry.get(retryKey);
    if (retriedKind !== undefined) {
      this.awaitingRetry.delete(retryKey!);
      this.metrics.modelRetry(provider, retriedKind);
    }
    try {
      for await (const event of this.inner.stream(endpoint, request)) {
        if (event.type === 'usage') {
          this.metrics.modelTokens(provider, event.usage);
          span?.usage(event.usage.inputTokens, event.usage.outputTokens);
        }
        yield event;
      }
      this.metrics.modelCall({ provider, seconds: (performance.now() - started) / 1000 });
      span?.end({ status: 'ok' });
    } catch (err) {
      const failure = err instanceof ModelCallError ? err : null;
      // Providers sometimes quote the key they were sent; it must reach neither logs nor clients.
      if (failure) failure.message = redact(failure.message, endpoint.apiKey);
      const kind = failure?.kind ?? 'unknown';
      const status = failure?.status ?? null;
      this.metrics.modelCall({ provider, seconds: (performance.now() - started) / 1000, errorKind: kind, status });
      span?.end({ status: 'error', httpStatus: status, errorKind: kind });
      if (retryKey !== undefined && failure?.retryable) {
        if (this.awaitingRetry.size >= 10_000) this.awaitingRetry.clear(); // turns that gave up
        this.awaitingRetry.set(retryKey, kind);
      }
      if (kind !== 'aborted') {
        // A retryable failure is logged once, by the turn loop that retries it ("model call failed;
        // retrying"), or at the turn's end when it gives up: here only at debug. A failure that is
        // final at once is a warning; a refused key names the source whose key to check.
        const fields = {
          provider,
          model: request.model,
          host: hostOf(endpoint.apiUrl),
          source: endpoint.source?.id,
          status,
          kind,
          retryable: failure?.retryable ?? false,
          error: redact(String((err as Error)?.message ?? err), endpoint.apiKey).slice(0, 300),
        };
        if (failure?.retryable) this.logger.debug('model call failed', fields);
        else if (kind === 'authentication_failed') {
          this.logger.warn(`model call refused (${status ?? 'auth'}): ${authHint(endpoint)}`, fields);
        } else this.logger.warn('model call failed', fields);
      }
      throw err;
    } finally {
      // The consumer stopped reading early (a stop): the span still ends.
      span?.end({ status: 'ok' });
    }
  }
}

/** What to do about a refused key, naming the source it belongs to. */
export function authHint(endpoint: ModelEndpoint): string {
  const which = endpoint.source
    ? `model source "${endpoint.source.name}" (${endpoint.source.id})`
    : `the model source at ${hostOf(endpoint.apiUrl)}`;
  return `the provider refused the API key: check the key of ${which} (Settings, or PUT /api/ai-sources/sources/:id; SVC_AI_API_KEY for the source from the environment)`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid-url';
  }
}

/** Provider messages sometimes quote what they were sent; never let the key through. */
function redact(text: string, secret: string): string {
  return secret.length >= 4 ? text.split(secret).join('***') : text;
}
