import express, { type RequestHandler } from 'express';
import { ErrorTexts } from '#contracts/errors.js';
import { sendFailure } from './envelope.js';

/** 100 KB: spec doc 1, "Limits" (all JSON requests). */
export const JSON_BODY_LIMIT = '100kb';

/** JSON body parsing whose failures answer with the envelope: 413 too large, 400 malformed. */
export function jsonBody(): RequestHandler {
  const parse = express.json({ limit: JSON_BODY_LIMIT });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      const e = err as { type?: string; status?: number };
      if (e.type === 'entity.too.large' || e.status === 413) return sendFailure(res, 413, ErrorTexts.bodyTooLarge);
      if (e.type === 'entity.parse.failed') return sendFailure(res, 400, 'Invalid JSON body');
      return sendFailure(res, e.status && e.status < 500 ? e.status : 400, 'Invalid request body');
    });
  };
}
