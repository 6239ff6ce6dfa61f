import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import yauzl from 'yauzl';
import { REPO_ROOT } from './test-server.js';

/** The reference snapshot of the public Digital Human Protocol catalog (never copied into the repository). */
export const REFERENCE_CATALOG = join(REPO_ROOT, '..', 'shared', 'reference', 'dhp-catalog');
export const referenceCatalogSkip = (): string | false =>
  existsSync(join(REFERENCE_CATALOG, 'index.json')) ? false : `no reference catalog at ${REFERENCE_CATALOG}`;

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A static catalog host as a store source is served: files from a folder and/or set in memory,
 * a strong ETag and Last-Modified on each, 304 for If-None-Match, 404 otherwise. Counts the
 * requests per path (and which were conditional) so tests can check what a revalidation cost.
 */
export class CatalogServer {
  readonly requests: Array<{ path: string; conditional: boolean; status: number }> = [];
  private readonly files = new Map<string, Buffer>();
  private readonly routes = new Map<string, RouteHandler>();
  private readonly prefixes: Array<[string, (req: IncomingMessage, res: ServerResponse, path: string) => void]> = [];
  private readonly modified = new Map<string, string>();
  private server!: Server;
  url = '';

  constructor(private readonly root: string | null = null) {}

  static async start(root: string | null = null): Promise<CatalogServer> {
    const s = new CatalogServer(root);
    await s.listen();
    return s;
  }

  /** Serves `content` (a string, a Buffer, or JSON for anything else) at `path`. */
  set(path: string, content: unknown): void {
    const body = Buffer.isBuffer(content)
      ? content
      : Buffer.from(typeof content === 'string' ? content : JSON.stringify(content, null, 1));
    this.files.set(path.replace(/^\/+/, ''), body);
    this.modified.set(path.replace(/^\/+/, ''), new Date().toUTCString());
  }

  remove(path: string): void {
    this.files.delete(path.replace(/^\/+/, ''));
  }

  /**
   * dhp-v2 mode: the store-server endpoints beside the static files (docs/api/store-and-packages.md, "Store-server
   * endpoints"): `/capabilities`, `POST /apps/{slug}/installs` (recorded), `/collections`,
   * `/category-taxonomy.json`, `/discover-layout.json`, and, behind `Authorization: Bearer
   * <token>`, `/my/publications` and `POST /my/publications/{author}/{id}/unpublish`. Each is
   * served only when given, so a test can leave any out.
   */
  storeServer(options: StoreServerOptions): StoreServerState {
    const state: StoreServerState = { installs: [], publications: [...(options.publications ?? [])], unpublished: [] };
    const json = (res: ServerResponse, status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const signedIn = (req: IncomingMessage) =>
      options.token !== undefined && req.headers.authorization === `Bearer ${options.token}`;
    if (options.capabilities) this.set('capabilities', options.capabilities);
    if (options.collections) this.set('collections', options.collections);
    if (options.taxonomy) this.set('category-taxonomy.json', options.taxonomy);
    if (options.layout) this.set('discover-layout.json', options.layout);
    this.prefixRoute('apps/', (req, res, path) => {
      const slug = path.slice('apps/'.length).replace(/\/installs$/, '');
      if (req.method !== 'POST' || !path.endsWith('/installs')) return json(res, 404, { error: 'not found' });
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        state.installs.push({ slug, body: body ? JSON.parse(body) : null });
        json(res, 200, { success: true });
      });
    });
    if (options.token !== undefined) {
      this.route('my/publications', (req, res) =>
        signedIn(req) ? json(res, 200, state.publications) : json(res, 401, { error: 'sign in required' }),
      );
      this.prefixRoute('my/publications/', (req, res, path) => {
        if (!signedIn(req)) return json(res, 401, { error: 'sign in required' });
        const m = /^my\/publications\/([^/]+)\/([^/]+)\/unpublish$/.exec(path);
        const pub = m ? state.publications.find((p) => p.slug === `${m[1]}/${m[2]}`) : undefined;
        if (req.method !== 'POST' || !pub) return json(res, 404, { error: 'no such publication' });
        pub.status = 'hidden';
        pub.takedownBy = 'creator';
        state.unpublished.push(pub.slug);
        json(res, 200, { success: true });
      });
    }
    return state;
  }

  /** A custom answer for every path under `prefix` (the path is handed over). */
  prefixRoute(prefix: string, handler: (req: IncomingMessage, res: ServerResponse, path: string) => void): void {
    this.prefixes.push([prefix.replace(/^\/+/, ''), handler]);
  }

  /** A custom answer for one path (redirects, slow or endless bodies). */
  route(path: string, handler: RouteHandler): void {
    this.routes.set(path.replace(/^\/+/, ''), handler);
  }

  resetCounts(): void {
    this.requests.length = 0;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  private body(path: string): Buffer | null {
    const set = this.files.get(path);
    if (set) return set;
    if (!this.root) return null;
    const full = normalize(join(this.root, path));
    if (!full.startsWith(this.root) || !existsSync(full) || !statSync(full).isFile()) return null;
    return readFileSync(full);
  }

  private listen(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/+/, '');
      const conditional = req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined;
      const record = (status: number) => this.requests.push({ path, conditional, status });
      const custom = this.routes.get(path);
      if (custom) {
        record(0);
        return custom(req, res);
      }
      const prefixed = this.prefixes.find(([p]) => path.startsWith(p));
      if (prefixed) {
        record(0);
        return prefixed[1](req, res, path);
      }
      const body = this.body(path);
      if (!body) {
        record(404);
        res.writeHead(404).end('not found');
        return;
      }
      const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
      if (req.headers['if-none-match'] === etag) {
        record(304);
        res.writeHead(304, { etag }).end();
        return;
      }
      record(200);
      res.writeHead(200, {
        etag,
        'last-modified': this.modified.get(path) ?? new Date(0).toUTCString(),
        'content-type': path.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8',
        'content-length': body.length,
      });
      res.end(body);
    });
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () => {
        this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
        resolve();
      }),
    );
  }
}

export interface PublicationRow {
  slug: string;
  version: string;
  status: 'listed' | 'hidden' | 'rejected';
  name?: string;
  takedownBy?: string;
  installs?: number;
}

export interface StoreServerOptions {
  /** The `/capabilities` document (left out: the server offers no handshake). */
  capabilities?: Record<string, unknown>;
  collections?: unknown;
  taxonomy?: unknown;
  layout?: unknown;
  /** The creator token `/my/...` accepts (left out: no creator endpoints). */
  token?: string;
  publications?: PublicationRow[];
}

export interface StoreServerState {
  installs: Array<{ slug: string; body: unknown }>;
  publications: PublicationRow[];
  unpublished: string[];
}

/** A synthetic digital human's spec, for update tests: version and texts chosen by the test. */
export function syntheticSpec(slug: string, version: string, extra: Record<string, unknown> = {}): string {
  const spec = {
    spec_version: '1',
    name: `Synthetic ${slug}`,
    version,
    author: 'tester',
    description: `Synthetic entry ${slug} at ${version}`,
    type: 'automation',
    system_prompt: `Do the ${slug} work (${version}).`,
    subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1h' } } }],
    store: { slug, category: 'data', tags: ['synthetic'] },
    ...extra,
  };
  return JSON.stringify(spec);
}

/** The index entry of a synthetic item served at `items/<slug>/`. */
export function syntheticEntry(
  slug: string,
  version: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    slug,
    name: `Synthetic ${slug}`,
    version,
    author: 'tester',
    description: `Synthetic entry ${slug} at ${version}`,
    type: 'automation',
    path: `items/${slug}`,
    category: 'data',
    tags: ['synthetic'],
    ...extra,
  };
}

export const indexDocument = (apps: unknown[]) => ({
  version: 1,
  generated_at: new Date(0).toISOString(),
  source: 'https://example.test/catalog',
  apps,
});

/** The files of a zip archive held in memory, by name (tests read exported packages with it). */
export function zipEntries(data: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(data, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const out = new Map<string, Buffer>();
      zip.on('error', reject);
      zip.on('end', () => resolve(out));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('unreadable'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/** A catalog of `count` synthetic entries (`entry-0` …), as one index document. */
export function largeIndex(count: number): ReturnType<typeof indexDocument> {
  const types = ['automation', 'skill', 'mcp'];
  const categories = ['news', 'data', 'social', 'other'];
  return indexDocument(
    Array.from({ length: count }, (_, i) => ({
      ...syntheticEntry(`entry-${i}`, `1.${i % 10}.0`),
      type: types[i % 3],
      category: categories[i % 4],
      description: `Synthetic entry number ${i}, for load: watches ${['prices', 'news', 'repos', 'tickets'][i % 4]}.`,
      tags: [`tag-${i % 50}`, 'synthetic'],
      i18n: { 'en-US': { name: `Entry ${i}` }, 'zh-CN': { name: `条目 ${i}` } },
    })),
  );
}
