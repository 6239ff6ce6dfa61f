import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { Server } from 'node:http';
import { describe, it } from 'node:test';
import type { NextFunction, Request, Response } from 'express';
import request from 'supertest';
import { ServerHttpAdapter } from './server-http-adapter.js';

/** An adapter on its own server whose first layer answers `/first`, passes on `/on` and fails `/fail`. */
function adapterWithFirst(): { adapter: ServerHttpAdapter; server: Server; seen: string[] } {
  const adapter = new ServerHttpAdapter();
  adapter.initHttpServer({});
  const seen: string[] = [];
  adapter.handleFirst((req: Request, res: Response, next: NextFunction) => {
    seen.push(`${req.baseUrl}|${req.originalUrl}|${res.req === req}`);
    if (req.path === '/first') return void res.status(200).json({ by: 'first', path: req.path, query: req.query });
    if (req.path === '/fail') return next(Object.assign(new Error('failed first'), { status: 418 }));
    next();
  });
  // What Nest registers at init, after the first layer: its not-found and error handlers.
  adapter.use((req: Request, res: Response) => void res.status(404).json({ notFound: req.originalUrl }));
  adapter.use((err: { status: number; message: string }, _req: Request, res: Response, _next: NextFunction) => {
    res.status(err.status).json({ error: err.message });
  });
  return { adapter, server: adapter.getHttpServer() as Server, seen };
}

describe('ServerHttpAdapter.handleFirst', () => {
  it('answers from the first layer, with what Express would have set on the request', async () => {
    const { server, seen } = adapterWithFirst();
    const res = await request(server).get('/first?a=1').expect(200);
    assert.deepEqual(res.body, { by: 'first', path: '/first', query: { a: '1' } });
    assert.match(String(res.headers.etag), /^W\//);
    assert.deepEqual(seen, ['|/first?a=1|true']);
  });

  it("hands what the first layer passes on to Express's stack, and its failures to the error handler", async () => {
    const { server, seen } = adapterWithFirst();
    assert.deepEqual((await request(server).get('/on?b=2').expect(404)).body, { notFound: '/on?b=2' });
    assert.deepEqual((await request(server).get('/fail').expect(418)).body, { error: 'failed first' });
    // The error is handed on once: the next request on the stack goes on as usual.
    assert.deepEqual((await request(server).get('/on').expect(404)).body, { notFound: '/on' });
    assert.equal(seen.length, 3);
  });

  it('refuses a second first layer', () => {
    const { adapter } = adapterWithFirst();
    assert.throws(() => adapter.handleFirst((_req, _res, next) => next()), /already set/);
  });

  it("builds requests and responses with Express's prototypes and V8's fast properties", () => {
    // A child process: V8's own check (`%HasFastProperties`) needs --allow-natives-syntax.
    const script = `
      import { request } from 'node:http';
      import { ServerHttpAdapter } from ${JSON.stringify(new URL('./server-http-adapter.js', import.meta.url).href)};
      const adapter = new ServerHttpAdapter();
      adapter.initHttpServer({});
      const app = adapter.getInstance();
      adapter.handleFirst((req, res) => {
        const seen = {
          requestPrototype: Object.getPrototypeOf(req) === app.request,
          responsePrototype: Object.getPrototypeOf(res) === app.response,
          requestFast: %HasFastProperties(req),
          responseFast: %HasFastProperties(res),
        };
        res.end(JSON.stringify(seen));
      });
      const server = adapter.getHttpServer().listen(0, '127.0.0.1', () => {
        request({ port: server.address().port, host: '127.0.0.1' }, (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => { process.stdout.write(text); server.close(); });
        }).end();
      });`;
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    assert.deepEqual(JSON.parse(out), {
      requestPrototype: true,
      responsePrototype: true,
      requestFast: true,
      responseFast: true,
    });
  });
});
