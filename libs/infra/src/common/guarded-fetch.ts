import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { isIpLiteral } from '#core/kernel/addresses.js';

/** Why a host's address may not be connected to (the text of the failure), or null. */
export type AddressRefusal = (host: string, address: string) => string | null;

type Resolve = (host: string, callback: (err: Error | null, addresses: LookupAddress[]) => void) => void;

const systemResolve: Resolve = (host, callback) => dnsLookup(host, { all: true }, callback);

/** A connection refused by the address check; the message is the refusal's text. */
export class AddressRefused extends Error {}

/**
 * A `fetch` whose address check runs inside the connection's own DNS lookup, so the address
 * connected to is the address checked: a name that resolved to a public address for an earlier
 * check and to an internal one now (DNS rebinding) is refused. Redirects are answered, not
 * followed (each hop would need the check again). Bodies stream both ways as `fetch`'s do.
 */
export function guardedFetch(refuse: AddressRefusal, resolve: Resolve = systemResolve): typeof fetch {
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const wanted = options.family ? addresses.filter((a) => a.family === options.family) : addresses;
      for (const a of wanted) {
        const why = refuse(hostname, a.address);
        if (why !== null) return callback(new AddressRefused(why), '', 0);
      }
      if (wanted.length === 0) return callback(new Error(`${hostname} has no address`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, wanted);
      callback(null, wanted[0]!.address, wanted[0]!.family);
    });
  };
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // An address literal is never looked up: check it here.
    if (isIpLiteral(host)) {
      const why = refuse(host, host);
      if (why !== null) throw new AddressRefused(why);
    }
    const headers = new Headers(init?.headers);
    const body = init?.body === undefined || init.body === null ? undefined : await new Response(init.body).arrayBuffer();
    const signal = init?.signal ?? undefined;
    signal?.throwIfAborted();
    return new Promise<Response>((resolvePromise, reject) => {
      const client = url.protocol === 'https:' ? https : http;
      const req = client.request(
        url,
        { method: init?.method ?? 'GET', headers: Object.fromEntries(headers), lookup, agent: false },
        (res) => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
          }
          const status = res.statusCode ?? 500;
          const nullBody = status === 204 || status === 304 || init?.method === 'HEAD';
          if (nullBody) res.resume();
          resolvePromise(
            new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              statusText: res.statusMessage,
              headers: responseHeaders,
            }),
          );
        },
      );
      const abort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal?.addEventListener('abort', abort, { once: true });
      req.on('close', () => signal?.removeEventListener('abort', abort));
      req.on('error', reject);
      req.end(body === undefined ? undefined : Buffer.from(body));
    });
  };
}
