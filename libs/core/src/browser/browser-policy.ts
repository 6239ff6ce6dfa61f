import { type HostAllowList, parseHostAllowList } from '../config/host-allow-list.js';
import { isBlockedAddress, isIpLiteral } from '../kernel/addresses.js';

/**
 * The AI browser's navigation policy (docs/api/ai-browser.md, "Policy"). A browser on a server
 * reaches that server's network, so top-level documents may load only from public addresses:
 * loopback, link-local (cloud metadata), private and shared ranges, unspecified addresses and
 * the server's own addresses are refused unless the operator's allow-list (SVC_BROWSER_ALLOW)
 * names them; the block-list (SVC_BROWSER_BLOCK) refuses more; only http(s) is opened
 * (`about:blank` aside). Names are resolved before the decision.
 */
export interface BrowserPolicy {
  allow: HostAllowList;
  block: HostAllowList;
  /** This server's own addresses. */
  ownAddresses: ReadonlySet<string>;
}

export function browserPolicy(
  allow: readonly string[],
  block: readonly string[],
  ownAddresses: string[],
): BrowserPolicy {
  const list = (entries: readonly string[]): HostAllowList => {
    const parsed = parseHostAllowList(entries.join(','));
    // The configuration was checked at start; a bad entry here is a programming error.
    if (typeof parsed === 'string') throw new Error(parsed);
    return parsed;
  };
  return { allow: list(allow), block: list(block), ownAddresses: new Set(ownAddresses.map(normaliseAddress)) };
}

export function policyBlockedText(host: string): string {
  return `Navigation to "${host}" blocked by browser policy`;
}

/**
 * Why the browser may not load `raw` as a document (the tool's text), or null. `resolve`
 * answers a name's addresses ([] when it does not resolve: Chromium then fails on its own).
 */
export async function navigationProblem(
  raw: string,
  policy: BrowserPolicy,
  resolve: (host: string) => Promise<string[]>,
): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return policyBlockedText(raw);
  }
  if (url.protocol === 'about:' && (url.pathname === 'blank' || url.pathname === 'srcdoc')) return null;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return policyBlockedText(url.host !== '' ? url.host : `${url.protocol}${url.pathname}`.slice(0, 100));
  }
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  const addresses = isIpLiteral(host) ? [host] : await resolve(host);
  if (policy.block.allows(host) || addresses.some((a) => policy.block.allows(host, a))) return policyBlockedText(host);
  if (policy.allow.allows(host)) return null;
  const internal = (address: string): boolean =>
    isBlockedAddress(address) || policy.ownAddresses.has(normaliseAddress(address));
  const names = host === 'localhost' || host.endsWith('.localhost');
  for (const address of names && addresses.length === 0 ? ['127.0.0.1'] : addresses) {
    if (internal(address) && !policy.allow.allows(host, address)) return policyBlockedText(host);
  }
  return null;
}

function normaliseAddress(address: string): string {
  return address
    .replace(/^\[|\]$/g, '')
    .replace(/^::ffff:/i, '')
    .toLowerCase();
}
