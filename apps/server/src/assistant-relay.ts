import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { AccessService } from '#core/auth/access.service.js';
import type { AppConfig } from '#core/config/app-config.js';
import { Metrics } from '#core/ports/metrics.port.js';
import type { AppLogger } from '#infra/logging/logger.js';
import { ASSISTANT_RELAY_HEADER, isRelayed } from './http/assistant-api/assistant-listener.js';
import { markRelayed } from './http/assistant-api/relayed.js';
import { authMiddleware } from './http/auth/auth.middleware.js';
import { configureApiApp } from './http/common/api-app.js';
import { jsonBody } from './http/common/json-body.js';
import { inOneLayer, underPath } from './http/common/one-layer.js';
import { requestLogging } from './http/common/request-logging.js';
import { ServerHttpAdapter } from './http/common/server-http-adapter.js';
import { httpMetrics } from './http/metrics/http-metrics.js';
import { AssistantRelayModule } from './modules/assistant-relay.module.js';

export interface AssistantRelay {
  app: NestExpressApplication;
  /** `http://127.0.0.1:<port>`: where the assistant's listener sends its calls. */
  url: string;
}

/**
 * Where the assistant's listener of a worker-only process sends its calls: the API controllers
 * over the process's own services (AssistantRelayModule), on 127.0.0.1, answering only requests
 * that carry the listener's token in the relay header (404 otherwise, as the process's own port
 * answers every API path). The listener's password check still applies.
 */
export async function startAssistantRelay(
  owner: INestApplicationContext,
  config: AppConfig,
  logger: AppLogger,
  /** The listener's token, once it has one. */
  relayToken: () => string | null,
): Promise<AssistantRelay> {
  const adapter = new ServerHttpAdapter();
  const app = await NestFactory.create<NestExpressApplication>(AssistantRelayModule.over(owner), adapter, {
    logger,
    bodyParser: false,
    abortOnError: false,
  });
  configureApiApp(app, logger, config.basePath);
  const relayedOnly = (req: Request, res: Response, next: () => void): void => {
    if (isRelayed(req.headers[ASSISTANT_RELAY_HEADER], relayToken())) return next();
    res.status(404).type('text/plain').send('Not Found');
  };
  adapter.handleFirst(
    inOneLayer(
      requestLogging(logger, config),
      httpMetrics(owner.get(Metrics, { strict: false })),
      relayedOnly,
      jsonBody(),
      underPath('/api', authMiddleware(owner.get(AccessService, { strict: false }))),
      markRelayed(relayToken),
      adapter.routesInLayer(),
    ),
  );
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { app, url: `http://127.0.0.1:${port}` };
}
