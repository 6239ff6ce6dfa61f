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
