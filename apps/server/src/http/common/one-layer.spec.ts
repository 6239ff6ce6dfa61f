import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import express, { type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { inOneLayer, underPath } from './one-layer.js';

/** Whether the middleware saw the request, and the path it saw. */
function appUsing(mount: (app: express.Express, mark: express.RequestHandler) => void) {
  const app = express();
  const mark = (req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('x-seen', `${req.baseUrl}${req.path}`);
    next();
  };
  mount(app, mark);
  app.use((_req: Request, res: Response) => {
    res.json({ seen: res.getHeader('x-seen') ?? null });
  });
  return app;
}

describe('inOneLayer and underPath', () => {
  const mounted = appUsing((app, mark) => app.use('/api', mark));
  const inLayer = appUsing((app, mark) => app.use(inOneLayer(underPath('/api', mark))));
  for (const path of ['/api', '/api/', '/API/x', '/api/x/y?q=1', '/apix', '/', '/other/api']) {
    it(`chooses ${path} as app.use('/api') does, and shows the whole path`, async () => {
      const [a, b] = await Promise.all([request(mounted).get(path), request(inLayer).get(path)]);
      assert.equal(b.body.seen !== null, a.body.seen !== null);
      if (b.body.seen !== null) assert.equal(b.body.seen, path.split('?')[0]);
    });
  }

  it('runs the handlers in order and hands an error to the router', async () => {
    const order: string[] = [];
    const app = express();
    app.use(
      inOneLayer(
        (_req, _res, next) => (order.push('a'), next()),
        underPath('/api', (_req, _res, next) => (order.push('b'), next(Object.assign(new Error('no'), { status: 401 })))),
        (_req, _res, next) => (order.push('c'), next()),
      ),
    );
    app.use((err: { status: number }, _req: Request, res: Response, _next: NextFunction) => {
      res.status(err.status).end();
    });
    await request(app).get('/api/x').expect(401);
    assert.deepEqual(order, ['a', 'b']);
  });
});
