import type { Request, RequestHandler, Response } from 'express';
import { ErrorTexts } from '#contracts/errors.js';
import type { AccessService } from '#core/auth/access.service.js';
import type { AppConfig } from '#core/config/app-config.js';
import type { SystemService } from '#core/system/system.service.js';
import type { PromMetrics } from '#infra/metrics/prom-metrics.js';
import { requestToken } from '../auth/auth.middleware.js';
import { sendFailure } from '../common/envelope.js';

/** Readiness: database reachable, Redis reachable when used, queue consuming. */
export async function sendReadiness(system: SystemService, res: Response): Promise<void> {
  const report = await system.readiness();
  res.status(report.ready ? 200 : 503).json({ status: report.ready ? 'ready' : 'not ready', ...report });
}

/** Prometheus exposition; the access password is required (header or ?token=) unless SVC_METRICS_PUBLIC=1. */
export async function sendMetrics(
  deps: { metrics: PromMetrics; access: AccessService; config: AppConfig },
  req: Request,
  res: Response,
): Promise<void> {
  if (!deps.config.metricsPublic) {
    const token = requestToken(req.headers.authorization, req.query);
    if (token === null) return sendFailure(res, 401, ErrorTexts.noToken);
    if (!deps.access.isValidToken(token)) return sendFailure(res, 401, ErrorTexts.invalidToken);
  }
  const { contentType, body } = await deps.metrics.scrape();
  res.status(200).type(contentType).send(body);
}

/**
 * What a worker-only process answers over HTTP (it has no controllers): its probes and
 * metrics; every other path is unknown there.
 */
export function workerProbes(deps: {
  system: SystemService;
  metrics: PromMetrics;
  access: AccessService;
  config: AppConfig;
}): RequestHandler {
  return (req, res, next) => {
    const get = req.method === 'GET' || req.method === 'HEAD';
    const answer =
      get && req.path === '/healthz'
        ? Promise.resolve(void res.status(200).json({ status: 'ok' }))
        : get && req.path === '/readyz'
          ? sendReadiness(deps.system, res)
          : get && req.path === '/metrics'
            ? sendMetrics(deps, req, res)
            : Promise.resolve(void res.status(404).type('text/plain').send('Not Found'));
    answer.catch(next);
  };
}
