import { lookup as dnsLookup } from 'node:dns/promises';
import { type HostAllowList, parseHostAllowList } from '#core/config/host-allow-list.js';
import { isBlockedAddress, isIpLiteral } from '#core/kernel/addresses.js';
import { ChannelError } from '#core/channels/channel-provider.port.js';

/**
 * Outbound HTTP of message channels (docs/api/channels.md, "Addresses"): a callback URL or a
 * platform API root is an outbound fetch, so loopback, private and link-local addresses are
 * refused unless the operator's SVC_CHANNEL_ALLOW names them (as SVC_BROWSER_ALLOW does for the
 * AI browser). Names are resolved and every address checked before the request.
 */
export class ChannelFetch {
  private readonly allow: HostAllowList;

  constructor(
    allow: readonly string[],
    private readonly timeoutMs = 15_000,
  ) {
    const parsed = parseHostAllowList(allow.join(','));
    // Checked when the configuration was read.
    if (typeof parsed === 'string') throw new Error(parsed);
    this.allow = parsed;
  }

  /** Why `raw` may not be called, or null. */
  async problem(raw: string): Promise<string | null> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return `not a URL: ${raw.slice(0, 100)}`;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'only http:// and https:// URLs are called';
    const host = url.hostname
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '')
      .toLowerCase();
    const checked = await this.checkHost(host);
    return typeof checked === 'string' ? checked : null;
  }

  /**
   * A host a connection-style transport connects to (an IMAP or SMTP server): why it may not be
   * reached (a string), or the address to connect to — the checked one, so a second lookup
   * cannot answer another (null: the operator allows the name itself; connect by name).
   */
  async checkHost(raw: string): Promise<string | { address: string | null }> {
    const host = raw
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '')
      .toLowerCase();
    if (host === '') return 'no host given';
    if (this.allow.allows(host)) return { address: null };
    const addresses = isIpLiteral(host)
      ? [host]
      : await dnsLookup(host, { all: true }).then(
          (list) => list.map((a) => a.address),
          () => [] as string[],
        );
    if (addresses.length === 0) return host === 'localhost' ? blocked(host) : `cannot resolve ${host}`;
    for (const address of addresses) {
      if (isBlockedAddress(address) && !this.allow.allows(host, address)) return blocked(host);
    }
    return { address: addresses[0]! };
  }

  /** A request to an allowed address, with a deadline; a refused address is a permanent ChannelError. */
  async fetch(url: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<Response> {
    const problem = await this.problem(url);
    if (problem !== null) throw new ChannelError(problem, true);
    const { timeoutMs, ...rest } = init;
    const signal = AbortSignal.any([
      AbortSignal.timeout(timeoutMs ?? this.timeoutMs),
      ...(rest.signal ? [rest.signal] : []),
    ]);
    try {
      return await fetch(url, { ...rest, signal, redirect: 'error' });
    } catch (err) {
      if (rest.signal?.aborted) throw err;
      throw new ChannelError(`${new URL(url).host}: ${(err as Error).message}`);
    }
  }
}

function blocked(host: string): string {
  return `Address "${host}" is blocked by the channel policy (SVC_CHANNEL_ALLOW)`;
}

/** Waits `ms`, or rejects with `aborted` as soon as `signal` fires (a connection being closed). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted'));
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(new Error('aborted'));
      },
      { once: true },
    );
  });
}
