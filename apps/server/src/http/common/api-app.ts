import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppLogger } from '#infra/logging/logger.js';
import { HttpExceptionFilter } from './exception.filter.js';
import { TextParamPipe } from './text-param.pipe.js';
import { createValidationPipe } from './validation.js';

/** Express settings, the error filter and the pipes of an application that serves the API. */
export function configureApiApp(app: NestExpressApplication, logger: AppLogger, basePath: string): void {
  app.set('trust proxy', false); // client addresses are decided by clientIp()
  app.disable('x-powered-by');
  app.useGlobalFilters(new HttpExceptionFilter(logger, basePath));
  app.useGlobalPipes(new TextParamPipe(), createValidationPipe());
}
