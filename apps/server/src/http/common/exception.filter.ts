import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { STATUS_BY_KIND } from '#contracts/errors.js';
import { DomainError } from '#core/errors/domain-error.js';
import type { AppLogger } from '#infra/logging/logger.js';
import { sendUnknownPath } from '../web/fallback.js';
import { sendFailure } from './envelope.js';

/**
 * The one place that turns failures into HTTP: domain errors by kind, framework errors by
 * status, unknown routes into the web page (GET) or a plain 404, anything else into a 500
 * that is logged with the request id and never leaks internals.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  constructor(
    private readonly logger: AppLogger,
    private readonly basePath: string,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const res = ctx.getResponse<Response>();
    const req = ctx.getRequest<Request>();
    if (res.headersSent) return;

    if (exception instanceof DomainError) {
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
    this.logger.error('unhandled error', {
      reqId: (req as { id?: unknown }).id,
      method: req.method,
      err: exception instanceof Error ? { message: exception.message, stack: exception.stack } : String(exception),
    });
    sendFailure(res, 500, 'Internal server error');
  }
}
