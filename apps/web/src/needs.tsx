import type { AppDto } from '#contracts/apps.js';
import type { AppConfiguration } from '#contracts/models.js';
import type { StoreQueryResultDto } from '#contracts/store.js';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { href } from './route.js';

/** The MCP server built into this server (docs/api/ai-browser.md, "Who gets it"): never "not installed". */
const AI_BROWSER = 'ai-browser';

/** One thing a digital human's spec needs, and whether this server has it. */
export interface Need {
  kind: 'mcp' | 'browser';
  /** The server id as the spec names it (`requires.mcps[].id`), or `ai-browser`. */
  id: string;
  /** Why the spec says it needs it, when it says. */
  reason: string;
  /**
   * `available`: here; `with-install`: not installed, but a Store install brings it along from a
   * Store source (docs/api/store-and-packages.md, "Requirements"); `missing`: neither.
   */
  state: 'available' | 'with-install' | 'missing';
  /** What provides it here, or the Store entry an install brings along ('' when nothing does). */
  providedBy: string;
  /** A configured server of that name, when only the configuration has it (chats get it; runs and Store installs do not). */
  configuredAs: string;
}

/** A Store entry of type `mcp` an install could bring along: what the server matches a requirement on. */
export interface StoreServer {
  slug: string;
  name: string;
}

/** A slug made of a name the Store's way (`GitHub Tools` → `github-tools`). */
const slugPart = (value: string): string =>
  value
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

/** The Store entry a requirement `id` names, matched as the Store's install does: slug, the slug's last part, then name. */
function storeServerFor(id: string, offered: StoreServer[]): StoreServer | undefined {
  const key = slugPart(id);
  return (
    offered.find((e) => e.slug === id) ??
    offered.find((e) => e.slug.endsWith(`/${key}`) || e.slug === key) ??
    offered.find((e) => slugPart(e.name) === key)
  );
}

/** The `mcpServers` configuration branch as GET /api/config answers it (docs/api/mcp-and-skills.md). */
export type ConfiguredServers = Record<string, { disabled?: boolean } & Record<string, unknown>>;

/** A name made fit for tool names the server's way (`Calc Tools` → `calc-tools`): how it matches server ids. */
export function serverNameOf(raw: string): string {
  const name = raw
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .replace(/__+/g, '_');
  return name || 'server';
}

/**
 * The MCP servers a spec requires, by id, with their reasons: `requires.mcps` (objects or bare
 * ids) or the older `required_mcps` / `requires.mcp` a Store entry's spec may still carry, plus
 * the listing's `requires_mcps`. One marked `enabled: false` is not used, so not needed.
 */
function requiredServers(spec: Record<string, unknown>, listed: string[] = []): Map<string, string> {
  const requires = (spec.requires ?? {}) as { mcps?: unknown; mcp?: unknown };
  const raw = [requires.mcps, requires.mcp, spec.required_mcps].find(Array.isArray) as unknown[] | undefined;
  const out = new Map<string, string>();
  for (const item of [...(raw ?? []), ...listed]) {
    const need =
      typeof item === 'string' ? { id: item } : (item as { id?: unknown; reason?: unknown; enabled?: unknown });
    if (typeof need?.id !== 'string' || need.id.trim() === '' || need.enabled === false) continue;
    const id = need.id.trim();
    const known = [...out.keys()].find((k) => k.toLowerCase() === id.toLowerCase());
    if (known === undefined) out.set(id, typeof need.reason === 'string' ? need.reason : '');
  }
  return out;
}

/**
 * What a spec needs and whether this server has each (docs/web-app.md, "What a digital human
 * needs"): its MCP servers, found among the active `mcp` apps of the space and global ones (by
 * name, server name or Store slug, as the server matches them) and the configured `mcpServers`
 * that are not disabled; and the AI browser when `permissions` lists it (built in here, so
 * available unless this installed digital human's permission was turned off).
 *
 * Before a Store install (`store` given: the Store's `mcp` entries), only an installed app counts,
 * as for the install itself: one a Store source offers comes along with it, and one nobody offers
 * makes the Store refuse the install, whatever the configuration holds.
 */
export function needsOf(
  spec: Record<string, unknown>,
  context: {
    installed: AppDto[];
    configured: ConfiguredServers;
    spaceId: string;
    listed?: string[];
    app?: AppDto;
    store?: StoreServer[];
  },
): Need[] {
  const needs: Need[] = [];
  const servers = requiredServers(spec, context.listed);
  const permissions = Array.isArray(spec.permissions) ? (spec.permissions as unknown[]) : [];
  const wantsBrowser =
    permissions.includes(AI_BROWSER) || [...servers.keys()].some((id) => id.toLowerCase() === AI_BROWSER);
  if (wantsBrowser) {
    const deniedHere = context.app?.permissions.denied.includes(AI_BROWSER) ?? false;
    needs.push({
      kind: 'browser',
      id: AI_BROWSER,
      reason: servers.get(AI_BROWSER) ?? '',
      state: deniedHere ? 'missing' : 'available',
      providedBy: deniedHere ? '' : 'built into this server',
      configuredAs: '',
    });
  }
  for (const [id, reason] of servers) {
    if (id.toLowerCase() === AI_BROWSER) continue;
    const wanted = id.toLowerCase();
    const app = context.installed.find(
      (a) =>
        a.spec.type === 'mcp' &&
        a.status === 'active' &&
        (a.spaceId === null || a.spaceId === context.spaceId) &&
        (String(a.spec.name).toLowerCase() === wanted ||
          serverNameOf(String(a.spec.name)) === serverNameOf(id) ||
          String((a.spec.store as { slug?: unknown } | undefined)?.slug ?? '').toLowerCase() === wanted),
    );
    const configured = Object.entries(context.configured).find(
      ([key, def]) =>
        def?.disabled !== true && (key.toLowerCase() === wanted || serverNameOf(key) === serverNameOf(id)),
    );
    const configuredAs = configured?.[0] ?? '';
    const offered = context.store && !app ? storeServerFor(id, context.store) : undefined;
    needs.push({
      kind: 'mcp',
      id,
      reason,
      state: app ? 'available' : offered ? 'with-install' : configured && !context.store ? 'available' : 'missing',
      providedBy: app
        ? `installed: ${String(app.spec.display_name ?? app.spec.name)}`
        : offered
          ? offered.name
          : configured && !context.store
            ? `configured in Settings as ${configuredAs}`
            : '',
      configuredAs,
    });
  }
  return needs;
}

interface Inventory {
  installed: AppDto[];
  configured: ConfiguredServers;
  /** The Store's `mcp` entries that could come along with an install (read only before a Store install). */
  store?: StoreServer[];
}

/**
 * What the needs are checked against, read once per mount: the installed apps, the configured
 * MCP servers, and before a Store install the Store's `mcp` entries matching each required id.
 */
function useInventory(
  spec: Record<string, unknown>,
  listed: string[] | undefined,
  forStore: boolean,
): Inventory | null {
  const [inventory, setInventory] = useState<Inventory | null>(null);
  useEffect(() => {
    let live = true;
    const ids = [...requiredServers(spec, listed).keys()].filter((id) => id.toLowerCase() !== AI_BROWSER);
    const storeServers = async (): Promise<StoreServer[] | undefined> => {
      if (!forStore) return undefined;
      const found = await Promise.all(
        ids.map((id) =>
          api
            .post<StoreQueryResultDto>('/api/store/query', { search: id, type: 'mcp', pageSize: 50 })
            .then((r) => r.items.map((e) => ({ slug: e.slug, name: e.name })))
            .catch(() => [] as StoreServer[]),
        ),
      );
      return found.flat();
    };
    void Promise.all([
      api.get<AppDto[]>('/api/apps').catch(() => [] as AppDto[]),
      api
        .get<AppConfiguration>('/api/config')
        .then((c) => ((c as unknown as { mcpServers?: ConfiguredServers }).mcpServers ?? {}) as ConfiguredServers)
        .catch(() => ({}) as ConfiguredServers),
      storeServers(),
    ]).then(([installed, configured, store]) => live && setInventory({ installed, configured, store }));
    return () => {
      live = false;
    };
  }, []);
  return inventory;
}

/**
 * "What it needs": each MCP server and the AI browser the spec asks for, and whether this server
 * has it. A missing one is a warning (nothing here blocks), saying what it means and linking to
 * where it is fixed (Settings → MCP servers).
 */
export function AppNeeds(props: {
  spec: Record<string, unknown>;
  spaceId: string;
  /** The Store listing's `requires_mcps`, before a Store install. */
  listed?: string[];
  /** The installed digital human, on its page (absent before a Store install). */
  app?: AppDto;
  /** The heading's level where it is shown (under a page's h1: 2; under the Store entry's h2: 3). */
  level?: 2 | 3;
}) {
  const Heading = props.level === 2 ? 'h2' : 'h3';
  const forStore = props.app === undefined;
  const inventory = useInventory(props.spec, props.listed, forStore);
  if (!inventory) return null;
  const needs = needsOf(props.spec, { ...inventory, spaceId: props.spaceId, listed: props.listed, app: props.app });
  if (needs.length === 0) return null;
  const missing = needs.filter((n) => n.state === 'missing');
  const serversMissing = missing.some((n) => n.kind === 'mcp');
  return (
    <section class="stack needs" aria-labelledby="needs-title">
      <Heading id="needs-title">What it needs</Heading>
      {missing.length > 0 && (
        <p class="warning" role="note">
          {missing.length === 1 ? 'One thing it needs is' : `${missing.length} things it needs are`} not available on
          this server.{' '}
          {forStore && serversMissing
            ? 'The Store refuses to install it while an MCP server it needs is not installed and no Store source offers it.'
            : 'What uses it fails until it is available.'}
        </p>
      )}
      <ul class="plain list" aria-label="What it needs">
        {needs.map((n) => (
          <li key={n.id} class={`need ${n.state}`}>
            <span class={n.state === 'missing' ? 'badge warn' : n.state === 'available' ? 'badge ok' : 'badge'}>
              {n.state === 'missing' ? 'Missing' : n.state === 'available' ? 'Available' : 'Comes with it'}
            </span>{' '}
            {n.kind === 'browser' ? (
              <strong>AI browser</strong>
            ) : (
              <>
                MCP server <strong>{n.id}</strong>
              </>
            )}
            {n.reason && <span class="muted">: {n.reason}</span>}
            {n.state === 'available' ? (
              <span class="muted"> ({n.providedBy})</span>
            ) : n.state === 'with-install' ? (
              <span class="muted"> (installed with it from the Store: {n.providedBy})</span>
            ) : n.kind === 'browser' ? (
              <span> (turned off for this digital human: it is not given the browser's tools)</span>
            ) : (
              <>
                {' '}
                (
                {n.configuredAs
                  ? `configured in Settings as ${n.configuredAs}, which chats use, but not installed as an app, which runs and the Store need: `
                  : 'not installed or configured here: '}
                <a href={href('settings', 'mcp')}>{n.configuredAs ? 'see' : 'add it in'} Settings → MCP servers</a>)
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
