/** One HTTP request to a store source: a GET of a file, or a small JSON POST. */
export interface CatalogRequest {
  url: string;
  /** Validators of the copy held: sent as If-None-Match / If-Modified-Since. */
  etag?: string;
  lastModified?: string;
  /** The body is cut off (and the fetch fails) past this many bytes. */
  maxBytes: number;
  /**
   * User-added sources: every address connected to (after DNS resolution and after each
   * redirect) must be public. Built-in sources are operator-set and may be internal.
   */
  publicOnly: boolean;
  /**
   * Extra request headers (a public catalog's API key). Sent only to the origin of `url`: a
   * redirect to another origin drops them.
   */
  headers?: Record<string, string>;
  /** A JSON body to POST (store-server calls such as install counts); GET without one. */
  postJson?: unknown;
}

export type CatalogResponse =
  | { status: 'ok'; body: Uint8Array; etag?: string; lastModified?: string }
  | { status: 'not-modified' }
  /** 404 or 410: the file is not there. */
  | { status: 'missing' };

/** Any other failure: network, timeout, too large, refused address, another HTTP status. */
export class CatalogFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogFetchError';
  }
}

/** Reads files of store sources over HTTP, with timeouts, size limits and address rules. */
export abstract class CatalogFetcher {
  abstract fetch(request: CatalogRequest): Promise<CatalogResponse>;
  /** Resolves a host name and answers the first address that a user source may not reach, or null. */
  abstract blockedAddressOf(hostname: string): Promise<string | null>;
}
