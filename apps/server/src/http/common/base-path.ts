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
