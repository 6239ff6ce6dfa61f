import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Runs middlewares that apply to every request one after another as ONE router layer: each
 * `next()` goes straight to the next function instead of back through the router's layer
 * matching (per layer: path parsing and a match, on every request). A middleware that fails
 * (`next(err)` or a synchronous throw) hands the error to the router, as its own layer would.
 */
export function inOneLayer(...handlers: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    let at = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null) return next(err);
      const handler = handlers[at++];
      if (!handler) return next();
      try {
        void handler(req, res, step);
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}

/**
 * `handler` for the requests whose path is `prefix` or below it (`/api` takes `/api`, `/API/`,
 * `/api/x`, not `/apix`), as `app.use(prefix, handler)` would choose them, for use inside
 * `inOneLayer`; others go straight on. Unlike a mounted middleware it sees the whole path
 * (`req.url` is not rewritten and `req.baseUrl` stays empty: no rewrite, restore and second URL
 * parse per request).
 */
export function underPath(prefix: string, handler: RequestHandler): RequestHandler {
  const lower = prefix.toLowerCase();
  return (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path;
    const below =
      path.length >= lower.length &&
      (path.length === lower.length || path[lower.length] === '/') &&
      path.slice(0, lower.length).toLowerCase() === lower;
    if (!below) return next();
    void handler(req, res, next);
  };
}
