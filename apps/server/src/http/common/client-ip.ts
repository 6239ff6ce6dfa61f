import type { IncomingMessage } from 'node:http';

/** Who may set X-Forwarded-For: nobody (off), or this many reverse proxies in front of the server. */
export interface ProxyTrust {
  trustProxy: boolean;
  /** Proxies in a row that each append the address they saw (SVC_TRUST_PROXY_HOPS, default 1). */
  trustProxyHops: number;
}

/**
 * The client address a chain of `hops` trusted proxies vouches for: each proxy appends the
 * address it saw, so the client is the `hops`-th entry from the right. Entries further left
 * are whatever the client sent and could be forged (rotating them must not change the
 * answer). Null when the header holds fewer entries than trusted hops (not via the proxies).
 */
export function forwardedClient(header: string | string[] | undefined, hops: number): string | null {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return entries.length >= hops ? entries[entries.length - hops]! : null;
}

/** The caller's address for lockout and logs. */
export function clientIp(req: IncomingMessage, proxy: ProxyTrust): string {
  if (proxy.trustProxy) {
    const forwarded = forwardedClient(req.headers['x-forwarded-for'], proxy.trustProxyHops);
    if (forwarded !== null) return normalize(forwarded);
  }
  return normalize(req.socket.remoteAddress ?? 'unknown');
}

function normalize(ip: string): string {
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}
