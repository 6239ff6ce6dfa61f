import http from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { weakEtag } from './etag.js';
import { JsonReplyAdapter } from './json-reply-adapter.js';
import { RouteTable } from './route-table.js';
import { batchConnectionWrites } from './write-batching.js';

/**
 * The HTTP adapter the server runs on: Express on an HTTP server whose requests and responses
 * are born Express's (see `initHttpServer`), with the direct JSON reply (JsonReplyAdapter),
 * the controllers' routes held in one RouteTable layer (mounted where the first route would
 * have gone, so the middlewares before it and Nest's not-found and error handlers after it keep
 * their places; or run as the last step of the layer every request goes through ahead of
 * Express, see `handleFirst`), a cheaper ETag generator with Express's exact output, and each
 * turn's connection writes going out together (batchConnectionWrites).
 */
export class ServerHttpAdapter extends JsonReplyAdapter {
  readonly routeTable = new RouteTable();
  private mounted = false;
  /** Whether the HTTP server is this adapter's own (initHttpServer), which can run `first` itself. */
  private ownServer = false;
  /** What every request goes through before Express (see handleFirst). */
  private first: RequestHandler | undefined;

  constructor() {
    super();
    (this.getInstance() as { set(name: string, value: unknown): void }).set('etag', weakEtag);
  }

  /**
   * The HTTP server, creating its requests and responses with Express's request and response
   * objects as their prototypes. Express otherwise swaps the prototype of every request and
   * response as it takes them (`Object.setPrototypeOf`), which sends V8 down slow, uncached paths
   * for every later property access on them: a one-route Express app spent ~2.5× the CPU per
   * request of the same app on this server (130 against 50 µs). With the prototype already in
   * place Express's swap is a no-op. (HTTPS or Nest's connection tracking keep Nest's server.)
   */
  override initHttpServer(options: NestApplicationOptions): void {
    super.initHttpServer(options);
    if (options?.httpsOptions || options?.forceCloseConnections) return;
    const app = this.getInstance<Express>();
    const IncomingMessage = expressClass(http.IncomingMessage, app.request);
    const ServerResponse = expressClass(http.ServerResponse, app.response);
    // Express's own prototypes become the classes': its swap of each request's is then a no-op.
    app.request = IncomingMessage.prototype as Express['request'];
    app.response = ServerResponse.prototype as Express['response'];
    this.httpServer = http.createServer({ IncomingMessage, ServerResponse }, (req, res) =>
      this.dispatch(req as Request, res as Response, app),
    );
    this.ownServer = true;
    batchConnectionWrites(this.httpServer);
  }

  /**
   * Runs `handler` (the one layer every request goes through, see inOneLayer) for every request
   * BEFORE Express: what it answers never enters Express's application and router (per request
   * a final handler, a router walk with its closures and URL checks, Nest's hook layer, the
   * layer's own match: ~4 % of the CPU of a simple authenticated read). What it passes on
   * (`next()`: no route matched) goes through Express's stack as before, and so does a failure
   * (`next(err)`), which reaches Nest's error handler there. Without this adapter's own server
   * (HTTPS, Nest's connection tracking) the handler is an ordinary first layer.
   */
  handleFirst(handler: RequestHandler): void {
    if (this.first) throw new Error('handleFirst is already set');
    if (!this.ownServer) {
      this.use(handler);
      return;
    }
    this.first = handler;
    // A failure of `first`, handed to Express's error handling from a layer placed before anything
    // registered later (Nest's not-found and error handlers come at init).
    this.use((req: Request, _res: Response, next: NextFunction) => {
      const err = (req as FrontFailed)[FRONT_ERROR];
      if (err === undefined) return next();
      (req as FrontFailed)[FRONT_ERROR] = undefined;
      next(err);
    });
  }

  /** One request: `first` when set, with what Express's application and router would have set on it. */
  private dispatch(req: Request, res: Response, app: Express): void {
    const first = this.first;
    if (!first) return void app(req, res);
    if (app.enabled('x-powered-by')) res.setHeader('X-Powered-By', 'Express');
    req.res = res;
    res.req = req;
    res.locals ??= Object.create(null) as Response['locals'];
    req.baseUrl = '';
    req.originalUrl = req.url;
    first(req, res, (err?: unknown) => {
      if (err !== undefined && err !== null) (req as FrontFailed)[FRONT_ERROR] = err;
      app(req, res);
    });
  }

  override get(...args: unknown[]): unknown {
    return this.routed('GET', args) ?? super.get.apply(this, args as never);
  }
  override post(...args: unknown[]): unknown {
    return this.routed('POST', args) ?? super.post.apply(this, args as never);
  }
  override put(...args: unknown[]): unknown {
    return this.routed('PUT', args) ?? super.put.apply(this, args as never);
  }
  override delete(...args: unknown[]): unknown {
    return this.routed('DELETE', args) ?? super.delete.apply(this, args as never);
  }
  override patch(...args: unknown[]): unknown {
    return this.routed('PATCH', args) ?? super.patch.apply(this, args as never);
  }
  override head(...args: unknown[]): unknown {
    return this.routed('HEAD', args) ?? super.head.apply(this, args as never);
  }
  override options(...args: unknown[]): unknown {
    return this.routed('OPTIONS', args) ?? super.options.apply(this, args as never);
  }
  override all(...args: unknown[]): unknown {
    return this.routed('ALL', args) ?? super.all.apply(this, args as never);
  }

  /**
   * The routes' middleware, for the caller to run as the last step of its own global layer (see
   * inOneLayer): one router layer less per request. The table is then not mounted on its own, so
   * this must come before the first route is registered (before `app.init()`).
   */
  routesInLayer(): RequestHandler {
    if (this.mounted) throw new Error('the route table is already mounted');
    this.mounted = true;
    return this.routeTable.middleware as RequestHandler;
  }

  /** A `(path, handler)` route goes to the table; anything else (`get('setting')`) stays Express's. */
  private routed(method: string, args: unknown[]): this | undefined {
    const [path, handler] = args;
    if (args.length !== 2 || typeof path !== 'string' || typeof handler !== 'function') return undefined;
    if (!this.mounted) {
      this.mounted = true;
      this.use(this.routeTable.middleware as RequestHandler);
    }
    this.routeTable.add(method, path, handler as Parameters<RouteTable['add']>[2]);
    return this;
  }

  /** Nest sets every answer's status here; a valid code is set directly (Express's check, no more). */
  override status(response: { statusCode: number }, statusCode: number): unknown {
    if (Number.isInteger(statusCode) && statusCode >= 100 && statusCode <= 999) {
      response.statusCode = statusCode;
      return response;
    }
    return super.status(response, statusCode);
  }
}

const FRONT_ERROR = Symbol('svc.frontError');
type FrontFailed = Request & { [FRONT_ERROR]?: unknown };

/**
 * A subclass of `base` (Node's request or response) whose prototype has everything Express's
 * prototype object for it has (`app`, and Express's methods and getters), so that its instances
 * are Express's from birth. A plain subclass keeps V8's fast properties on every Node version:
 * a function calling `base` on an object with Express's prototype (`base.call(this, …)`) left
 * every request and response in dictionary mode on Node 24 (each property read and write a hash
 * look-up), and a construct call with such a function as `new.target` (`Reflect.construct`) cost
 * ~30 µs an object on Node 20.
 */
function expressClass<T extends typeof http.IncomingMessage | typeof http.ServerResponse>(
  base: T,
  expressPrototype: object,
): T {
  const Born = class extends (base as typeof http.IncomingMessage) {} as unknown as T;
  const chain: object[] = [];
  for (
    let p: object | null = expressPrototype;
    p && p !== base.prototype;
    p = Object.getPrototypeOf(p) as object | null
  )
    chain.unshift(p);
  for (const p of chain) Object.defineProperties(Born.prototype, Object.getOwnPropertyDescriptors(p));
  return Born;
}
