import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isBlockedAddress, isIpLiteral, SOURCE_URL_PROTOCOLS } from '#core/store/address-rules.js';
import {
  CatalogFetcher,
  CatalogFetchError,
  type CatalogRequest,
  type CatalogResponse,
} from '#core/ports/catalog-fetcher.port.js';

export interface FetcherOptions {
  /** Whole request (all redirects included) gives up after this long. */
  timeoutMs?: number;
  maxRedirects?: number;
  /** Which resolved addresses a user source may not reach (tests narrow it; production uses the rule). */
  isBlocked?: (address: string) => boolean;
}

const USER_AGENT = 'svc-store/1.0';

/**
 * Store source files over HTTP(S) with node:http: conditional requests, a deadline, a body
 * size limit counted while reading, redirects followed by hand (each hop checked), and for
 * user-added sources an address check inside DNS lookup, so the address connected to is the
 * address checked (no rebinding between check and connect).
 */
export class HttpCatalogFetcher extends CatalogFetcher {
  private readonly timeoutMs: number;
  private readonly maxRedirects: number;
  private readonly isBlocked: (address: string) => boolean;

  constructor(options: FetcherOptions = {}) {
    super();
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.maxRedirects = options.maxRedirects ?? 5;
    this.isBlocked = options.isBlocked ?? isBlockedAddress;
  }

  async blockedAddressOf(hostname: string): Promise<string | null> {
    const host = hostname.replace(/^\[|\]$/g, '');
    if (isIpLiteral(host)) return this.isBlocked(host) ? host : null;
    const addresses = await new Promise<LookupAddress[]>((resolve) =>
      dnsLookup(host, { all: true }, (err, list) => resolve(err ? [] : list)),
    );
    return addresses.find((a) => this.isBlocked(a.address))?.address ?? null;
  }

  async fetch(request: CatalogRequest): Promise<CatalogResponse> {
    const deadline = Date.now() + this.timeoutMs;
    let url = request.url;
    const origin = originOf(request.url);
    for (let hop = 0; hop <= this.maxRedirects; hop++) {
      const sameOrigin = originOf(url) === origin;
      const answer = await this.once(url, sameOrigin ? request : { ...request, headers: {} }, deadline);
      if (answer.kind === 'done') return answer.response;
      url = answer.location;
    }
    throw new CatalogFetchError(`${request.url}: more than ${this.maxRedirects} redirects`);
  }

  private once(
    raw: string,
    request: CatalogRequest,
    deadline: number,
  ): Promise<{ kind: 'done'; response: CatalogResponse } | { kind: 'redirect'; location: string }> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return Promise.reject(new CatalogFetchError(`${raw} is not a URL`));
    }
    if (!SOURCE_URL_PROTOCOLS.includes(url.protocol)) {
      return Promise.reject(new CatalogFetchError(`${raw}: only http and https are fetched`));
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (request.publicOnly && isIpLiteral(host) && this.isBlocked(host)) {
      return Promise.reject(
        new CatalogFetchError(`${raw}: refused, ${host} is a loopback, private or link-local address`),
      );
    }
    const lookup: LookupFunction | undefined = request.publicOnly ? this.guardedLookup(raw) : undefined;
    const headers: Record<string, string> = { ...request.headers, 'user-agent': USER_AGENT, accept: '*/*' };
    if (request.etag) headers['if-none-match'] = request.etag;
    if (request.lastModified) headers['if-modified-since'] = request.lastModified;
    const remaining = deadline - Date.now();
    if (remaining <= 0) return Promise.reject(new CatalogFetchError(`${request.url}: timed out`));

    return new Promise((resolvePromise, rejectPromise) => {
      // The deadline holds for the whole exchange: a source that trickles its body (a byte every
      // few seconds is never idle) is cut off too, not only one that goes silent.
      const timer = setTimeout(() => req.destroy(new CatalogFetchError(`${request.url}: timed out`)), remaining);
      const resolve = (value: { kind: 'done'; response: CatalogResponse } | { kind: 'redirect'; location: string }) => {
        clearTimeout(timer);
        resolvePromise(value);
      };
      const reject = (err: unknown) => {
        clearTimeout(timer);
        rejectPromise(err);
      };
      const client = url.protocol === 'https:' ? https : http;
      const body = request.postJson === undefined ? null : Buffer.from(JSON.stringify(request.postJson));
      if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(body.length) });
      const options = { method: body ? 'POST' : 'GET', headers, ...(lookup ? { lookup } : {}), agent: false };
      const req = client.request(url, options, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && status !== 304) {
          res.resume();
          const location = res.headers.location;
          if (!location) return reject(new CatalogFetchError(`${raw}: redirect without a location`));
          return resolve({ kind: 'redirect', location: new URL(location, url).toString() });
        }
        if (status === 304) {
          res.resume();
          return resolve({ kind: 'done', response: { status: 'not-modified' } });
        }
        if (status === 404 || status === 410) {
          res.resume();
          return resolve({ kind: 'done', response: { status: 'missing' } });
        }
        if (status !== 200) {
          res.resume();
          return reject(new CatalogFetchError(`${raw}: HTTP ${status}`));
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > request.maxBytes) {
          req.destroy();
          return reject(new CatalogFetchError(`${raw}: larger than ${request.maxBytes} bytes`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > request.maxBytes) {
            req.destroy(new CatalogFetchError(`${raw}: larger than ${request.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          if (size > request.maxBytes) return;
          const etag = res.headers.etag;
          const lastModified = res.headers['last-modified'];
          resolve({
            kind: 'done',
            response: {
              status: 'ok',
              body: Buffer.concat(chunks),
              ...(etag ? { etag } : {}),
              ...(lastModified ? { lastModified } : {}),
            },
          });
        });
        res.on('error', (err) => reject(toFetchError(raw, err)));
      });
      req.setTimeout(remaining, () => req.destroy(new CatalogFetchError(`${request.url}: timed out`)));
      req.on('error', (err) => reject(toFetchError(raw, err)));
      req.end(body ?? undefined);
    });
  }

  /** DNS lookup that fails when any address the name resolves to is not public. */
  private guardedLookup(raw: string): LookupFunction {
    return (hostname, options, callback) => {
      dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
        if (err) return callback(err, '', 0);
        const bad = addresses.find((a) => this.isBlocked(a.address));
        if (bad) {
          return callback(
            new CatalogFetchError(
              `${raw}: refused, ${hostname} resolves to ${bad.address} (loopback, private or link-local)`,
            ),
            '',
            0,
          );
        }
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      });
    };
  }
}

function originOf(raw: string): string {
  try {
    return new URL(raw).origin;
  } catch {
    return raw;
  }
}

function toFetchError(url: string, err: unknown): CatalogFetchError {
  if (err instanceof CatalogFetchError) return err;
  return new CatalogFetchError(`${url}: ${err instanceof Error ? err.message : String(err)}`);
}
