import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import {
  type ApplyMode,
  type ApplyResultDto,
  type CategoryTaxonomyDto,
  type DiscoverPageDto,
  type PublicationDto,
  STORE_ENTRY_TYPES,
  type StoreCapabilitiesDto,
  type StoreDetailDto,
  type StoreEntry,
  type StoreListingDto,
  StoreChannels,
  type StoreQueryResultDto,
  type StoreUpgradeAvailableEvent,
  type UpdateItemDto,
} from '#contracts/store.js';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import type { App } from '../kernel/app.js';
import { AppsService } from '../apps/apps.service.js';
import { isMap } from '../kernel/app-spec/spec-fields.js';
import { parseSpecYaml } from '../kernel/app-spec/spec-yaml.js';
import { validateSpec } from '../kernel/app-spec/validate-spec.js';
import { DomainError } from '../errors/domain-error.js';
import { ErrorCodes } from '#contracts/errors.js';
import type { McpServerDefinition } from '../kernel/app-spec/app-spec.js';
import { McpPolicyTexts } from '../kernel/app-spec/mcp-command-policy.js';
import { settingsToNewAddress } from '../kernel/app-spec/mcp-settings-address.js';
import { CatalogFetcher } from '../ports/catalog-fetcher.port.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import {
  type BundledSkill,
  DUPLICATE_URL,
  type RegistrySource,
  type StoreInstall,
  StoreRepository,
} from '../ports/store.repository.port.js';
import { normalizeSourceUrl, sourceUrlProblem } from './address-rules.js';
import { isSafeRelativePath, isSlug } from './catalog-index.js';
import { isBuiltInServer, isServerNamed } from '../mcp/mcp-rules.js';
import { skillName } from '../skills/skill-rules.js';
import { SkillsService } from '../skills/skills.service.js';
import { isPublicCatalog, PublicCatalogs, slugPart } from './public-catalogs.js';
import { type FoundEntry, StoreCatalog } from './store-catalog.js';
import { PUBLISHING_UNAVAILABLE, StoreErrors } from './store-errors.js';
import {
  commandName,
  filterEntries,
  localized,
  PAGE_SIZE_DEFAULT,
  PAGE_SIZE_MAX,
  queryEntries,
  type StoreQuery,
  sourced,
} from './store-query.js';
import {
  parseCapabilities,
  parseCollections,
  parseTaxonomy,
  resolveLayout,
  StoreServerClient,
} from './store-server.js';
import { compareVersions, mergeAuthorUpdate, updateSeverity } from './update-merge.js';

/** Most bytes of bundled skill files fetched for one item. */
const SKILL_FILES_MAX_BYTES = 10 * 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Categories of the Digital Human Protocol (its spec/categories.md). */
const CATEGORIES = [
  ['shopping', 'Shopping', '🛒'],
  ['news', 'News', '📰'],
  ['content', 'Content', '✍️'],
  ['dev-tools', 'Developer tools', '🛠️'],
  ['productivity', 'Productivity', '📋'],
  ['data', 'Data', '📊'],
  ['social', 'Social', '💬'],
  ['other', 'Other', '📦'],
] as const;

export interface InstallRequest {
  slug: string;
  /** undefined: every workspace; null: a deliberate global install (skills and MCP apps only). */
  spaceId?: string | null;
  userConfig?: unknown;
}

/** A spec fetched from a source, checked against its entry, with the files that ship with it. */
interface FetchedItem {
  raw: Record<string, unknown>;
  skills: BundledSkill[];
}

/**
 * The Store operations (docs/api/store-and-packages.md): sources, federated query, detail,
 * install through AppsService, updates that keep the user's edits, and the publishing
 * operations (which need a dhp-v2 source, none of which this server can sign in to).
 */
@Injectable()
export class StoreService {
  private readonly log = new Logger('Store');

  constructor(
    private readonly catalog: StoreCatalog,
    private readonly repo: StoreRepository,
    private readonly apps: AppsService,
    private readonly fetcher: CatalogFetcher,
    private readonly clock: Clock,
    private readonly server: StoreServerClient,
    private readonly publicCatalogs: PublicCatalogs,
    private readonly skills: SkillsService,
    private readonly bus: EventBus,
  ) {}

  // ── sources ────────────────────────────────────────────────────────────────────────────

  listSources(): Promise<RegistrySource[]> {
    return this.catalog.sources();
  }

  async addSource(input: {
    name?: unknown;
    url?: unknown;
    sourceType?: unknown;
    adapterConfig?: unknown;
  }): Promise<RegistrySource> {
    if (typeof input.name !== 'string' || input.name.trim() === '') throw DomainError.invalid('name is required');
    if (typeof input.url !== 'string') throw DomainError.invalid('url is required');
    const problem = sourceUrlProblem(input.url);
    if (problem) throw DomainError.invalid(problem);
    const sourceType = input.sourceType ?? 'svc';
    if (sourceType !== 'svc' && sourceType !== 'dhp-v2') {
      throw DomainError.invalid('sourceType must be svc or dhp-v2 for a source added by a user');
    }
    const adapterConfig = input.adapterConfig === undefined ? null : flatConfig(input.adapterConfig, 'adapterConfig');
    const url = normalizeSourceUrl(input.url);
    const blocked = await this.fetcher.blockedAddressOf(new URL(url).hostname);
    if (blocked)
      throw DomainError.invalid(`${StoreErrors.privateHost} (${new URL(url).hostname} resolves to ${blocked})`);
    await this.catalog.builtins();
    const added = await this.repo.addSource({
      id: `src-${randomUUID().slice(0, 8)}`,
      name: input.name.trim(),
      url,
      enabled: true,
      isDefault: false,
      sourceType,
      adapterConfig,
    });
    if (added === DUPLICATE_URL)
      throw new DomainError('conflict', StoreErrors.duplicateUrl, ErrorCodes.REGISTRY_SOURCE_DUPLICATE);
    this.catalog.invalidate();
    return added;
  }

  /** Answers the failure text for a built-in source (the spec makes that an error, not an exception). */
  async deleteSource(id: string): Promise<string | null> {
    const source = await this.catalog.source(id);
    if (source.isDefault) return StoreErrors.builtInSource;
    await this.repo.deleteSource(id);
    this.catalog.forget(id);
    return null;
  }

  async toggleSource(id: string, enabled: boolean): Promise<void> {
    await this.catalog.source(id);
    await this.repo.updateSource(id, { enabled });
    this.catalog.invalidate();
  }

  /** Merges flat keys into the source's adapter config (null deletes a key); never echoed. */
  async patchAdapterConfig(id: string, patch: unknown): Promise<void> {
    const source = await this.catalog.source(id);
    const changes = flatConfig(patch, 'body', true);
    const next: Record<string, unknown> = { ...(source.adapterConfig ?? {}) };
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) delete next[key];
      else next[key] = value;
    }
    await this.repo.updateSource(id, { adapterConfig: Object.keys(next).length > 0 ? next : null });
  }

  // ── browsing ───────────────────────────────────────────────────────────────────────────

  async query(q: StoreQuery): Promise<StoreQueryResultDto> {
    checkQuery(q);
    const { entries, sources } = await this.catalog.catalog();
    return { ...queryEntries(entries, q), sources };
  }

  async list(q: StoreQuery): Promise<StoreListingDto[]> {
    checkQuery(q);
    return filterEntries((await this.catalog.catalog()).entries, q);
  }

  async detail(slug: string, locale?: string): Promise<StoreDetailDto> {
    const found = await this.catalog.find(slug);
    const item = await this.fetchItem(found.source, found.entry, false);
    return {
      entry: localized(sourced(found.source.id, found.entry), locale),
      spec: item.raw,
      registryId: found.source.id,
    };
  }

  /** The entry's README.md, or null when the source has none. */
  async appDocument(slug: string): Promise<{ content: string | null }> {
    if (!slug) throw DomainError.invalid('slug is required');
    const found = await this.catalog.find(slug);
    if (isPublicCatalog(found.source.sourceType)) return { content: null };
    const body = await this.catalog.itemFile(found.source, 'README.md', found.entry.path);
    return { content: body ? new TextDecoder().decode(body) : null };
  }

  /**
   * What the Store offers: the features a dhp-v2 source's `/capabilities` turns on. No creator
   * can sign in to a store server from this build, so `identity` is always `none`.
   */
  async capabilities(): Promise<StoreCapabilitiesDto> {
    const sources = await this.catalog.sources();
    const caps = await this.server.first(sources, 'capabilities', parseCapabilities);
    const signedIn = await this.server.publishingSource(sources);
    const identity = signedIn
      ? (parseCapabilities(await this.server.first([signedIn.source], 'capabilities', (r) => r))?.identity ?? 'token')
      : 'none';
    return {
      catalog: true,
      installs: caps?.installs ?? false,
      publish: caps?.publish ?? false,
      reviewWorkflow: caps?.reviewWorkflow ?? false,
      identity,
    };
  }

  /** A dhp-v2 source's operator-managed taxonomy, else the protocol's categories. */
  async categoryTaxonomy(): Promise<CategoryTaxonomyDto> {
    const served = await this.server.first(await this.catalog.sources(), 'category-taxonomy.json', parseTaxonomy);
    return served ?? { default: CATEGORIES.map(([id, label, icon]) => ({ id, label, icon })) };
  }

  /** A dhp-v2 source's curated layout resolved against the catalog, else one paginated catalog node. */
  async discoverPage(locale?: string, pageSize?: number): Promise<DiscoverPageDto> {
    const size = Math.min(PAGE_SIZE_MAX, pageSize ?? PAGE_SIZE_DEFAULT);
    const sources = await this.catalog.sources();
    if (sources.some((s) => s.enabled && s.sourceType === 'dhp-v2')) {
      const { entries } = await this.catalog.catalog();
      const bySlug = new Map(entries.map((e) => [e.entry.slug, e]));
      const listing = (slug: string) => (bySlug.has(slug) ? localized(bySlug.get(slug)!, locale) : undefined);
      const layout = await this.server.first(sources, 'discover-layout.json', (raw) =>
        resolveLayout(raw, listing, size),
      );
      if (layout) {
        // A `collections` node without its own list shows the server's curated collections.
        const wanting = layout.nodes.filter((n) => n.type === 'collections' && !('collections' in n));
        if (wanting.length > 0) {
          const collections = (await this.server.first(sources, 'collections', parseCollections)) ?? [];
          const resolved = collections.map((c) => {
            const entries = c.slugs.map(listing).filter((e) => e !== undefined);
            return {
              id: c.id,
              ...(c.title ? { title: c.title } : {}),
              entries: entries.slice(0, size),
              hasMore: entries.length > size,
            };
          });
          for (const node of wanting) (node as typeof node & { collections: unknown[] }).collections = resolved;
        }
        return layout;
      }
    }
    const page = await this.query({ ...(locale ? { locale } : {}), pageSize: size });
    return { version: 1, nodes: [{ type: 'catalog', title: 'All', entries: page.items, hasMore: page.hasMore }] };
  }

  commandName(name: string | undefined): string {
    return commandName(name);
  }

  revalidate(): Promise<boolean> {
    return this.catalog.readAll('conditional');
  }

  async refresh(): Promise<void> {
    await this.catalog.readAll('full');
  }

  // ── install ────────────────────────────────────────────────────────────────────────────

  async install(req: InstallRequest): Promise<App> {
    if (typeof req.slug !== 'string' || req.slug === '') throw DomainError.invalid('slug is required');
    const found = await this.catalog.find(req.slug);
    if (req.spaceId === null && (found.entry.type === 'automation' || found.entry.type === 'extension')) {
      throw DomainError.invalid(StoreErrors.globalOnlyForTools);
    }
    const item = await this.fetchItem(found.source, found.entry, true);
    const spaceId = req.spaceId ?? null;
    // Required skills and MCP servers that are neither bundled nor installed come from the
    // sources, fetched before anything is written; one missing fails the install naming it.
    const needed = await this.missingRequirements(item.raw, spaceId, found.entry.slug);
    const fetched = [];
    for (const dep of needed) fetched.push({ dep, item: await this.fetchItem(dep.source, dep.entry, true) });
    const done: App[] = [];
    try {
      for (const { dep, item: depItem } of fetched) {
        done.push(await this.installFetched(dep, depItem, spaceId, undefined));
      }
      const app = await this.installFetched(found, item, spaceId, req.userConfig);
      if (done.length > 0) {
        this.log.log({
          msg: 'store requirements installed with it',
          slug: found.entry.slug,
          with: needed.map((d) => d.entry.slug),
        });
      }
      return app;
    } catch (err) {
      // Nothing half-installed stays: the requirements installed for it go again.
      for (const dep of done.reverse()) await this.apps.deletePermanently(dep.id).catch(() => undefined);
      throw err;
    }
  }

  private async installFetched(
    found: FoundEntry,
    item: FetchedItem,
    spaceId: string | null,
    userConfig: unknown,
  ): Promise<App> {
    const app = await this.apps.install({ spec: item.raw, spaceId, userConfig, skills: item.skills });
    try {
      await this.repo.saveInstall({
        appId: app.id,
        registryId: found.source.id,
        slug: found.entry.slug,
        authorSpec: app.spec as unknown as Record<string, unknown>,
        skills: item.skills,
        ignoredVersions: [],
      });
    } catch (err) {
      // All or nothing: no app stays installed without its Store record.
      await this.apps.deletePermanently(app.id).catch(() => undefined);
      throw err;
    }
    void this.server.countInstall(found.source, found.entry.slug, found.entry.version);
    this.log.log({ msg: 'store item installed', slug: found.entry.slug, registryId: found.source.id, appId: app.id });
    return app;
  }

  /**
   * The Store entries of `requires.skills` (not bundled) and `requires.mcps` (not turned off)
   * that the scope does not have yet. A requirement is matched to an enabled source's entry of
   * that type by slug (`id` or `<author>/<id>`) or name; built-in servers (`ai-browser`) need
   * nothing. One found nowhere fails the install (404 naming it).
   */
  private async missingRequirements(
    raw: Record<string, unknown>,
    spaceId: string | null,
    slug: string,
  ): Promise<FoundEntry[]> {
    const requires = isMap(raw.requires) ? raw.requires : {};
    const skillsListed = (requires.skills ?? raw.required_skills) as unknown;
    const mcpsListed = (requires.mcps ?? raw.required_mcps) as unknown;
    const wantSkills = (Array.isArray(skillsListed) ? skillsListed : [])
      .map((s) =>
        typeof s === 'string'
          ? { id: s }
          : isMap(s) && typeof s.id === 'string' && s.bundled !== true
            ? { id: s.id }
            : null,
      )
      .filter((s): s is { id: string } => s !== null);
    const wantMcps = (Array.isArray(mcpsListed) ? mcpsListed : [])
      .map((m) =>
        typeof m === 'string'
          ? { id: m }
          : isMap(m) && typeof m.id === 'string' && m.enabled !== false
            ? { id: m.id }
            : null,
      )
      .filter((m): m is { id: string } => m !== null && !isBuiltInServer(m.id));
    if (wantSkills.length === 0 && wantMcps.length === 0) return [];
    const inScope = (await this.apps.list({})).filter((a) => a.spaceId === null || a.spaceId === spaceId);
    const skillsHere = new Set((await this.skills.list(spaceId ?? TEMP_SPACE_ID)).map((s) => s.name));
    const { entries } = await this.catalog.catalog();
    const out: FoundEntry[] = [];
    const lookup = (id: string, type: 'skill' | 'mcp') => {
      const ofType = entries.filter((e) => e.entry.type === type);
      const key = slugPart(id);
      return (
        ofType.find((e) => e.entry.slug === id) ??
        ofType.find((e) => e.entry.slug.endsWith(`/${key}`) || e.entry.slug === key) ??
        ofType.find((e) => slugPart(e.entry.name) === key)
      );
    };
    for (const need of wantSkills) {
      if (skillsHere.has(skillName(need.id))) continue;
      const hit = lookup(need.id, 'skill');
      if (!hit)
        throw DomainError.notFound(
          StoreErrors.requirementMissing('skill', need.id, slug),
          ErrorCodes.STORE_REQUIREMENT_MISSING,
        );
      out.push({ source: await this.catalog.source(hit.registryId), entry: hit.entry });
    }
    for (const need of wantMcps) {
      if (inScope.some((a) => a.spec.type === 'mcp' && a.status !== 'uninstalled' && isServerNamed(a, need.id)))
        continue;
      const hit = lookup(need.id, 'mcp');
      if (!hit)
        throw DomainError.notFound(
          StoreErrors.requirementMissing('MCP server', need.id, slug),
          ErrorCodes.STORE_REQUIREMENT_MISSING,
        );
      out.push({ source: await this.catalog.source(hit.registryId), entry: hit.entry });
    }
    return out;
  }

  // ── updates ────────────────────────────────────────────────────────────────────────────

  async updates(): Promise<UpdateItemDto[]> {
    const { entries } = await this.catalog.catalog();
    const bySource = new Map(entries.map((e) => [`${e.registryId}\n${e.entry.slug}`, e]));
    const apps = new Map((await this.apps.list({})).map((a) => [a.id, a]));
    const items: UpdateItemDto[] = [];
    for (const install of await this.repo.listInstalls()) {
      const app = apps.get(install.appId);
      if (!app || install.registryId === null || install.slug === null) continue;
      const latest = bySource.get(`${install.registryId}\n${install.slug}`);
      if (!latest || compareVersions(latest.entry.version, app.spec.version) <= 0) continue;
      if (install.ignoredVersions.includes(latest.entry.version)) continue;
      items.push({
        appId: app.id,
        currentVersion: app.spec.version,
        latestVersion: latest.entry.version,
        entry: localized(latest, undefined),
        strategy: app.upgradeStrategy,
        severity: updateSeverity(app.spec.version, latest.entry.version),
      });
    }
    return items;
  }

  /**
   * Applies the Store's newer version. A version that would send the user's stored settings to
   * another address (its MCP server moved) is held until those settings are given again in
   * `settings`: a stored secret goes only where it was given for.
   */
  async apply(appId: string, mode: ApplyMode = 'force', settings?: Record<string, unknown>): Promise<ApplyResultDto> {
    const install = await this.installOf(appId);
    const app = await this.apps.get(appId);
    const update = (await this.updates()).find((u) => u.appId === appId);
    const found = install.slug ? await this.catalog.find(install.slug).catch(() => null) : null;
    if (!found || compareVersions(found.entry.version, app.spec.version) <= 0) {
      throw new DomainError('conflict', StoreErrors.noUpdate(appId), ErrorCodes.NO_UPDATE);
    }
    const from = app.spec.version;
    const to = found.entry.version;
    const severity = update?.severity ?? updateSeverity(from, to);
    if (mode === 'patch_minor' && severity === 'major')
      throw new DomainError('conflict', StoreErrors.majorRefused(from, to), ErrorCodes.UPDATE_REFUSED);
    const item = await this.fetchItem(found.source, found.entry, true);
    const next = validateSpec(item.raw, this.clock.now()) as unknown as Record<string, unknown>;
    const original = Object.keys(install.authorSpec).length > 0 ? install.authorSpec : null;
    const merged = mergeAuthorUpdate(app.spec as unknown as Record<string, unknown>, original, next);
    const moved = settingsToNewAddress(
      app.spec.mcp_server,
      merged.spec.mcp_server as McpServerDefinition | undefined,
      app.userConfig,
    );
    const givenAgain = moved ? pickGiven(settings, moved.keys) : {};
    if (moved && Object.keys(givenAgain).length < moved.keys.length) {
      throw new DomainError(
        'conflict',
        StoreErrors.settingsToNewAddress(to, moved.keys, moved.origin),
        ErrorCodes.SETTINGS_TO_NEW_ADDRESS,
      );
    }
    try {
      await this.apps.replaceSpec(appId, merged.spec, item.skills, givenAgain);
    } catch (err) {
      // The command policy refused the new version before anything changed: say which version.
      if (err instanceof DomainError && err.code === ErrorCodes.MCP_COMMAND_BLOCKED) {
        throw DomainError.forbidden(McpPolicyTexts.update(to), ErrorCodes.MCP_COMMAND_BLOCKED);
      }
      throw err;
    }
    await this.repo.saveInstall({ ...install, authorSpec: next, skills: item.skills });
    this.log.log({ msg: 'store update applied', appId, from, to, kept: merged.kept });
    return { appId, from, to, severity, kept: merged.kept, editsKnown: merged.editsKnown };
  }

  async ignoreVersion(appId: unknown, version: unknown): Promise<void> {
    if (typeof appId !== 'string' || !UUID.test(appId)) throw DomainError.invalid('appId must be a UUID');
    if (typeof version !== 'string' || version === '') throw DomainError.invalid('version is required');
    const install = await this.installOf(appId);
    if (!install.ignoredVersions.includes(version)) {
      await this.repo.saveInstall({ ...install, ignoredVersions: [...install.ignoredVersions, version] });
    }
  }

  /** Revalidates, applies patch and minor updates of apps set to `auto`, answers what is still pending. */
  async checkNow(): Promise<UpdateItemDto[]> {
    await this.catalog.readAll('conditional');
    const pending: UpdateItemDto[] = [];
    for (const item of await this.updates()) {
      if (item.strategy === 'auto' && item.severity !== 'major') {
        try {
          await this.apply(item.appId, 'patch_minor');
          continue;
        } catch (err) {
          if (
            err instanceof DomainError &&
            (err.code === ErrorCodes.MCP_COMMAND_BLOCKED || err.reason === ErrorCodes.SETTINGS_TO_NEW_ADDRESS)
          ) {
            // Held, never applied on its own: it stays pending with the reason.
            item.heldReason = err.message;
            this.log.warn({ msg: 'automatic store update held', appId: item.appId, reason: err.message });
          } else {
            this.log.warn({ msg: 'automatic store update failed', appId: item.appId, error: String(err) });
          }
        }
      }
      pending.push(item);
      const event: StoreUpgradeAvailableEvent = {
        appId: item.appId,
        currentVersion: item.currentVersion,
        latestVersion: item.latestVersion,
        severity: item.severity,
        strategy: item.strategy,
      };
      await this.bus.publish(StoreChannels.upgradeAvailable, event).catch((err: unknown) => {
        this.log.warn({ msg: 'store event not published', error: String(err) });
      });
    }
    return pending;
  }

  // ── publishing ─────────────────────────────────────────────────────────────────────────

  /** The Store address an app would be published under, its local version and the listed one. */
  async publishPreview(input: { appId?: unknown; author?: unknown; name?: unknown }) {
    if (typeof input.appId !== 'string') throw DomainError.invalid('appId is required');
    const app = await this.apps.get(input.appId);
    const author =
      typeof input.author === 'string' && input.author !== '' ? input.author : (app.spec.author ?? 'local');
    const name = typeof input.name === 'string' && input.name !== '' ? input.name : app.spec.name;
    const slug = `${commandName(author)}/${commandName(name)}`;
    const listed = (await this.catalog.catalog()).entries.find((e) => e.entry.slug === slug);
    return { slug, localVersion: app.spec.version, storeVersion: listed?.entry.version ?? null };
  }

  /** The one installed app that matches a Store slug (and type/author when given), else null. */
  async publishFindApp(input: { slug?: unknown; type?: unknown; author?: unknown }): Promise<{ appId: string | null }> {
    if (typeof input.slug !== 'string' || input.slug === '') throw DomainError.invalid('slug is required');
    const slug = input.slug;
    const installs = new Map((await this.repo.listInstalls()).map((i) => [i.appId, i]));
    const matches = (await this.apps.list({})).filter((app) => {
      if (typeof input.type === 'string' && app.spec.type !== input.type) return false;
      if (typeof input.author === 'string' && app.spec.author !== input.author) return false;
      const derived = `${commandName(app.spec.author ?? 'local')}/${commandName(app.spec.name)}`;
      return installs.get(app.id)?.slug === slug || app.spec.store?.slug === slug || derived === slug;
    });
    return { appId: matches.length === 1 ? matches[0]!.id : null };
  }

  /** The signed-in creator's listings on the dhp-v2 source that offers publishing (403 where none does). */
  async myPublications(): Promise<PublicationDto[]> {
    const signedIn = await this.server.publishingSource(await this.catalog.sources());
    if (!signedIn) throw DomainError.forbidden(StoreErrors.publishingUnavailable, PUBLISHING_UNAVAILABLE);
    return this.server.myPublications(signedIn.source, signedIn.token);
  }

  /** Takes the creator's own listing down on the store server; installed copies are unaffected. */
  async unpublish(slug: unknown): Promise<void> {
    if (typeof slug !== 'string' || slug === '') throw DomainError.invalid('slug is required');
    if (!isSlug(slug) || !slug.includes('/')) throw DomainError.invalid('slug must be <author>/<id>');
    const signedIn = await this.server.publishingSource(await this.catalog.sources());
    if (!signedIn) throw DomainError.forbidden(StoreErrors.publishingUnavailable, PUBLISHING_UNAVAILABLE);
    await this.server.unpublish(signedIn.source, signedIn.token, slug);
    this.log.log({ msg: 'store listing unpublished', slug, registryId: signedIn.source.id });
  }

  // ── helpers ────────────────────────────────────────────────────────────────────────────

  private async installOf(appId: string): Promise<StoreInstall> {
    await this.apps.get(appId);
    const install = await this.repo.findInstall(appId);
    if (!install || install.registryId === null)
      throw new DomainError('conflict', StoreErrors.notFromStore(appId), ErrorCodes.NOT_FROM_STORE);
    return install;
  }

  /**
   * Downloads an entry's spec.yaml (`download_url` or `<path>/spec.yaml`), checks its `type` and
   * `store.slug` against the entry and, for an install, the files that ship with it.
   */
  private async fetchItem(source: RegistrySource, entry: StoreEntry, withFiles: boolean): Promise<FetchedItem> {
    if (isPublicCatalog(source.sourceType)) {
      try {
        const item = await this.publicCatalogs.item(source, entry);
        return { raw: item.raw, skills: withFiles ? item.skills : [] };
      } catch (err) {
        if (err instanceof DomainError) throw err;
        throw new DomainError(
          'unavailable',
          StoreErrors.sourceFailed(source.url, err instanceof Error ? err.message : String(err)),
          ErrorCodes.STORE_SERVER_FAILED,
        );
      }
    }
    const body = await this.catalog.itemFile(source, entry.download_url ?? 'spec.yaml', entry.path);
    if (!body)
      throw DomainError.notFound(
        `The item's spec.yaml is missing from its source (${entry.slug})`,
        ErrorCodes.PACKAGE_FILE_MISSING,
      );
    const raw = parseSpecYaml(new TextDecoder().decode(body));
    if (!isMap(raw)) throw DomainError.invalid(`The item's spec.yaml is not a YAML mapping (${entry.slug})`);
    if (raw.type !== entry.type)
      throw DomainError.invalid(StoreErrors.specMismatch('type', String(raw.type), entry.type));
    const storeSlug = isMap(raw.store) ? raw.store.slug : undefined;
    if (storeSlug !== undefined && storeSlug !== entry.slug) {
      throw DomainError.invalid(StoreErrors.specMismatch('store.slug', String(storeSlug), entry.slug));
    }
    return { raw, skills: withFiles ? await this.itemSkills(source, entry, raw) : [] };
  }

  /** Bundled skills (`<path>/skills/<id>/<file>`, or `<path>/files/skills/...`) and a skill item's `skill_files`. */
  private async itemSkills(
    source: RegistrySource,
    entry: StoreEntry,
    raw: Record<string, unknown>,
  ): Promise<BundledSkill[]> {
    const wanted: Array<{ id: string; files: string[]; at: (file: string) => string[] }> = [];
    const requires = isMap(raw.requires) ? raw.requires : {};
    const listed = (requires.skills ?? raw.required_skills) as unknown;
    for (const skill of Array.isArray(listed) ? listed : []) {
      if (!isMap(skill) || skill.bundled !== true || typeof skill.id !== 'string') continue;
      const id = skill.id;
      const files = Array.isArray(skill.files) ? skill.files.filter((f): f is string => typeof f === 'string') : [];
      wanted.push({ id, files, at: (f) => [`skills/${id}/${f}`, `files/skills/${id}/${f}`] });
    }
    if (entry.type === 'skill' && Array.isArray(raw.skill_files)) {
      const files = raw.skill_files.filter((f): f is string => typeof f === 'string');
      wanted.push({ id: commandName(String(raw.name)), files, at: (f) => [`files/${f}`] });
    }
    let total = 0;
    const out: BundledSkill[] = [];
    for (const skill of wanted) {
      const files: BundledSkill['files'] = [];
      for (const file of skill.files) {
        if (!isSafeRelativePath(file))
          throw DomainError.invalid(`Skill ${skill.id} lists an unsafe file name: ${file}`);
        let body: Uint8Array | null = null;
        for (const candidate of skill.at(file)) {
          body = await this.catalog.itemFile(source, candidate, entry.path);
          if (body) break;
        }
        if (!body)
          throw DomainError.notFound(
            `Skill ${skill.id} of ${entry.slug}: file ${file} is missing from the source`,
            ErrorCodes.PACKAGE_FILE_MISSING,
          );
        total += body.byteLength;
        if (total > SKILL_FILES_MAX_BYTES)
          throw new DomainError('too_large', `The skill files of ${entry.slug} exceed 10 MB`, ErrorCodes.TOO_LARGE);
        files.push({ path: file, base64: Buffer.from(body).toString('base64') });
      }
      out.push({ id: skill.id, files });
    }
    return out;
  }
}

function checkQuery(q: StoreQuery): void {
  if (q.type !== undefined && q.type !== '' && !STORE_ENTRY_TYPES.includes(q.type as never)) {
    throw DomainError.invalid(`type must be one of ${STORE_ENTRY_TYPES.join(', ')}`);
  }
  for (const key of ['page', 'pageSize'] as const) {
    const v = q[key];
    if (v !== undefined && (!Number.isInteger(v) || v < 1))
      throw DomainError.invalid(`${key} must be a whole number of at least 1`);
  }
}

/** A flat object of scalar values (strings, numbers, booleans; null too when patching). */
function flatConfig(value: unknown, field: string, allowNull = false): Record<string, unknown> {
  if (!isMap(value)) throw DomainError.invalid(`${field} must be a plain JSON object`);
  for (const [key, v] of Object.entries(value)) {
    const scalar =
      typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || (allowNull && v === null);
    if (!scalar) throw DomainError.invalid(`${field}.${key} must be a string, number or boolean`);
  }
  return value;
}

/** The values of `keys` that `given` holds, not empty. */
function pickGiven(given: Record<string, unknown> | undefined, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(
    keys.filter((k) => given?.[k] !== undefined && given[k] !== null && given[k] !== '').map((k) => [k, given![k]]),
  );
}
