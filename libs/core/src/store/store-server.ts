import { Injectable, Logger } from '@nestjs/common';
import type {
  CategoryDto,
  CategoryTaxonomyDto,
  DiscoverNodeDto,
  DiscoverPageDto,
  PublicationDto,
  StoreListingDto,
} from '#contracts/store.js';
import { ErrorCodes } from '#contracts/errors.js';
import { DomainError } from '../errors/domain-error.js';
import { CatalogFetcher, CatalogFetchError } from '../ports/catalog-fetcher.port.js';
import { Clock } from '../ports/clock.port.js';
import type { RegistrySource } from '../ports/store.repository.port.js';
import { sourceUrl } from './catalog-reader.js';

/** Store-server answers are small documents. */
const DOCUMENT_MAX_BYTES = 1024 * 1024;
const FRESH_MS = 60 * 60 * 1000;
const RETRY_MS = 5 * 60 * 1000;

export interface ServerCapabilities {
  installs: boolean;
  publish: boolean;
  reviewWorkflow: boolean;
  /** The identity scheme the server names (`identity` string), if any. */
  identity?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `/capabilities` of a dhp-v2 server: the features it says it offers (anything else counts as off). */
export function parseCapabilities(raw: unknown): ServerCapabilities | null {
  if (!isObject(raw)) return null;
  const on = (key: string) =>
    raw[key] === true || (isObject(raw[key]) && (raw[key] as { enabled?: unknown }).enabled === true);
  const identity = typeof raw.identity === 'string' && raw.identity !== 'none' ? { identity: raw.identity } : {};
  return { installs: on('installs'), publish: on('publish'), reviewWorkflow: on('reviewWorkflow'), ...identity };
}

const PUBLICATION_STATUSES = ['listed', 'hidden', 'rejected'] as const;

/** `/my/publications`: an array (or `{publications}` / `{items}`) of the creator's listings; bad rows left out. */
export function parsePublications(raw: unknown): PublicationDto[] | null {
  const list = Array.isArray(raw)
    ? raw
    : isObject(raw)
      ? ([raw.publications, raw.items].find(Array.isArray) as unknown[] | undefined)
      : undefined;
  if (!list) return null;
  const out: PublicationDto[] = [];
  for (const p of list) {
    if (!isObject(p) || typeof p.slug !== 'string' || typeof p.version !== 'string') continue;
    if (!PUBLICATION_STATUSES.includes(p.status as PublicationDto['status'])) continue;
    const row: PublicationDto = { slug: p.slug, version: p.version, status: p.status as PublicationDto['status'] };
    for (const key of [
      'name',
      'displayName',
      'type',
      'takedownBy',
      'rejectReason',
      'submittedAt',
      'channel',
    ] as const) {
      if (typeof p[key] === 'string') row[key] = p[key];
    }
    if (typeof p.installs === 'number') row.installs = p.installs;
    out.push(row);
  }
  return out;
}

/** `/collections`: an array (or `{collections}`) of `{id, title?, slugs|entries}`; null when malformed. */
export function parseCollections(raw: unknown): Array<{ id: string; title?: string; slugs: string[] }> | null {
  const list = Array.isArray(raw) ? raw : isObject(raw) && Array.isArray(raw.collections) ? raw.collections : null;
  if (!list) return null;
  const out: Array<{ id: string; title?: string; slugs: string[] }> = [];
  for (const c of list) {
    if (!isObject(c) || typeof c.id !== 'string') continue;
    const items = ([c.slugs, c.entries, c.apps].find(Array.isArray) as unknown[] | undefined) ?? [];
    const slugs = items
      .map((s) => (typeof s === 'string' ? s : isObject(s) && typeof s.slug === 'string' ? s.slug : ''))
      .filter((s) => s !== '');
    out.push({ id: c.id, ...(typeof c.title === 'string' ? { title: c.title } : {}), slugs });
  }
  return out;
}

function parseCategories(raw: unknown): CategoryDto[] | null {
  if (!Array.isArray(raw)) return null;
  const out: CategoryDto[] = [];
  for (const c of raw) {
    if (!isObject(c) || typeof c.id !== 'string' || c.id === '') return null;
    const label = typeof c.label === 'string' ? c.label : typeof c.labelKey === 'string' ? c.labelKey : c.id;
    out.push({ id: c.id, label, ...(typeof c.icon === 'string' ? { icon: c.icon } : {}) });
  }
  return out;
}

/** `/category-taxonomy.json`: a `default` list, plus lists keyed by app type; null when malformed. */
export function parseTaxonomy(raw: unknown): CategoryTaxonomyDto | null {
  if (!isObject(raw)) return null;
  const fallback = parseCategories(raw.default);
  if (!fallback) return null;
  const taxonomy: CategoryTaxonomyDto = { default: fallback };
  for (const type of ['automation', 'skill', 'mcp', 'extension']) {
    const list = parseCategories(raw[type]);
    if (list) taxonomy[type] = list;
  }
  return taxonomy;
}

/**
 * `/discover-layout.json` resolved against the catalog: each node keeps its type and titles;
 * the slugs it lists (`entries` or `slugs`) become listing entries (unknown slugs left out),
 * at most `pageSize` per node with `hasMore`. `collections` pass through as served.
 */
export function resolveLayout(
  raw: unknown,
  listing: (slug: string) => StoreListingDto | undefined,
  pageSize: number,
): DiscoverPageDto | null {
  if (!isObject(raw) || !Array.isArray(raw.nodes)) return null;
  const nodes: DiscoverNodeDto[] = [];
  for (const n of raw.nodes) {
    if (!isObject(n) || typeof n.type !== 'string') return null;
    const node: DiscoverNodeDto = { type: n.type };
    if (typeof n.title === 'string') node.title = n.title;
    if (typeof n.subtitle === 'string') node.subtitle = n.subtitle;
    const slugs = [n.entries, n.slugs].find(Array.isArray) as unknown[] | undefined;
    if (slugs) {
      const found = slugs
        .map((s) => (typeof s === 'string' ? s : isObject(s) && typeof s.slug === 'string' ? s.slug : ''))
        .map((s) => listing(s))
        .filter((e): e is StoreListingDto => e !== undefined);
      node.entries = found.slice(0, pageSize);
      node.hasMore = found.length > pageSize;
    }
    if (Array.isArray(n.collections))
      (node as DiscoverNodeDto & { collections: unknown[] }).collections = n.collections;
    nodes.push(node);
  }
  return { version: typeof raw.version === 'number' ? raw.version : 1, nodes };
}

/**
 * Reads the optional store-server documents of dhp-v2 sources (capabilities handshake,
 * category taxonomy, discover layout), each kept for an hour per replica (five minutes after a
 * failure). A source that does not offer one simply has none.
 */
@Injectable()
export class StoreServerClient {
  private readonly log = new Logger('Store');
  private readonly cache = new Map<string, { at: number; ttl: number; value: unknown }>();

  constructor(
    private readonly fetcher: CatalogFetcher,
    private readonly clock: Clock,
  ) {}

  /** The first enabled dhp-v2 source's answer to `file`, parsed; null when none answers. */
  async first<T>(sources: RegistrySource[], file: string, parse: (raw: unknown) => T | null): Promise<T | null> {
    for (const source of sources) {
      if (!source.enabled || source.sourceType !== 'dhp-v2') continue;
      const value = parse(await this.document(source, file));
      if (value !== null) return value;
    }
    return null;
  }

  /**
   * Tells a dhp-v2 source that offers install counts about an install (`POST
   * /apps/{slug}/installs`); a failure is logged, never the install's.
   */
  async countInstall(source: RegistrySource, slug: string, version: string): Promise<void> {
    if (!source.enabled || source.sourceType !== 'dhp-v2') return;
    const caps = parseCapabilities(await this.document(source, 'capabilities'));
    if (!caps?.installs) return;
    try {
      await this.fetcher.fetch({
        url: sourceUrl(source.url, `apps/${slug.split('/').map(encodeURIComponent).join('/')}/installs`),
        maxBytes: DOCUMENT_MAX_BYTES,
        publicOnly: !source.isDefault,
        postJson: { version },
      });
    } catch (err) {
      this.log.warn({ msg: 'store install count failed', registryId: source.id, slug, error: String(err) });
    }
  }

  /** The dhp-v2 source a creator publishes through: it offers publishing and holds a sign-in token. */
  async publishingSource(sources: RegistrySource[]): Promise<{ source: RegistrySource; token: string } | null> {
    for (const source of sources) {
      if (!source.enabled || source.sourceType !== 'dhp-v2') continue;
      const token = source.adapterConfig?.token;
      if (typeof token !== 'string' || token === '') continue;
      if (parseCapabilities(await this.document(source, 'capabilities'))?.publish) return { source, token };
    }
    return null;
  }

  /** `GET /my/publications` as the signed-in creator. */
  async myPublications(source: RegistrySource, token: string): Promise<PublicationDto[]> {
    const res = await this.signed(source, token, 'my/publications');
    const list = parsePublications(res === null ? null : JSON.parse(new TextDecoder().decode(res)));
    if (!list)
      throw new DomainError(
        'unavailable',
        `${source.url}/my/publications did not answer a publication list`,
        ErrorCodes.STORE_SERVER_FAILED,
      );
    return list;
  }

  /** `POST /my/publications/{author}/{id}/unpublish` as the signed-in creator. */
  async unpublish(source: RegistrySource, token: string, slug: string): Promise<void> {
    const [author, id] = slug.split('/');
    const path = `my/publications/${encodeURIComponent(author!)}/${encodeURIComponent(id!)}/unpublish`;
    const res = await this.signed(source, token, path, {});
    if (res === null)
      throw DomainError.notFound(
        `No publication ${slug} of the signed-in creator on ${source.url}`,
        ErrorCodes.STORE_ITEM_NOT_FOUND,
      );
  }

  private async signed(
    source: RegistrySource,
    token: string,
    path: string,
    post?: unknown,
  ): Promise<Uint8Array | null> {
    try {
      const res = await this.fetcher.fetch({
        url: sourceUrl(source.url, path),
        maxBytes: DOCUMENT_MAX_BYTES,
        publicOnly: !source.isDefault,
        headers: { authorization: `Bearer ${token}` },
        ...(post !== undefined ? { postJson: post } : {}),
      });
      return res.status === 'ok' ? res.body : null;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      if (err instanceof CatalogFetchError && /HTTP (401|403)\b/.test(why)) {
        throw DomainError.forbidden(
          `The store server refused the creator's sign-in (${why})`,
          ErrorCodes.PUBLISHING_UNAVAILABLE,
        );
      }
      throw new DomainError('unavailable', `Store server ${source.url} failed: ${why}`, ErrorCodes.STORE_SERVER_FAILED);
    }
  }

  private async document(source: RegistrySource, file: string): Promise<unknown> {
    const key = `${source.id}\n${source.url}\n${file}`;
    const now = this.clock.now();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < hit.ttl) return hit.value;
    let value: unknown = null;
    let ttl = FRESH_MS;
    try {
      const res = await this.fetcher.fetch({
        url: sourceUrl(source.url, file),
        maxBytes: DOCUMENT_MAX_BYTES,
        publicOnly: !source.isDefault,
      });
      value = res.status === 'ok' ? JSON.parse(new TextDecoder().decode(res.body)) : null;
    } catch (err) {
      ttl = RETRY_MS;
      this.log.warn({ msg: 'store server document failed', registryId: source.id, file, error: String(err) });
    }
    this.cache.set(key, { at: now, ttl, value });
    return value;
  }
}
