import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { StoreEntry } from '#contracts/store.js';
import { PUBLIC_CATALOG_PROTOCOLS, type PublicCatalogProtocol } from '../config/app-config.js';
import { CatalogFetcher, CatalogFetchError } from '../ports/catalog-fetcher.port.js';
import type { BundledSkill, RegistrySource } from '../ports/store.repository.port.js';
import { addEntry, type ParsedIndex, validateEntry } from './catalog-index.js';

/** Largest page of a public catalog's listing, and largest SKILL.md, read. */
const PAGE_MAX_BYTES = 16 * 1024 * 1024;
const SKILL_MAX_BYTES = 2 * 1024 * 1024;
/** How much of a public catalog is mirrored (the listings are large; the rest is left out). */
const DEFAULT_MAX_PAGES = 20;
const DEFAULT_MAX_ENTRIES = 5000;
const RAW_GITHUB = 'https://raw.githubusercontent.com';
const SMITHERY_SERVERS = 'https://server.smithery.ai';

export function isPublicCatalog(sourceType: string | null | undefined): sourceType is PublicCatalogProtocol {
  return PUBLIC_CATALOG_PROTOCOLS.includes(sourceType as PublicCatalogProtocol);
}

/** What an adapter entry installs, kept in the entry's `meta.install`. */
type Install =
  | { kind: 'mcp'; mcp_server: Record<string, unknown>; config_schema: ConfigField[]; homepage?: string }
  /** `file` under the source address (`source`), or under the catalog's content host (`content`). */
  | { kind: 'skill'; file: string; from: 'source' | 'content' };

interface ConfigField {
  key: string;
  label: string;
  type: 'string';
  description?: string;
  required?: boolean;
  default?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** A slug part: lower-case letters, digits and `-` (docs/api/store-and-packages.md, "Catalog entries"). */
export function slugPart(value: string): string {
  return value
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)
    .replace(/-+$/, '');
}

function configKey(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** Protocol categories (the DHP's spec/categories.md) for a public catalog's own category names. */
function category(raw: string | undefined): string {
  const c = (raw ?? '').toLowerCase();
  if (/^(dev|development|ops|devops|tst|testing|sec|security)/.test(c)) return 'dev-tools';
  if (/^(dat|data)/.test(c)) return 'data';
  if (/^(doc|documents|mkt|marketing|des|design|content)/.test(c)) return 'content';
  if (/^(pro|productivity|prd|product)/.test(c)) return 'productivity';
  if (/^(news)/.test(c)) return 'news';
  if (/^(social)/.test(c)) return 'social';
  return 'other';
}

/**
 * The built-in public catalogs (protocols `mcp-registry`, `smithery`, `claude-skills`,
 * `skillhub`): each adapter reads its service's listing and converts every item into a Store
 * listing entry on read (invalid or uninstallable items are skipped and counted, as in a static
 * index). What an entry installs is kept in its `meta.install` and turned into a spec at install:
 * an `mcp` app (an HTTP endpoint, or a local command subject to the MCP policy) or a `skill` app
 * with the catalog's SKILL.md.
 *
 * Addresses: the source's own origin is operator-set (it may be internal); any other address
 * an adapter reads (a skill's content host) must be public.
 */
@Injectable()
export class PublicCatalogs {
  constructor(private readonly fetcher: CatalogFetcher) {}

  async read(source: RegistrySource): Promise<ParsedIndex> {
    const raw = await this.listing(source);
    const result: ParsedIndex = { entries: [], skipped: 0, problems: [] };
    const seen = new Set<string>();
    for (const item of raw) addEntry(result, seen, item === null ? 'nothing to install' : validateEntry(item));
    return result;
  }

  /** The spec an entry installs, and the skill files that come with it. */
  async item(
    source: RegistrySource,
    entry: StoreEntry,
  ): Promise<{ raw: Record<string, unknown>; skills: BundledSkill[] }> {
    const install = entry.meta?.install as Install | undefined;
    const base = {
      spec_version: '1',
      name: entry.name,
      version: entry.version,
      author: entry.author,
      description: entry.description,
      type: entry.type,
      store: { slug: entry.slug, category: entry.category, tags: entry.tags },
    };
    if (install?.kind === 'mcp') {
      const homepage = install.homepage && /^https?:\/\//.test(install.homepage) ? { homepage: install.homepage } : {};
      return {
        raw: {
          ...base,
          store: { ...base.store, ...homepage },
          ...(install.config_schema.length > 0 ? { config_schema: install.config_schema } : {}),
          mcp_server: install.mcp_server,
        },
        skills: [],
      };
    }
    if (install?.kind === 'skill') {
      const contentBase = (text(source.adapterConfig?.contentBase) ?? RAW_GITHUB).replace(/\/+$/, '');
      const url = sourceUrl(install.from === 'content' ? contentBase : source.url, install.file);
      const body = await this.get(source, url, SKILL_MAX_BYTES);
      if (body === null) throw new CatalogFetchError(`${url}: the skill's SKILL.md is missing`);
      const markdown = new TextDecoder().decode(body);
      const instructions = markdown.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n?/, '').trim() || entry.description;
      return {
        raw: { ...base, system_prompt: instructions },
        skills: [{ id: entry.name, files: [{ path: 'SKILL.md', base64: Buffer.from(body).toString('base64') }] }],
      };
    }
    throw new CatalogFetchError(`${entry.slug}: the catalog entry says nothing about what it installs`);
  }

  // ── listings ───────────────────────────────────────────────────────────────────────────

  /** Raw index entries (null for an item with nothing installable). */
  private listing(source: RegistrySource): Promise<Array<Record<string, unknown> | null>> {
    switch (source.sourceType) {
      case 'mcp-registry':
        return this.mcpRegistry(source);
      case 'smithery':
        return this.smithery(source);
      case 'claude-skills':
        return this.claudeSkills(source);
      case 'skillhub':
        return this.skillhub(source);
      default:
        throw new CatalogFetchError(`${String(source.sourceType)} is not a public catalog protocol`);
    }
  }

  /**
   * The official MCP registry (`GET /v0/servers?limit=&cursor=`, answer `{servers:[{server,
   * _meta}], metadata:{nextCursor, count}}`): the latest active version of each server.
   */
  private async mcpRegistry(source: RegistrySource): Promise<Array<Record<string, unknown> | null>> {
    const out = new Map<string, Record<string, unknown> | null>();
    let cursor: string | undefined;
    for (let page = 0; page < this.limit(source, 'maxPages', DEFAULT_MAX_PAGES); page++) {
      const query = `v0/servers?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const doc = await this.json(source, sourceUrl(source.url, query));
      if (!isObject(doc) || !Array.isArray(doc.servers)) throw new CatalogFetchError(`${query}: not a server list`);
      for (const item of doc.servers) {
        const server = isObject(item) && isObject(item.server) ? item.server : item;
        if (!isObject(server) || typeof server.name !== 'string') {
          out.set(`#${out.size}`, { invalid: true });
          continue;
        }
        const official =
          isObject(item) && isObject(item._meta) ? item._meta['io.modelcontextprotocol.registry/official'] : null;
        if (isObject(official) && (official.isLatest === false || official.status === 'deleted')) continue;
        out.set(server.name, mcpRegistryEntry(server));
      }
      const meta = isObject(doc.metadata) ? doc.metadata : {};
      cursor = text(meta.nextCursor) ?? text(meta.next_cursor);
      if (!cursor) break;
    }
    return [...out.values()];
  }

  /**
   * Smithery's registry (`GET /servers?page=&pageSize=` with `Authorization: Bearer <apiKey>`,
   * answer `{servers:[{qualifiedName, displayName, description, remote, useCount, ...}],
   * pagination:{currentPage, pageSize, totalPages, totalCount}}`).
   */
  private async smithery(source: RegistrySource): Promise<Array<Record<string, unknown> | null>> {
    const apiKey = text(source.adapterConfig?.apiKey);
    if (!apiKey) {
      throw new CatalogFetchError(
        'Smithery needs an API key: PATCH /api/store/registries/smithery/adapter-config {"apiKey": "..."}',
      );
    }
    const headers = { authorization: `Bearer ${apiKey}` };
    const out: Array<Record<string, unknown> | null> = [];
    const pages = this.limit(source, 'maxPages', DEFAULT_MAX_PAGES);
    for (let page = 1; page <= pages; page++) {
      const doc = await this.json(source, sourceUrl(source.url, `servers?page=${page}&pageSize=100`), headers);
      if (!isObject(doc) || !Array.isArray(doc.servers)) throw new CatalogFetchError('servers: not a server list');
      for (const s of doc.servers) out.push(isObject(s) ? smitheryEntry(s) : { invalid: true });
      const p = isObject(doc.pagination) ? doc.pagination : {};
      if (typeof p.totalPages !== 'number' || page >= p.totalPages || doc.servers.length === 0) break;
    }
    return out;
  }

  /**
   * The Claude skill registry's static search index (`search-index-manifest.json` listing
   * `search-shards/part-NNN.json`, each `{s:[{n, d, c, g, r, i}]}`); a skill's SKILL.md is read
   * from its GitHub repository (`i` is `owner/repo/path`) at install.
   */
  private async claudeSkills(source: RegistrySource): Promise<Array<Record<string, unknown> | null>> {
    const manifest = await this.json(source, sourceUrl(source.url, 'search-index-manifest.json'));
    const shards = isObject(manifest) && Array.isArray(manifest.shards) ? manifest.shards : null;
    if (!shards) throw new CatalogFetchError('search-index-manifest.json: no shards');
    const max = this.limit(source, 'maxEntries', DEFAULT_MAX_ENTRIES);
    const out: Array<Record<string, unknown> | null> = [];
    const slugs = new Set<string>();
    for (const shard of shards) {
      if (out.length >= max) break;
      const path = isObject(shard) ? text(shard.path) : undefined;
      if (!path || path.includes('..') || /^[a-z]+:/i.test(path))
        throw new CatalogFetchError('a shard path is invalid');
      const doc = await this.json(source, sourceUrl(source.url, path));
      if (!isObject(doc) || !Array.isArray(doc.s)) throw new CatalogFetchError(`${path}: no skills array`);
      for (const s of doc.s.slice(0, max - out.length)) out.push(isObject(s) ? claudeSkillEntry(s, slugs) : null);
    }
    return out;
  }

  /**
   * SkillHub (`GET /api/v1/skills?limit=&cursor=`, answer `{items:[{slug, displayName, summary,
   * tags:{latest}, stats, latestVersion:{version}}], nextCursor}` — the ClawHub registry API it
   * mirrors); a skill's SKILL.md is `GET /api/v1/skills/<slug>/file?path=SKILL.md`.
   */
  private async skillhub(source: RegistrySource): Promise<Array<Record<string, unknown> | null>> {
    const out: Array<Record<string, unknown> | null> = [];
    let cursor: string | undefined;
    for (let page = 0; page < this.limit(source, 'maxPages', DEFAULT_MAX_PAGES); page++) {
      const query = `api/v1/skills?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const doc = await this.json(source, sourceUrl(source.url, query));
      if (!isObject(doc) || !Array.isArray(doc.items)) throw new CatalogFetchError(`${query}: not a skill list`);
      for (const s of doc.items) out.push(isObject(s) ? skillhubEntry(s) : null);
      cursor = text(doc.nextCursor);
      if (!cursor) break;
    }
    return out;
  }

  // ── fetching ───────────────────────────────────────────────────────────────────────────

  private limit(source: RegistrySource, key: string, fallback: number): number {
    const v = source.adapterConfig?.[key];
    return typeof v === 'number' && Number.isInteger(v) && v > 0 ? Math.min(v, 1000) : fallback;
  }

  private async json(source: RegistrySource, url: string, headers?: Record<string, string>): Promise<unknown> {
    const body = await this.get(source, url, PAGE_MAX_BYTES, headers);
    if (body === null) throw new CatalogFetchError(`${url}: not found`);
    try {
      return JSON.parse(new TextDecoder().decode(body));
    } catch {
      throw new CatalogFetchError(`${url}: not valid JSON`);
    }
  }

  private async get(
    source: RegistrySource,
    url: string,
    maxBytes: number,
    headers?: Record<string, string>,
  ): Promise<Uint8Array | null> {
    const own = originOf(url) === originOf(source.url);
    const res = await this.fetcher.fetch({
      url,
      maxBytes,
      publicOnly: !(own && source.isDefault),
      ...(headers ? { headers } : {}),
    });
    return res.status === 'ok' ? res.body : null;
  }
}

/** Joins a source address and a relative path (as catalog-reader's sourceUrl; kept here to avoid an import cycle). */
function sourceUrl(base: string, relative: string): string {
  return `${base.replace(/\/+$/, '')}/${relative.replace(/^\/+/, '')}`;
}

function originOf(raw: string): string {
  try {
    return new URL(raw).origin;
  } catch {
    return raw;
  }
}

// ── conversions ──────────────────────────────────────────────────────────────────────────

/** A server.json of the MCP registry as a listing entry (null when it offers no way to run it). */
export function mcpRegistryEntry(server: Record<string, unknown>): Record<string, unknown> | null {
  const name = server.name as string;
  const [namespace, ...rest] = name.split('/');
  const id = rest.join('-') || namespace!;
  const install = mcpRegistryInstall(server);
  if (!install) return null;
  const repository = isObject(server.repository) ? text(server.repository.url) : undefined;
  const homepage = text(server.websiteUrl) ?? repository;
  return {
    slug: rest.length > 0 ? `${slugPart(namespace!)}/${slugPart(id)}` : slugPart(id),
    name: text(server.title) ?? id,
    version: text(server.version) ?? '0.0.0',
    author: namespace,
    description: text(server.description) ?? name,
    type: 'mcp',
    path: `mcp-registry/${slugPart(name)}`,
    category: 'dev-tools',
    tags: ['mcp', install.mcp_server.type === 'http' ? 'remote' : 'local'],
    meta: { install: { ...install, ...(homepage ? { homepage } : {}) }, registryName: name },
  };
}

function mcpRegistryInstall(server: Record<string, unknown>): Extract<Install, { kind: 'mcp' }> | null {
  const fields: ConfigField[] = [];
  const setting = (name: string, description: unknown, required: unknown, fallback?: unknown): string => {
    const key = configKey(name) || `setting_${fields.length}`;
    if (!fields.some((f) => f.key === key)) {
      fields.push({
        key,
        label: name,
        type: 'string',
        ...(text(description) ? { description: text(description) } : {}),
        ...(required === true ? { required: true } : {}),
        ...(typeof fallback === 'string' ? { default: fallback } : {}),
      });
    }
    return `{{config.${key}}}`;
  };
  const remotes = Array.isArray(server.remotes) ? server.remotes.filter(isObject) : [];
  const remote = remotes.find((r) => (r.type === 'streamable-http' || r.type === 'http') && text(r.url));
  if (remote) {
    const headers: Record<string, string> = {};
    for (const h of Array.isArray(remote.headers) ? remote.headers.filter(isObject) : []) {
      const hname = text(h.name);
      if (!hname) continue;
      headers[hname] =
        h.isSecret !== true && text(h.value) ? text(h.value)! : setting(hname, h.description, h.isRequired);
    }
    return {
      kind: 'mcp',
      mcp_server: { type: 'http', url: text(remote.url)!, ...(Object.keys(headers).length ? { headers } : {}) },
      config_schema: fields,
    };
  }
  const packages = Array.isArray(server.packages) ? server.packages.filter(isObject) : [];
  for (const pkg of packages) {
    const transport = isObject(pkg.transport) ? pkg.transport.type : 'stdio';
    const identifier = text(pkg.identifier);
    if (transport !== 'stdio' || !identifier) continue;
    const version = text(pkg.version);
    const env: Record<string, string> = {};
    for (const v of Array.isArray(pkg.environmentVariables) ? pkg.environmentVariables.filter(isObject) : []) {
      const vname = text(v.name);
      if (vname) env[vname] = setting(vname, v.description, v.isRequired, v.isSecret === true ? undefined : v.default);
    }
    const extra = (Array.isArray(pkg.packageArguments) ? pkg.packageArguments.filter(isObject) : [])
      .filter((a) => a.type === 'positional' && text(a.value))
      .map((a) => text(a.value)!);
    let command: string;
    let args: string[];
    if (pkg.registryType === 'npm') {
      command = 'npx';
      args = ['-y', version ? `${identifier}@${version}` : identifier];
    } else if (pkg.registryType === 'pypi') {
      command = 'uvx';
      args = [version ? `${identifier}==${version}` : identifier];
    } else if (pkg.registryType === 'oci') {
      command = 'docker';
      args = ['run', '-i', '--rm', ...Object.keys(env).flatMap((k) => ['-e', k]), identifier];
    } else continue;
    return {
      kind: 'mcp',
      mcp_server: { command, args: [...args, ...extra], ...(Object.keys(env).length ? { env } : {}) },
      config_schema: fields,
    };
  }
  return null;
}

/** A Smithery server: hosted ones over HTTP through Smithery, the others run by its CLI. */
export function smitheryEntry(s: Record<string, unknown>): Record<string, unknown> | null {
  const qualified = text(s.qualifiedName);
  if (!qualified) return { invalid: true };
  const bare = qualified.replace(/^@/, '');
  const [owner, ...rest] = bare.split('/');
  const mcp_server =
    s.remote === true
      ? { type: 'http', url: `${SMITHERY_SERVERS}/${qualified}/mcp?api_key={{config.smithery_api_key}}` }
      : { command: 'npx', args: ['-y', '@smithery/cli@latest', 'run', qualified] };
  const config_schema: ConfigField[] =
    s.remote === true ? [{ key: 'smithery_api_key', label: 'Smithery API key', type: 'string', required: true }] : [];
  return {
    slug: rest.length > 0 ? `${slugPart(owner!)}/${slugPart(rest.join('-'))}` : slugPart(bare),
    name: text(s.displayName) ?? bare,
    version: '1.0.0',
    author: rest.length > 0 ? owner : 'smithery',
    description: text(s.description) ?? bare,
    type: 'mcp',
    path: `smithery/${slugPart(bare)}`,
    category: 'dev-tools',
    tags: [
      'mcp',
      s.remote === true ? 'remote' : 'local',
      ...(s.verified === true || s.isVerified === true ? ['verified'] : []),
    ],
    ...(text(s.iconUrl) ? { icon: text(s.iconUrl) } : {}),
    ...(text(s.createdAt) ? { created_at: text(s.createdAt) } : {}),
    meta: {
      install: { kind: 'mcp', mcp_server, config_schema, ...(text(s.homepage) ? { homepage: text(s.homepage) } : {}) },
      ...(typeof s.useCount === 'number' ? { installs: s.useCount } : {}),
      qualifiedName: qualified,
    },
  };
}

/** A skill of the Claude skill registry's search index (`n` name, `d` description, `c` category, `g` tags, `r` stars, `i` install path). */
export function claudeSkillEntry(s: Record<string, unknown>, slugs: Set<string>): Record<string, unknown> | null {
  const name = text(s.n);
  const install = text(s.i);
  if (!name || !install) return { invalid: true };
  const parts = install.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  if (parts.length < 2) return { invalid: true };
  const [owner, repo, ...path] = parts;
  const file =
    path.length > 0 && /\.md$/i.test(path[path.length - 1]!) ? path.join('/') : [...path, 'SKILL.md'].join('/');
  let slug = `${slugPart(owner!)}/${slugPart(name)}`;
  if (slugs.has(slug)) slug = `${slug}-${createHash('sha256').update(install).digest('hex').slice(0, 6)}`;
  slugs.add(slug);
  return {
    slug,
    name,
    version: '1.0.0',
    author: owner,
    description: text(s.d) ?? name,
    type: 'skill',
    path: `claude-skills/${slug}`,
    category: category(text(s.c)),
    tags: Array.isArray(s.g) ? s.g.filter((t): t is string => typeof t === 'string') : [],
    meta: {
      install: { kind: 'skill', from: 'content', file: `${owner}/${repo}/HEAD/${file}` },
      ...(typeof s.r === 'number' ? { stars: s.r } : {}),
      installPath: install,
    },
  };
}

/** A SkillHub skill; its SKILL.md is read through the hub's file API at install. */
export function skillhubEntry(s: Record<string, unknown>): Record<string, unknown> | null {
  const slug = text(s.slug);
  if (!slug) return { invalid: true };
  const latest = isObject(s.latestVersion) ? text(s.latestVersion.version) : undefined;
  const tagged = isObject(s.tags) ? text(s.tags.latest) : undefined;
  const stats = isObject(s.stats) ? s.stats : {};
  const owner = isObject(s.owner) ? text(s.owner.handle) : text(s.author);
  return {
    slug: slugPart(slug),
    name: text(s.displayName) ?? slug,
    version: latest ?? tagged ?? '1.0.0',
    author: owner ?? 'skillhub',
    description: text(s.summary) ?? text(s.displayName) ?? slug,
    type: 'skill',
    path: `skillhub/${slugPart(slug)}`,
    category: category(text(s.category)),
    tags: [],
    ...(typeof s.updatedAt === 'number' ? { updated_at: new Date(s.updatedAt).toISOString() } : {}),
    meta: {
      install: { kind: 'skill', from: 'source', file: `api/v1/skills/${encodeURIComponent(slug)}/file?path=SKILL.md` },
      ...(typeof stats.downloads === 'number' ? { downloads: stats.downloads } : {}),
      ...(typeof stats.installsAllTime === 'number' ? { installs: stats.installsAllTime } : {}),
    },
  };
}
