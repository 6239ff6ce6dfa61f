import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as OtelApi from '@opentelemetry/api';
import type { AppLogger } from '../logging/logger.js';
import { currentLogContext } from '../logging/log-context.js';

/**
 * Optional OpenTelemetry traces: HTTP request → job → model call, exported over OTLP/HTTP
 * (JSON) when OTEL_EXPORTER_OTLP_ENDPOINT is set. Nothing of OpenTelemetry is loaded
 * otherwise: every helper here first checks `otel`, which stays null, and calls straight
 * through. The trace context travels in a job's data (W3C `traceparent`, field `_trace`)
 * next to the request id, so a job's span is a child of the request's span even when
 * another replica runs it.
 */

let otel: typeof OtelApi | null = null;
let tracer: OtelApi.Tracer | null = null;

/** Field of a job's data carrying the trace context of the code that queued it. */
export const TRACE_FIELD = '_trace';

type Attributes = Record<string, string | number | boolean | undefined>;

export interface TracingOptions {
  endpoint: string | null;
  version: string;
  role: string;
  logger: AppLogger;
}

/**
 * Loads the SDK and registers a tracer provider when an endpoint is set; answers the
 * function that flushes and stops it (null when tracing is off).
 */
export async function startTracing(options: TracingOptions): Promise<(() => Promise<void>) | null> {
  if (options.endpoint === null || otel !== null) return null;
  const [api, sdk, resources, exporter] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const provider = new sdk.NodeTracerProvider({
    resource: resources.resourceFromAttributes({
      'service.name': process.env.OTEL_SERVICE_NAME || 'svc-server',
      'service.version': options.version,
      'svc.role': options.role,
    }),
    // The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (and the other OTEL_EXPORTER_OTLP_* variables) itself.
    spanProcessors: [new sdk.BatchSpanProcessor(new exporter.OTLPTraceExporter())],
  });
  provider.register();
  otel = api;
  tracer = api.trace.getTracer('svc-server', options.version);
  options.logger.info('tracing on: spans exported over OTLP/HTTP', {
    collector: options.endpoint.replace(/^(https?:\/\/)[^@/]*@/, '$1'),
  });
  return async () => {
    otel = null;
    tracer = null;
    await provider.shutdown();
  };
}

/** Whether spans are being recorded (OTEL_EXPORTER_OTLP_ENDPOINT set). */
export const tracingOn = (): boolean => otel !== null;

const requestId = (): string | undefined => currentLogContext()?.reqId;

function setAttributes(span: OtelApi.Span, attributes: Attributes): void {
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) span.setAttribute(key, value);
}

/**
 * Runs the rest of an HTTP request inside its server span (continuing a `traceparent` the
 * caller sent). The span is named after the matched route template once the answer is sent.
 */
export function traceHttpRequest(
  req: IncomingMessage & { method?: string; path?: string; baseUrl?: string; route?: { path?: unknown } },
  res: ServerResponse,
  next: () => void,
): void {
  if (!otel || !tracer) return next();
  const api = otel;
  const parent = api.propagation.extract(api.context.active(), req.headers);
  const method = req.method ?? 'GET';
  const span = tracer.startSpan(
    `${method}`,
    {
      kind: api.SpanKind.SERVER,
      attributes: {
        'http.request.method': method,
        'url.path': req.path ?? req.url ?? '',
        'svc.request_id': requestId(),
      },
    },
    parent,
  );
  res.once('finish', () => {
    const route = req.route?.path;
    const template = typeof route === 'string' ? `${req.baseUrl ?? ''}${route}` : null;
    if (template) {
      span.updateName(`${method} ${template}`);
      span.setAttribute('http.route', template);
    }
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
    span.end();
  });
  api.context.with(api.trace.setSpan(parent, span), next);
}

/** The current trace context as a job's data carries it; null when not tracing. */
export function traceCarrier(): Record<string, string> | null {
  if (!otel) return null;
  const carrier: Record<string, string> = {};
  otel.propagation.inject(otel.context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : null;
}

/** Runs a job inside its consumer span, a child of the span that queued it (`carrier`). */
export async function traceJob<T>(
  job: { name: string; id: string; attempt: number; turnId?: string; reqId?: string },
  carrier: unknown,
  run: () => Promise<T>,
): Promise<T> {
  if (!otel || !tracer) return run();
  const api = otel;
  const parent =
    carrier && typeof carrier === 'object'
      ? api.propagation.extract(api.ROOT_CONTEXT, carrier as Record<string, string>)
      : api.ROOT_CONTEXT;
  const span = tracer.startSpan(`job ${job.name}`, { kind: api.SpanKind.CONSUMER, attributes: {} }, parent);
  setAttributes(span, {
    'svc.job.name': job.name,
    'svc.job.id': job.id,
    'svc.job.attempt': job.attempt,
    'svc.turn_id': job.turnId,
    'svc.request_id': job.reqId,
  });
  try {
    return await api.context.with(api.trace.setSpan(parent, span), run);
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: (err as Error)?.message });
    throw err;
  } finally {
    span.end();
  }
}

/** A span being recorded for a model call; its `end` says how the call went. */
export interface ModelCallSpan {
  usage(input: number, output: number): void;
  /** The first call counts; later ones do nothing. */
  end(outcome: { status: 'ok' | 'error'; httpStatus?: number | null; errorKind?: string }): void;
}

/** Starts the span of one model call under the current one; null when not tracing. */
export function traceModelCall(provider: string, model: string): ModelCallSpan | null {
  if (!otel || !tracer) return null;
  const api = otel;
  const span = tracer.startSpan(`model.call ${provider}`, { kind: api.SpanKind.CLIENT });
  setAttributes(span, {
    'gen_ai.system': provider,
    'gen_ai.request.model': model,
    'svc.request_id': requestId(),
    'svc.turn_id': currentLogContext()?.turnId,
  });
  let input = 0;
  let output = 0;
  let ended = false;
  return {
    usage(i, o) {
      input += i;
      output += o;
    },
    end(outcome) {
      if (ended) return;
      ended = true;
      setAttributes(span, {
        'gen_ai.usage.input_tokens': input,
        'gen_ai.usage.output_tokens': output,
        'svc.model.status': outcome.status,
        'http.response.status_code': outcome.httpStatus ?? undefined,
        'error.type': outcome.errorKind,
      });
      if (outcome.status === 'error') span.setStatus({ code: api.SpanStatusCode.ERROR, message: outcome.errorKind });
      span.end();
    },
  };
}

/** Notes an event published while a span is active (its channel only, never its data). */
export function traceEventPublished(channel: string): void {
  if (!otel) return;
  otel.trace.getActiveSpan()?.addEvent('event.published', { 'svc.event.channel': channel });
}
