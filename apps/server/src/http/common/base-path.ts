import type { IncomingMessage, Server } from 'node:http';

/**
 * SVC_BASE_PATH: for proxies that keep the prefix, `/svc/api/...` and `/svc/ws` are served
 * as `/api/...` and `/ws`. Rewriting the URL before any other listener sees the request
 * keeps routing, auth and the WebSocket upgrade unaware of the prefix. Unprefixed paths
 * keep working, so probes can call /healthz directly.
 */
export function installBasePath(server: Server, basePath: string): void {
  if (!basePath) return;
  const strip = (req: IncomingMessage): void => {
    const url = req.url ?? '/';
    if (url === basePath || url.startsWith(`${basePath}/`) || url.startsWith(`${basePath}?`)) {
      const rest = url.slice(basePath.length);
      req.url = rest.startsWith('/') ? rest : `/${rest}`;
    }
  };
  server.prependListener('request', strip);
  server.prependListener('upgrade', strip);
}

/** The prefix before `/api/` or `/ws` in a path the server does not serve, e.g. `/svc` for `/svc/api/x`. */
export function unknownPrefixOf(path: string): string | null {
  const match = /^((?:\/[^/?#]+)+?)\/(?:api\/|ws(?:$|[/?]))/.exec(path);
  return match ? match[1]! : null;
}

/**
 * Behind a proxy that keeps a path prefix the server was not told about, `/svc/api/...`
 * answers the web page with 200 and `/svc/ws` fails: a misconfiguration that looks like
 * success. Logs one clear warning per prefix seen in the path. Runs after the base path was
 * stripped. An `X-Forwarded-Prefix` header alone is no sign of trouble: a proxy that strips the
 * prefix (deploy/nginx/svc.conf) sends it, and that setup needs no SVC_BASE_PATH (the web app
 * derives its URLs from its own address); docs/operations.md, "Behind a reverse proxy".
 */
export function warnOnUnknownPrefix(
  server: Server,
  basePath: string,
  warn: (message: string, fields: Record<string, unknown>) => void,
): void {
  const seen = new Set<string>();
  const once = (prefix: string, fields: Record<string, unknown>, hint: string): void => {
    if (seen.has(prefix) || seen.size > 20) return;
    seen.add(prefix);
    warn('requests arrive with a path prefix this server does not serve', {
      prefix,
      ...fields,
      basePath: basePath || '(unset)',
      hint: `${hint}; see "Behind a reverse proxy" in the README`,
    });
  };
  const check = (req: IncomingMessage): void => {
    const url = req.url ?? '/';
    if (!url.startsWith('/api/') && !url.startsWith('/ws')) {
      const prefix = unknownPrefixOf(url.split('?')[0]!);
      if (prefix) {
        once(
          prefix,
          { path: url.split('?')[0] },
          `${prefix}/api/... answers the web page and ${prefix}/ws fails: have the proxy strip ${prefix} ` +
            `(nginx: proxy_pass http://upstream/;) or set SVC_BASE_PATH=${prefix}`,
        );
      }
    }
  };
  server.prependListener('request', check);
  server.prependListener('upgrade', check);
}
