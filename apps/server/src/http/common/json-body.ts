import express, { type RequestHandler } from 'express';
import { ErrorTexts } from '#contracts/errors.js';
import { findUnsafeText, jsonDepthExceeds, MAX_JSON_DEPTH } from '#core/errors/text-rules.js';
import { sendFailure } from './envelope.js';

/** 100 KB: docs/api.md, "Limits" (all JSON requests). */
export const JSON_BODY_LIMIT = '100kb';

/** Webhook ingress (docs/api/triggers.md, "Webhooks"), outside `/api`. */
export const HOOKS_PREFIX = '/hooks/';

const TOO_DEEP = `JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`;

/**
 * JSON body parsing whose failures answer with the envelope: 413 too large, 400 malformed or
 * nested deeper than MAX_JSON_DEPTH (measured on the raw text before parsing). Then the one
 * check of text input: a string (or key) of the body or the query carrying a NUL or an
 * unpaired surrogate answers 400 naming the field. Path parameters get the same check in
 * TextParamPipe, which knows their names.
 */
export function jsonBody(): RequestHandler {
  const parse = express.json({
    limit: JSON_BODY_LIMIT,
    verify: (_req, _res, buf) => {
      if (jsonDepthExceeds(buf.toString('utf8'), MAX_JSON_DEPTH)) {
        throw Object.assign(new Error(TOO_DEEP), { status: 400, type: 'svc.too.deep' });
      }
    },
  });
  const checkText: RequestHandler = (req, res, next) => {
    const unsafe = findUnsafeText(req.body, '') ?? findUnsafeText(req.query, '');
    if (unsafe) return sendFailure(res, 400, `${unsafe.field} ${unsafe.reason}`);
    next();
  };
  return (req, res, next) => {
    // Webhooks read their raw bytes themselves (the signature is over them; 256 KB limit).
    if (req.path.startsWith(HOOKS_PREFIX)) return next();
    // No body (most GETs): nothing to parse; the query is still checked.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      return checkText(req, res, next);
    }
    parse(req, res, (err?: unknown) => {
      if (err) {
        const e = err as { type?: string; status?: number };
        if (e.type === 'entity.too.large' || e.status === 413) return sendFailure(res, 413, ErrorTexts.bodyTooLarge);
        if (e.type === 'svc.too.deep') return sendFailure(res, 400, TOO_DEEP);
        if (e.type === 'entity.parse.failed') return sendFailure(res, 400, 'Invalid JSON body');
        return sendFailure(res, e.status && e.status < 500 ? e.status : 400, 'Invalid request body');
      }
      checkText(req, res, next);
    });
  };
}
