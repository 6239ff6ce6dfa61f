/**
 * What `serve` needs beyond the entry, loaded by main.ts with one dynamic import: Nest, every
 * module and the SDKs behind them take seconds to load, and the entry starts the embedded
 * database before that (see main.ts).
 */
export { NestFactory } from '@nestjs/core';
export { AccessService } from '#core/auth/access.service.js';
export { Infrastructure } from '#infra/infrastructure.js';
export { AssistantApi } from '#core/ports/assistant-api.port.js';
export { LoopbackAssistantApi } from '#infra/assistant-api/loopback-assistant-api.js';
export { AppModule } from './app.module.js';
export { startAssistantListener } from './http/assistant-api/assistant-listener.js';
export { markRelayed } from './http/assistant-api/relayed.js';
export { authMiddleware } from './http/auth/auth.middleware.js';
export { installBasePath, warnOnUnknownPrefix } from './http/common/base-path.js';
export { corsHeaders } from './http/common/cors.js';
export { jsonBody } from './http/common/json-body.js';
export { ServerHttpAdapter } from './http/common/server-http-adapter.js';
export { inOneLayer, underPath } from './http/common/one-layer.js';
export { requestLogging } from './http/common/request-logging.js';
export { httpMetrics } from './http/metrics/http-metrics.js';
export { DOCS_PATH, docsPage } from './http/openapi/docs-page.js';
export { TurnRunner } from '#core/agent/turn-runner.js';
export { JobProcessors } from './jobs/job-processors.js';
export { ArtifactWatchService } from '#core/artifacts/artifact-watch.service.js';
export { createFrameAdapter } from './ws/frame-adapter.js';
export { EventsGateway } from './ws/events.gateway.js';
export { routeBrowserViews } from './ws/browser-view-frames.js';
export { SystemService } from '#core/system/system.service.js';
export { PromMetrics } from '#infra/metrics/prom-metrics.js';
export { workerProbes } from './http/system/probes.js';
export { configureApiApp } from './http/common/api-app.js';
export { startAssistantRelay } from './assistant-relay.js';
