/**
 * Which addresses a user-added store source may reach (SSRF rules): public unicast only.
 * Checked on the URL when a source is added and on every address a fetch connects to,
 * after DNS resolution and after each redirect.
 */

import { isBlockedAddress, isIpLiteral } from '../kernel/addresses.js';

export { isBlockedAddress, isIpLiteral };

export const SOURCE_URL_PROTOCOLS = ['http:', 'https:'];

/**
 * Why a user-added source URL is refused, or null when it may be added: http(s) only, no
 * credentials, and a host that is not obviously internal. Names are resolved and checked by
 * the fetcher on every request.
 */
export function sourceUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an http:// or https:// URL';
  }
  if (!SOURCE_URL_PROTOCOLS.includes(url.protocol)) return 'url must be an http:// or https:// URL';
  if (url.username || url.password) return 'url must not carry a user name or password';
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === '' || host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local')) {
    return 'url must not point to a loopback, private or link-local host';
  }
  if (isIpLiteral(host) && isBlockedAddress(host)) {
    return 'url must not point to a loopback, private or link-local host';
  }
  return null;
}

/** The URL as stored and compared for uniqueness: no trailing slash, no fragment. */
export function normalizeSourceUrl(raw: string): string {
  const url = new URL(raw);
  url.hash = '';
  return url.toString().replace(/\/+$/, '');
}
