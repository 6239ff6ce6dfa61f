/**
 * One of bench/http-frameworks' servers: a one-controller Nest app answering
 * `GET /api/system/version` with the server's JSON, on the HTTP framework named by argv[2]:
 * `express` (Nest's stock Express adapter), `svc-adapter` (this server's ServerHttpAdapter:
 * Express with prototype-born requests, one route table run ahead of Express with the work
 * (handleFirst), the direct JSON reply), `fastify`
 * (Nest's Fastify adapter) or `none` (no framework: Node's `http` answering the one path, the
 * ceiling the per-request work alone leaves to any framework). Every variant answers with a weak ETag and holds each event-loop
 * turn's connection writes until the turn ends (batchConnectionWrites), as the server does.
 *
 * With BENCH_WORK=1 every request also does the per-request work this server does before and
 * after its handler, written once against Node's own request and response and hooked in the
 * framework's native way (an Express middleware; Fastify's onRequest hook): a request id
 * (reused or new, echoed), the CORS header, the bearer-token check (the server's
 * SecretMatcher), the duration histogram observed when the answer is sent (prom-client, the same
 * labels) and the rest of the request inside an AsyncLocalStorage log context.
 * Listens on 127.0.0.1 on a free port and prints the port.
 */
import 'reflect-metadata';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Module } from '@nestjs/common';
import type { RequestHandler } from 'express';
import { NestFactory } from '@nestjs/core';
import { Histogram } from 'prom-client';
import { requestToken } from '../apps/server/src/http/auth/auth.middleware.js';
import { SecretMatcher } from '#core/auth/secret-matcher.js';
import { weakEtag } from '../apps/server/src/http/common/etag.js';
import { inOneLayer } from '../apps/server/src/http/common/one-layer.js';
import { ServerHttpAdapter } from '../apps/server/src/http/common/server-http-adapter.js';
import { batchConnectionWrites } from '../apps/server/src/http/common/write-batching.js';

const framework = process.argv[2];
const WORK = process.env.BENCH_WORK === '1';
/** Which parts of the work to do (comma-separated: id,cors,auth,histogram,context); all by default. */
const PARTS = new Set((process.env.BENCH_WORK_PARTS ?? 'id,cors,auth,histogram,context').split(','));
const PASSWORD = process.env.BENCH_PASSWORD ?? 'bench-password';
const BODY = { success: true, data: process.env.BENCH_VERSION ?? '0.1.0' };

@Controller('api/system')
class VersionController {
  @Get('version')
  version(): typeof BODY {
    return BODY;
  }
}

@Module({ controllers: [VersionController] })
class BenchModule {}

const histogram = new Histogram({
  name: 'bench_http_request_duration_seconds',
  help: 'request duration',
  labelNames: ['method', 'route', 'status'],
});
const logContext = new AsyncLocalStorage<{ reqId: string }>();
const password = new SecretMatcher(PASSWORD);
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The work before the handler; `route` names the matched template once answered. Returns the
 * request id, or null for a request without a valid token (the caller answers 401).
 */
function beforeHandler(req: IncomingMessage, res: ServerResponse, route: () => string): string | null {
  let id = '-';
  if (PARTS.has('id')) {
    const incoming = req.headers['x-request-id'];
    id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', id);
  }
  if (PARTS.has('cors')) res.setHeader('Access-Control-Allow-Origin', '*');
  if (PARTS.has('histogram')) {
    const started = performance.now();
    res.once('finish', () =>
      histogram.observe(
        { method: req.method ?? 'GET', route: route(), status: String(res.statusCode) },
        (performance.now() - started) / 1000,
      ),
    );
  }
  if (!PARTS.has('auth')) return id;
  const token = requestToken(req.headers.authorization, undefined);
  return token !== null && password.matches(token) ? id : null;
}

const UNAUTHORIZED = { success: false, error: 'Invalid token' };

/** `none`: bare Node `http` with the same answer, ETag, write batching and (BENCH_WORK) work. */
function startWithoutFramework(): void {
  const body = JSON.stringify(BODY);
  const etag = weakEtag(body);
  const answer = (res: ServerResponse, status: number, text: string, tag?: string): void => {
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.setHeader('ETag', tag ?? weakEtag(text));
    res.end(text);
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const route = path === '/api/system/version' ? path : 'unmatched';
    const reqId = WORK ? beforeHandler(req, res, () => route) : '-';
    if (reqId === null) return answer(res, 401, JSON.stringify(UNAUTHORIZED));
    const handle = (): void =>
      route === 'unmatched' ? answer(res, 404, '{"success":false,"error":"Not found"}') : answer(res, 200, body, etag);
    if (WORK && PARTS.has('context')) logContext.run({ reqId }, handle);
    else handle();
  });
  batchConnectionWrites(server);
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

async function start(): Promise<void> {
  if (framework === 'none') return startWithoutFramework();
  let app;
  if (framework === 'fastify') {
    const { FastifyAdapter } = await import('@nestjs/platform-fastify');
    const adapter = new FastifyAdapter();
    const fastify = adapter.getInstance();
    if (process.env.BENCH_ETAG !== '0')
      fastify.addHook('onSend', (_req, reply, payload, done) => {
        if (typeof payload === 'string' && !reply.hasHeader('etag')) reply.header('ETag', weakEtag(payload));
        done(null, payload);
      });
    if (WORK) {
      fastify.addHook('onRequest', (req, reply, done) => {
        const reqId = beforeHandler(req.raw, reply.raw, () => req.routeOptions.url ?? 'unmatched');
        if (reqId === null) reply.code(401).send(UNAUTHORIZED);
        else if (PARTS.has('context')) logContext.run({ reqId }, done);
        else done();
      });
    }
    app = await NestFactory.create(BenchModule, adapter, { logger: false });
  } else if (framework === 'express' || framework === 'svc-adapter') {
    const adapter =
      framework === 'express'
        ? new (await import('@nestjs/platform-express')).ExpressAdapter()
        : new ServerHttpAdapter(); // its own ETag generator, weakEtag, set by its constructor
    app = await NestFactory.create(BenchModule, adapter, { logger: false, bodyParser: false });
    if (WORK) {
      type ExpressRequest = IncomingMessage & { route?: { path?: string }; baseUrl?: string };
      type ExpressResponse = ServerResponse & { status(code: number): { json(body: unknown): void } };
      const work = (req: ExpressRequest, res: ExpressResponse, next: () => void): void => {
        const routed = () =>
          typeof req.route?.path === 'string' ? `${req.baseUrl ?? ''}${req.route.path}` : 'unmatched';
        const reqId = beforeHandler(req, res, routed);
        if (reqId === null) res.status(401).json(UNAUTHORIZED);
        else if (PARTS.has('context')) logContext.run({ reqId }, next);
        else next();
      };
      // The server's own way: the work and then the routes as one layer ahead of Express.
      if (adapter instanceof ServerHttpAdapter)
        adapter.handleFirst(inOneLayer(work as RequestHandler, adapter.routesInLayer()));
      else app.use(work);
    } else if (adapter instanceof ServerHttpAdapter) adapter.handleFirst(adapter.routesInLayer());
  } else {
    throw new Error(`unknown framework "${framework}" (express, svc-adapter, fastify or none)`);
  }
  // ServerHttpAdapter holds its connections' writes itself; the others get the same.
  if (framework !== 'svc-adapter') batchConnectionWrites(app.getHttpServer());
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as AddressInfo;
  process.stdout.write(`${address.port}\n`);
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

start().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
