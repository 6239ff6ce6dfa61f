import type { Request, Response } from 'express';
import { match, type MatchFunction } from 'path-to-regexp';

type Next = (err?: unknown) => void;
type Handler = (req: Request, res: Response, next: Next) => unknown;

/** What `req.route` holds once a route matched (the part of Express's Route that readers use). */
export interface MatchedRoute {
  readonly path: string;
  readonly methods: Readonly<Record<string, true>>;
}

interface Entry {
  /** Upper-case method, or `ALL`. */
  readonly method: string;
  readonly route: MatchedRoute;
  readonly match: MatchFunction<Record<string, string | string[]>>;
  readonly handler: Handler;
  /** Registration order: among the routes that match, the first registered answers. */
  readonly order: number;
}

/** Characters that make a path segment a pattern (a parameter, wildcard, group or escape). */
const PATTERN = /[:*{}()?+\\]/;
const NONE: readonly Entry[] = [];
/** How many distinct `METHOD path` pairs RouteTable keeps their candidates for. */
const EXACT_PATHS_KEPT = 4096;

/**
 * The application's routes as ONE router layer that finds a request's route by its first two
 * path segments instead of trying every route in turn. Express's router walks its layers one by
 * one and runs each route's matcher (~130 routes here: the walk was ~15 % of the CPU of a simple
 * authenticated read). Matching stays Express's own: the same `path-to-regexp` matchers with
 * Express's defaults (case-insensitive, an optional trailing slash, parameters URI-decoded with a
 * 400 "Failed to decode param" error), the first registered route that matches and handles the
 * method answers (HEAD is answered by GET routes), `next()` from a route tries the next one, and
 * `req.params` / `req.route` are set as Express sets them.
 */
export class RouteTable {
  private readonly entries: Entry[] = [];
  /** Routes whose first two segments are literal, by `first/second` in lower case. */
  private readonly byPrefix = new Map<string, Entry[]>();
  /** Routes with a pattern in their first two segments: candidates for every request. */
  private readonly anyPrefix: Entry[] = [];
  /** `METHOD prefix` → the candidates in registration order (built on first use). */
  private readonly candidates = new Map<string, readonly Entry[]>();
  /**
   * `METHOD path` → its candidates, for paths that have some: one look-up for a path seen before
   * instead of splitting and lower-casing it each time. Paths carry ids (and any path may be
   * asked for), so the map is emptied when it reaches EXACT_PATHS_KEPT.
   */
  private readonly byExactPath = new Map<string, readonly Entry[]>();

  add(method: string, path: string, handler: Handler): void {
    const upper = method.toUpperCase();
    const entry: Entry = {
      method: upper,
      route: { path, methods: { [upper === 'ALL' ? '_all' : method.toLowerCase()]: true } },
      // Express's Layer options when `strict` is off: the pattern without its trailing slashes,
      // which then matches with or without one.
      match: match(path === '/' ? path : path.replace(/\/+$/, ''), {
        sensitive: false,
        end: true,
        trailing: true,
        decode: decodeParam,
      }),
      handler,
      order: this.entries.length,
    };
    this.entries.push(entry);
    const [, first = '', second = ''] = path.split('/', 3);
    if (PATTERN.test(first) || PATTERN.test(second)) this.anyPrefix.push(entry);
    else {
      const key = `${first}/${second}`.toLowerCase();
      const list = this.byPrefix.get(key);
      if (list) list.push(entry);
      else this.byPrefix.set(key, [entry]);
    }
    this.candidates.clear();
    this.byExactPath.clear();
  }

  /** Every route, as `METHOD /path`, in registration order. */
  list(): string[] {
    return this.entries.map((e) => `${e.method === 'ALL' ? '_ALL' : e.method} ${e.route.path}`);
  }

  /** The Express middleware that dispatches to the routes (mounted once, where routes go). */
  readonly middleware = (req: Request, res: Response, next: Next): void => {
    const path = pathname(req);
    if (path === undefined) return next();
    const list = this.candidatesFor(req.method, path);
    let at = 0;
    const tryNext = (err?: unknown): void => {
      if (err !== undefined && err !== null && err !== 'route') return next(err === 'router' ? undefined : err);
      while (at < list.length) {
        const entry = list[at++]!;
        let found: ReturnType<Entry['match']>;
        try {
          found = entry.match(path);
        } catch (decodeError) {
          return next(decodeError); // later routes never match with a pending error (as in Express)
        }
        if (!found) continue;
        req.params = found.params as Request['params'];
        (req as { route?: MatchedRoute }).route = entry.route;
        try {
          const returned = entry.handler(req, res, tryNext);
          if (returned instanceof Promise) returned.catch((e: unknown) => next(e ?? new Error('Rejected promise')));
        } catch (thrown) {
          next(thrown);
        }
        return;
      }
      next();
    };
    tryNext();
  };

  private candidatesFor(method: string, path: string): readonly Entry[] {
    const exactKey = `${method} ${path}`;
    const seen = this.byExactPath.get(exactKey);
    if (seen) return seen;
    const list = this.candidatesByPrefix(method, path);
    if (list !== NONE) {
      if (this.byExactPath.size >= EXACT_PATHS_KEPT) this.byExactPath.clear();
      this.byExactPath.set(exactKey, list);
    }
    return list;
  }

  private candidatesByPrefix(method: string, path: string): readonly Entry[] {
    const [, first = '', second = ''] = path.split('/', 3);
    const prefix = `${first}/${second}`.toLowerCase();
    const key = `${method} ${prefix}`;
    const cached = this.candidates.get(key);
    if (cached) return cached;
    const inPrefix = this.byPrefix.get(prefix);
    if (!inPrefix && this.anyPrefix.length === 0) return NONE; // not cached: unknown paths are unbounded
    const handles = (e: Entry): boolean =>
      e.method === method || e.method === 'ALL' || (method === 'HEAD' && e.method === 'GET');
    const list = [...(inPrefix ?? []), ...this.anyPrefix].filter(handles).sort((a, b) => a.order - b.order);
    if (inPrefix) this.candidates.set(key, list);
    return list;
  }
}

/** The path Express's router matches (`parseurl`'s pathname, cached on the request). */
function pathname(req: Request): string | undefined {
  try {
    return req.path;
  } catch {
    return undefined;
  }
}

/** Express's parameter decoding: `%`-escapes decoded; a malformed one is a 400. */
function decodeParam(value: string): string {
  if (value.length === 0 || !value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch (err) {
    if (err instanceof URIError) {
      throw Object.assign(err, { message: `Failed to decode param '${value}'`, status: 400, statusCode: 400 });
    }
    throw err;
  }
}
