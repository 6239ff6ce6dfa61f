import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ErrorCodes, STATUS_BY_KIND } from '#contracts/errors.js';
import { DomainError } from '#core/errors/domain-error.js';
import { isDatabaseUnavailable } from '#infra/database/database-faults.js';
import { LogThrottle } from '#infra/logging/log-throttle.js';
import type { AppLogger } from '#infra/logging/logger.js';
import { sendUnknownPath } from '../web/fallback.js';
import { sendFailure } from './envelope.js';

/**
 * The one place that turns failures into HTTP: domain errors by kind, framework errors by
 * status, unknown routes into the web page (GET) or a plain 404, anything else into a 500
 * that is logged with the request id and never leaks internals.
 */
export const DATABASE_UNAVAILABLE = 'The database is unavailable right now; try again shortly.';

@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly unavailable: LogThrottle;

  constructor(
    private readonly logger: AppLogger,
    private readonly basePath: string,
  ) {
    this.unavailable = new LogThrottle((f) => this.logger.warn('request failed: the database is unavailable', f));
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const res = ctx.getResponse<Response>();
    const req = ctx.getRequest<Request>();
    if (res.headersSent) return;

    if (exception instanceof DomainError) {
      if (exception.kind === 'internal') {
        this.logger.error('internal error', {
          reqId: (req as { id?: unknown }).id,
          method: req.method,
          err: exception.message,
        });
      }
      const retryAfter = exception.details.retryAfterSeconds;
      if (typeof retryAfter === 'number') res.setHeader('Retry-After', String(retryAfter));
      sendFailure(res, STATUS_BY_KIND[exception.kind], exception.message, exception.code);
      return;
    }
    // Services throw DomainError, never NotFoundException: this is Nest's "no route".
    if (exception instanceof NotFoundException) {
      sendUnknownPath(req, res, this.basePath);
      return;
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      const message =
        typeof response === 'object' && response !== null && 'message' in response
          ? [(response as { message: unknown }).message].flat().join('; ')
          : exception.message;
      sendFailure(res, status, message);
      return;
    }
    if (isDatabaseUnavailable(exception)) {
      // A passing outage, not a bug: 503 NOT_INITIALIZED (docs/api.md, "Limits and failures"), one log line per 10 s.
      this.unavailable.note({ method: req.method, err: (exception as Error).message });
      res.setHeader('Retry-After', '5');
      sendFailure(res, 503, DATABASE_UNAVAILABLE, ErrorCodes.NOT_INITIALIZED);
      return;
    }
    this.logger.error('unhandled error', {
      reqId: (req as { id?: unknown }).id,
      method: req.method,
      err: exception instanceof Error ? { message: exception.message, stack: exception.stack } : String(exception),
    });
    sendFailure(res, 500, 'Internal server error');
  }
}
