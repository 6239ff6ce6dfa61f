import type { IncomingMessage } from 'node:http';

/**
 * The caller's address for lockout and logs. Behind a trusted reverse proxy the proxy
 * appends the address it saw to X-Forwarded-For, so the last entry is the one it vouches
 * for; earlier entries are whatever the client sent and could be forged.
 */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const header = req.headers['x-forwarded-for'];
    const value = Array.isArray(header) ? header.join(',') : header;
    const hops = (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (hops.length > 0) return normalize(hops[hops.length - 1]!);
  }
  return normalize(req.socket.remoteAddress ?? 'unknown');
}

function normalize(ip: string): string {
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}
