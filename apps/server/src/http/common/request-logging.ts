import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppLogger } from '#infra/logging/logger.js';
import { clientIp, type ProxyTrust } from './client-ip.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * One log line per request with its id (reused from X-Request-Id when sane, echoed back).
 * Quiet by default: successful requests log at debug, server errors at error. The query
 * string is dropped from the logged URL because `?token=` carries the password.
 *
 * The line (fields `req`, `res`, `responseTime`, and `err` for a server error) is built only
 * when its level is written: at the default level a successful request costs an id, a header
 * and one listener (a per-request child logger built and serialized every time was ~7 % of the
 * server's CPU on a simple authenticated read).
 */
export function requestLogging(logger: AppLogger, proxy: ProxyTrust) {
  const pino = logger.pino;
  return (req: IncomingMessage & { id?: string; originalUrl?: string }, res: ServerResponse, next: () => void): void => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    const started = Date.now();
    // 'close' comes once for every answer: after 'finish' when it was sent, alone when the
    // connection went first (one plain listener: nothing to remove, no once-wrapper to build).
    res.on('close', (): void => {
      const failed = res.statusCode >= 500;
      const level = failed ? 'error' : 'debug';
      if (!pino.isLevelEnabled(level)) return;
      const path = (req.originalUrl ?? req.url ?? '').split('?')[0];
      const fields: Record<string, unknown> = {
        req: { id, method: req.method, path, ip: clientIp(req, proxy) },
        res: { statusCode: res.statusCode },
        responseTime: Date.now() - started,
      };
      if (failed) fields.err = new Error(`failed with status code ${res.statusCode}`);
      pino[level](fields, `${req.method} ${path} ${res.statusCode}`);
    });
    next();
  };
}
