import type { RequestHandler } from 'express';
import type { Metrics } from '#core/ports/metrics.port.js';
import { runWithLogContext } from '#infra/logging/log-context.js';

/**
 * Times each request and labels it with the route template Express matched
 * (`/api/spaces/:spaceId`), never the raw path, so label values stay few; anything that
 * matched no route (the web page, 404s) is `unmatched`. Also runs the rest of the request
 * inside its log context, so every line it logs carries `reqId`.
 */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      const route = (req.route as { path?: unknown } | undefined)?.path;
      const template = typeof route === 'string' ? `${req.baseUrl}${route}` : 'unmatched';
      metrics.httpRequest(req.method, template, res.statusCode, (performance.now() - started) / 1000);
    });
    const id = (req as { id?: unknown }).id;
    if (typeof id === 'string') runWithLogContext({ reqId: id }, next);
    else next();
  };
}
