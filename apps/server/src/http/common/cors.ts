import type { IncomingMessage, ServerResponse } from 'node:http';

/** The methods and headers a cross-origin caller may use (answered on preflight). */
export const CORS_METHODS = 'GET,POST,PUT,DELETE,OPTIONS';
// X-Svc-Client: the web app names itself (the audit of tool approvals), wherever it is served from.
export const CORS_HEADERS = 'Content-Type,Authorization,X-Svc-Client';

/**
 * CORS for every origin, without credentials: `Access-Control-Allow-Origin: *` on every
 * answer; a preflight (`OPTIONS`) is answered here, 200 with the allowed methods and headers
 * and an empty body. The same headers the `cors` package wrote for these fixed options, set
 * directly (it rebuilt its options and header lists on every request).
 */
export function corsHeaders() {
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method !== 'OPTIONS') return next();
    res.setHeader('Access-Control-Allow-Methods', CORS_METHODS);
    res.setHeader('Access-Control-Allow-Headers', CORS_HEADERS);
    res.statusCode = 200;
    res.setHeader('Content-Length', '0');
    res.end();
  };
}
