import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { RequestHandler } from 'express';

let cached: string | null = null;

/**
 * The API reference page: Swagger UI from the swagger-ui-dist package, inlined into one
 * HTML response so it works offline and needs no other route. It holds no data: it reads
 * `openapi.json` next to it with the password from `?token=` or the sign-in page's tab
 * storage, or asks for it.
 */
function renderDocsPage(): string {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const dist = dirname(require.resolve('swagger-ui-dist/package.json'));
  const bundle = readFileSync(join(dist, 'swagger-ui-bundle.js'), 'utf8').replaceAll('</script', '<\\/script');
  const css = readFileSync(join(dist, 'swagger-ui.css'), 'utf8').replaceAll('</style', '<\\/style');
  cached = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc-server API</title>
<style>${css}</style>
</head>
<body>
<div id="docs"></div>
<script>${bundle}</script>
<script>
(function () {
  var params = new URLSearchParams(location.search);
  var token = params.get('token') || sessionStorage.getItem('svc-token') || '';
  if (!token) token = window.prompt('Access password') || '';
  if (token) sessionStorage.setItem('svc-token', token);
  var base = location.pathname.replace(/\\/docs\\/?$/, '');
  window.ui = SwaggerUIBundle({
    url: base + '/openapi.json',
    dom_id: '#docs',
    deepLinking: true,
    requestInterceptor: function (req) {
      req.headers.Authorization = 'Bearer ' + token;
      return req;
    },
  });
})();
</script>
</body>
</html>`;
  return cached;
}

/** Where the docs page is served. */
export const DOCS_PATH = '/api/docs';

/**
 * GET /api/docs (public: the page holds nothing secret; the document it loads is behind the
 * token). For the requests at or below DOCS_PATH (`underPath`), which see the whole path.
 */
export function docsPage(): RequestHandler {
  return (req, res, next) => {
    const rest = req.path.slice(DOCS_PATH.length);
    if ((req.method !== 'GET' && req.method !== 'HEAD') || (rest !== '/' && rest !== '')) return next();
    res.status(200).type('html').setHeader('Cache-Control', 'no-store').send(renderDocsPage());
  };
}
