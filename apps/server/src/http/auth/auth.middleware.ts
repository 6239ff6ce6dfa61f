import type { RequestHandler } from 'express';
import { ErrorTexts } from '#contracts/errors.js';
import type { AccessService } from '#core/auth/access.service.js';
import { sendFailure } from '../common/envelope.js';

/** `/api/*` operations that need no token (docs/api.md, "Authentication"). */
export const PUBLIC_API_PATHS: ReadonlySet<string> = new Set([
  '/api/remote/login',
  '/api/remote/status',
  '/api/security/policy',
]);

const BEARER = /^bearer\s+(\S.*)$/i;

/** The token of a request: `Authorization: Bearer` (scheme case-insensitive), else `?token=`. */
export function requestToken(authorization: string | undefined, query: unknown): string | null {
  if (authorization) {
    const match = BEARER.exec(authorization.trim());
    if (match) return match[1]!.trim();
  }
  const token = (query as Record<string, unknown> | undefined)?.token;
  return typeof token === 'string' && token !== '' ? token : null;
}

/**
 * Guards every `/api/*` request, routed or not, before any handler runs. Header and query
 * tokens are neither throttled nor counted towards lockout: only sign-in attempts are.
 */
export function authMiddleware(access: AccessService): RequestHandler {
  return (req, res, next) => {
    const path = `${req.baseUrl}${req.path}`.replace(/\/+$/, '') || '/';
    if (PUBLIC_API_PATHS.has(path)) return next();
    const token = requestToken(req.headers.authorization, req.query);
    if (token === null) return sendFailure(res, 401, ErrorTexts.noToken);
    if (!access.isValidToken(token)) return sendFailure(res, 401, ErrorTexts.invalidToken);
    next();
  };
}
