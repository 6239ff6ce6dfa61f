import { ExpressAdapter } from '@nestjs/platform-express';
import type { Response } from 'express';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The Express adapter with a direct path for the common answer: a plain object or array
 * returned by a handler with a 2xx status that has a body. It writes exactly what
 * `res.json()` writes (Content-Type, Content-Length, the weak ETag of the body) without
 * Express's generic `send` machinery (header lookups, MIME and charset parsing, a second
 * pass over the body). HEAD, conditional requests (If-None-Match / If-Modified-Since: the
 * 304 decision), answers that already carry a Content-Type, ETag or Transfer-Encoding, and
 * everything else go the usual way.
 */
export class JsonReplyAdapter extends ExpressAdapter {
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    const status = statusCode ?? response.statusCode;
    const req = response.req;
    if (
      body !== null &&
      typeof body === 'object' &&
      (Array.isArray(body) || Object.getPrototypeOf(body) === Object.prototype) &&
      status >= 200 &&
      status < 300 &&
      status !== 204 &&
      status !== 205 &&
      req.method !== 'HEAD' &&
      req.headers['if-none-match'] === undefined &&
      req.headers['if-modified-since'] === undefined &&
      !response.hasHeader('content-type') &&
      !response.hasHeader('etag') &&
      !response.hasHeader('transfer-encoding')
    ) {
      const etagOf = response.app.get('etag fn') as ((body: string, encoding: string) => string) | undefined;
      const text = JSON.stringify(body);
      response.statusCode = status;
      response.setHeader('Content-Type', JSON_TYPE);
      response.setHeader('Content-Length', String(Buffer.byteLength(text, 'utf8')));
      if (typeof etagOf === 'function') {
        const etag = etagOf(text, 'utf8');
        if (etag) response.setHeader('ETag', etag);
      }
      // A string body goes out in one write together with the headers.
      response.end(text, 'utf8');
      return response;
    }
    return super.reply(response, body, statusCode);
  }
}
