import type { RequestHandler } from 'express';
import type { Metrics } from '#core/ports/metrics.port.js';
import { runWithLogContext } from '#infra/logging/log-context.js';
import { traceHttpRequest } from '#infra/tracing/tracing.js';

/**
 * Times each request and labels it with the route template Express matched
 * (`/api/spaces/:spaceId`), never the raw path, so label values stay few; anything that
 * matched no route (the web page, 404s) is `unmatched`. Also runs the rest of the request
 * inside its log context, so every line it logs carries `reqId`, and (with tracing on) inside
 * its server span.
 */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    // 'finish' comes at most once per answer: a plain listener, no once-wrapper to build.
    res.on('finish', () => {
      const route = (req.route as { path?: unknown } | undefined)?.path;
      const template = typeof route === 'string' ? `${req.baseUrl}${route}` : 'unmatched';
      metrics.httpRequest(req.method, template, res.statusCode, (performance.now() - started) / 1000);
    });
    const id = (req as { id?: unknown }).id;
    const run = () => traceHttpRequest(req, res, next);
    if (typeof id === 'string') runWithLogContext({ reqId: id }, run);
    else run();
  };
}
