import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { RouteTable } from './route-table.js';

type Method = 'get' | 'post' | 'put' | 'delete' | 'patch' | 'all';

/** Routes in the shapes the controllers use, in an order where registration order matters. */
const ROUTES: [Method, string][] = [
  ['get', '/healthz'],
  ['get', '/api/spaces'],
  ['get', '/api/spaces/:spaceId'],
  ['get', '/api/spaces/default-path'], // shadowed by :spaceId, in Express as here
  ['put', '/api/spaces/:spaceId'],
  ['get', '/api/spaces/:spaceId/conversations/:conversationId/messages/:messageId/thoughts'],
  ['post', '/api/spaces/:spaceId/conversations/:conversationId/messages'],
  ['get', '/api/system/version'],
  ['post', '/hooks/*path'],
  ['get', '/api/apps/:appId'],
  ['all', '/api/any'],
  ['get', '/'],
  ['get', '/api/pass'], // calls next(): the next matching route answers
  ['get', '/api/:section'],
];

/** An app whose routes answer with which route matched and the params Express gave it. */
function appWith(
  register: (app: Express, method: Method, path: string, handler: express.RequestHandler) => void,
): Express {
  const app = express();
  for (const [method, path] of ROUTES) {
    register(app, method, path, (req: Request, res: Response, next: NextFunction) => {
      if (path === '/api/pass') return next();
      res.json({
        route: `${method} ${path}`,
        params: { ...req.params },
        template: (req.route as { path?: string }).path,
      });
    });
  }
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ route: null });
  });
  app.use((err: { status?: number; message: string }, _req: Request, res: Response, _next: NextFunction) => {
    res.status(err.status ?? 500).json({ error: err.message });
  });
  return app;
}

const viaExpress = appWith((app, method, path, handler) => app[method](path, handler));
const viaTable = appWith(
  (() => {
    const table = new RouteTable();
    let mounted = false;
    return (app: Express, method: Method, path: string, handler: express.RequestHandler) => {
      if (!mounted) {
        mounted = true;
        app.use(table.middleware);
      }
      table.add(method, path, handler);
    };
  })(),
);

const REQUESTS: [string, string][] = [
  ['GET', '/healthz'],
  ['GET', '/HEALTHZ/'],
  ['GET', '/healthz?x=1'],
  ['GET', '/healthz/more'],
  ['HEAD', '/healthz'],
  ['POST', '/healthz'],
  ['GET', '/api/spaces'],
  ['GET', '/api/spaces/'],
  ['GET', '/api/spaces/abc'],
  ['GET', '/api/spaces/a%20b'],
  ['GET', '/api/spaces/%E0%A4%A'],
  ['GET', '/api/spaces/default-path'],
  ['PUT', '/api/Spaces/abc/'],
  ['DELETE', '/api/spaces/abc'],
  ['GET', '/api/spaces/s1/conversations/c1/messages/m1/thoughts'],
  ['POST', '/api/spaces/s1/conversations/c1/messages'],
  ['GET', '/api/system/version'],
  ['POST', '/hooks/a/b/c'],
  ['POST', '/hooks'],
  ['GET', '/api/apps/x'],
  ['PATCH', '/api/any'],
  ['GET', '/'],
  ['GET', '/api/pass'],
  ['GET', '/api/other'],
  ['GET', '/nowhere'],
  ['GET', '//api/spaces'],
];

describe('RouteTable', () => {
  for (const [method, path] of REQUESTS) {
    it(`answers ${method} ${path} as Express's router does`, async () => {
      const send = (app: Express) => request(app)[method.toLowerCase() as 'get'](path);
      const [expected, actual] = await Promise.all([send(viaExpress), send(viaTable)]);
      assert.equal(actual.status, expected.status);
      assert.deepEqual(actual.body, expected.body);
    });
  }

  it('lists every route in registration order', () => {
    const table = new RouteTable();
    table.add('get', '/a', () => undefined);
    table.add('all', '/b/:x', () => undefined);
    assert.deepEqual(table.list(), ['GET /a', '_ALL /b/:x']);
  });

  it('answers a path seen before as the first time, sees routes added since, and keeps answering past its cache', () => {
    const table = new RouteTable();
    const answered: string[] = [];
    const dispatch = (method: string, path: string): string => {
      const req = { method, path, params: {} } as unknown as Request;
      table.middleware(req, {} as Response, () => undefined);
      return answered.pop() ?? 'next';
    };
    table.add('get', '/api/items/:id', (req: Request) => void answered.push(`item ${String(req.params.id)}`));
    assert.equal(dispatch('GET', '/api/things/x'), 'next');
    assert.equal(dispatch('GET', '/api/items/a'), 'item a');
    assert.equal(dispatch('GET', '/api/items/a'), 'item a');
    assert.equal(dispatch('HEAD', '/api/items/a'), 'item a');
    assert.equal(dispatch('POST', '/api/items/a'), 'next');
    table.add('get', '/api/things/x', () => void answered.push('thing'));
    assert.equal(dispatch('GET', '/api/things/x'), 'thing');
    // More distinct paths than the table keeps: each still finds its route.
    for (let i = 0; i < 5_000; i++) assert.equal(dispatch('GET', `/api/items/${i}`), `item ${i}`);
    assert.equal(dispatch('GET', '/api/items/a'), 'item a');
  });

  it('passes an error from a route, thrown or rejected, to the error handlers', async () => {
    const table = new RouteTable();
    table.add('get', '/thrown', () => {
      throw Object.assign(new Error('thrown'), { status: 418 });
    });
    table.add('get', '/rejected', () => Promise.reject(Object.assign(new Error('rejected'), { status: 409 })));
    const app = express();
    app.use(table.middleware);
    app.use((err: { status: number; message: string }, _req: Request, res: Response, _next: NextFunction) => {
      res.status(err.status).json({ error: err.message });
    });
    assert.deepEqual((await request(app).get('/thrown').expect(418)).body, { error: 'thrown' });
    assert.deepEqual((await request(app).get('/rejected').expect(409)).body, { error: 'rejected' });
  });
});
