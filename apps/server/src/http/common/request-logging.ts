import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { AppLogger } from '#infra/logging/logger.js';
import { clientIp, type ProxyTrust } from './client-ip.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * One log line per request with its id (reused from X-Request-Id when sane, echoed back).
 * Quiet by default: successful requests log at debug, server errors at error. The query
 * string is dropped from the logged URL because `?token=` carries the password.
 */
export function requestLogging(logger: AppLogger, proxy: ProxyTrust) {
  return pinoHttp({
    logger: logger.pino as never,
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'debug'),
    serializers: {
      req: (req: { id: unknown; method: string; url: string; raw: IncomingMessage }) => ({
        id: req.id,
        method: req.method,
        path: req.url.split('?')[0],
        ip: clientIp(req.raw, proxy),
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customSuccessMessage: (req, res) => `${req.method} ${(req.url ?? '').split('?')[0]} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${(req.url ?? '').split('?')[0]} ${res.statusCode}`,
  });
}
