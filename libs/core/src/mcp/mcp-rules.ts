import { resolve } from 'node:path';
import { ErrorCodes } from '#contracts/errors.js';
import { BUILT_IN_MCP_SERVERS } from '#contracts/browser.js';
import { DomainError } from '../errors/domain-error.js';
import type { App } from '../kernel/app.js';
import type { McpServerDefinition } from '../kernel/app-spec/app-spec.js';
import { mcpServer } from '../kernel/app-spec/validate-spec.js';
import type { McpLaunch } from '../ports/mcp-connector.port.js';
import { addsCommand } from '../kernel/app-spec/mcp-command-policy.js';

export type { McpLaunch };

/** Most characters of a tool result handed to the model, and of a server's stderr kept for its error. */
export const MCP_RESULT_MAX_CHARS = 100_000;
export const MCP_STDERR_MAX_CHARS = 4_000;

/** First restart after a crash, the ceiling, and how many failed restarts in a row before waiting for the next use. */
export const MCP_RESTART_BASE_MS = 500;
export const MCP_RESTART_MAX_MS = 30_000;
export const MCP_MAX_RESTARTS = 5;

/** The prefix of MCP tool names (docs/api/mcp-and-skills.md, "MCP servers"). */
export const MCP_TOOL_PREFIX = 'mcp__';

/**
 * The server's name as its tools carry it: the app's `name`, lower-cased, every run of
 * characters a model tool name cannot hold (only `a-z 0-9 _ -`) turned into one `-`.
 */
export function mcpServerName(app: Pick<App, 'spec'>): string {
  return serverNameOf(app.spec.name);
}

/** A server name made fit for tool names (see mcpServerName). */
export function serverNameOf(raw: string): string {
  return toolNamePart(raw) || 'server';
}

function toolNamePart(raw: string): string {
  return raw
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .replace(/__+/g, '_');
}

/** `mcp__<server>__<tool>`, the tool part made fit for a model tool name the same way. */
export function mcpToolName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${server}__${tool.replace(/[^A-Za-z0-9_-]+/g, '-')}`;
}

/** Replaces `{{config.key}}` by the app's setting (missing: empty). */
export function withSettings(text: string, settings: Record<string, unknown>): string {
  return text.replace(/\{\{\s*config\.([A-Za-z0-9_.-]+)\s*\}\}/g, (_, key: string) => {
    const value = settings[key];
    return value === undefined || value === null ? '' : String(value);
  });
}

const mapValues = (m: Record<string, string> | undefined, settings: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(m ?? {}).map(([k, v]) => [k, withSettings(v, settings)]));

/**
 * The launch of an app's server. A stdio process gets only its spec's variables (the MCP
 * SDK adds its short list of harmless ones: HOME, LOGNAME, PATH, SHELL, TERM, USER), never
 * the server's own environment and secrets, and runs in `folder` (the app's space folder), or
 * in the spec's relative `cwd` inside it.
 */
export function launchOf(def: McpServerDefinition, settings: Record<string, unknown>, folder: string): McpLaunch {
  if (def.url !== undefined) {
    return { transport: 'http', url: withSettings(def.url, settings), headers: mapValues(def.headers, settings) };
  }
  return {
    transport: 'stdio',
    command: def.command ?? '',
    args: (def.args ?? []).map((a) => withSettings(a, settings)),
    env: mapValues(def.env, settings),
    cwd: def.cwd ? resolve(folder, def.cwd) : folder,
    root: folder,
  };
}

/** Delay before restart number `attempt` (0-based): doubling from the base, capped. */
export function restartDelayMs(attempt: number): number {
  return Math.min(MCP_RESTART_MAX_MS, MCP_RESTART_BASE_MS * 2 ** Math.max(0, attempt));
}

/** Keeps the first `max` characters and says how many were left out. */
export function boundedText(text: string, max = MCP_RESULT_MAX_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[… ${text.length - max} more characters left out]`;
}

/** Keeps the last `max` characters (a process's latest output says why it stopped). */
export function tailText(text: string, max = MCP_STDERR_MAX_CHARS): string {
  return text.length <= max ? text : text.slice(text.length - max);
}

/** Whether an MCP server id a spec requires names one built into the server (`ai-browser`). */
export function isBuiltInServer(id: string): boolean {
  return BUILT_IN_MCP_SERVERS.includes(id.trim().toLowerCase());
}

/** Whether `app` is the server a `requires.mcps[].id` names: its name, its server name or its store slug. */
export function isServerNamed(app: Pick<App, 'spec'>, id: string): boolean {
  const wanted = id.trim().toLowerCase();
  return (
    app.spec.name.toLowerCase() === wanted ||
    mcpServerName(app) === toolNamePart(id) ||
    (app.spec.store?.slug ?? '').toLowerCase() === wanted
  );
}

/**
 * The MCP servers a chat gets: active `mcp` apps of the space and global ones (the space's
 * own wins a name both have), minus those `requiring` (a digital human's chat) marks
 * `enabled: false`.
 */
export function chatServers(installed: App[], spaceId: string, requiring: App | null): App[] {
  const disabled = (requiring?.spec.requires?.mcps ?? []).filter((m) => m.enabled === false).map((m) => m.id);
  const byName = new Map<string, App>();
  const usable = installed.filter(
    (a) => a.spec.type === 'mcp' && a.status === 'active' && (a.spaceId === spaceId || a.spaceId === null),
  );
  for (const app of usable.sort((a, b) => (a.spaceId === null ? 0 : 1) - (b.spaceId === null ? 0 : 1))) {
    if (disabled.some((id) => isServerNamed(app, id))) continue;
    byName.set(mcpServerName(app), app);
  }
  return [...byName.values()];
}

/** Whether a run of `app` needs installed servers at all (a required one neither turned off nor built in). */
export function needsInstalledServers(app: App): boolean {
  return installedServerNeeds(app).length > 0;
}

/**
 * The servers an app requires that must be installed: turned-off requirements are left out, and
 * so are servers that are part of this server (the AI browser: never "not installed"; the app's
 * permission decides).
 */
function installedServerNeeds(app: App): Array<{ id: string }> {
  return (app.spec.requires?.mcps ?? []).filter((need) => need.enabled !== false && !isBuiltInServer(need.id));
}

/** A run's servers: its `requires.mcps` not marked `enabled: false`; or why the run cannot start. */
export function runServers(
  installed: App[],
  app: App,
): { servers: App[]; blocked: null } | { servers: null; blocked: string } {
  const servers: App[] = [];
  const spaceId = app.spaceId;
  for (const need of installedServerNeeds(app)) {
    const candidates = installed.filter(
      (a) =>
        a.spec.type === 'mcp' &&
        a.status !== 'uninstalled' &&
        (a.spaceId === null || a.spaceId === spaceId) &&
        isServerNamed(a, need.id),
    );
    if (candidates.length === 0) return { servers: null, blocked: McpTexts.notInstalled(need.id) };
    const active = candidates.find((a) => a.status === 'active');
    if (!active) return { servers: null, blocked: McpTexts.turnedOff(need.id) };
    servers.push(active);
  }
  return { servers, blocked: null };
}

// ── servers of the configuration (`POST /api/config {mcpServers}`) ───────────────────────

/** The configuration branch of configured servers: `{<name>: <server definition> & {disabled?, description?}}`. */
export const MCP_SERVERS_BRANCH = 'mcpServers';

/** A server of the configuration's `mcpServers` branch: global, offered to every chat unless `disabled`. */
export interface ConfiguredServer {
  /** Its key in the branch. */
  key: string;
  /** The name its tools carry (`mcp__<name>__<tool>`). */
  name: string;
  def: McpServerDefinition;
  disabled: boolean;
  description: string | null;
}

/**
 * Reads the branch; `check` validates each entry (the spec's `mcp_server` rules) and throws on
 * a bad one. Entries that do not validate are skipped when reading what is stored.
 */
export function configuredServers(
  branch: unknown,
  check: (def: unknown, field: string) => McpServerDefinition,
  strict = false,
): ConfiguredServer[] {
  if (branch === undefined || branch === null) return [];
  if (typeof branch !== 'object' || Array.isArray(branch)) {
    if (strict) throw new Error(`${MCP_SERVERS_BRANCH} must be an object of server definitions by name`);
    return [];
  }
  const out: ConfiguredServer[] = [];
  for (const [key, value] of Object.entries(branch as Record<string, unknown>)) {
    const field = `${MCP_SERVERS_BRANCH}.${key}`;
    try {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new Error(`${field} must be an object`);
      const { disabled, description, ...rest } = value as Record<string, unknown>;
      if (disabled !== undefined && typeof disabled !== 'boolean')
        throw new Error(`${field}.disabled must be a boolean`);
      if (description !== undefined && typeof description !== 'string')
        throw new Error(`${field}.description must be a string`);
      out.push({
        key,
        name: serverNameOf(key),
        def: check(rest, field),
        disabled: disabled === true,
        description: typeof description === 'string' ? description : null,
      });
    } catch (err) {
      if (strict) throw err;
    }
  }
  return out;
}

/** Whether a `requires.mcps[].id` names the configured server of key `key`. */
export function namesConfigured(key: string, id: string): boolean {
  return key.toLowerCase() === id.trim().toLowerCase() || serverNameOf(key) === toolNamePart(id);
}

/**
 * The stdio servers a configuration change adds or changes (by key): what the command policy
 * looks at. An entry sent back unchanged (as GET /api/config answered it) is no change.
 */
export function changedCommandServers(next: ConfiguredServer[], stored: ConfiguredServer[]): string[] {
  const before = new Map(stored.map((s) => [s.key, s.def]));
  return next.filter((s) => addsCommand(s.def, before.get(s.key))).map((s) => s.key);
}

/**
 * The check of a configuration change to the `mcpServers` branch (registered with the
 * configuration by the MCP context): every entry must be a valid server definition (refused
 * as invalid, naming the field); a stdio one added or changed needs SVC_ALLOW_MCP_COMMANDS=1
 * (else forbidden, MCP_COMMAND_BLOCKED). HTTP servers are always allowed.
 */
export function checkMcpServersBranch(next: unknown, stored: unknown, allowMcpCommands: boolean): void {
  let servers;
  try {
    servers = configuredServers(next, mcpServer, true);
  } catch (err) {
    throw DomainError.invalid(err instanceof Error ? err.message : String(err));
  }
  const blocked = changedCommandServers(servers, configuredServers(stored, mcpServer));
  if (blocked.length > 0 && !allowMcpCommands) {
    throw DomainError.forbidden(McpTexts.configCommandBlocked(blocked), ErrorCodes.MCP_COMMAND_BLOCKED);
  }
}

export const McpTexts = {
  notInstalled: (id: string) => `The MCP server ${id} this digital human needs is not installed.`,
  turnedOff: (id: string) => `The MCP server ${id} this digital human needs is turned off.`,
  failing: (id: string, error: string) => `The MCP server ${id} this digital human needs is failing: ${error}`,
  notConnected: (name: string, error: string | null) =>
    `The MCP server ${name} is not connected${error ? `: ${error}` : ''}. It is restarted automatically; try again later.`,
  stoppedDuringCall: (name: string, error: string) => `The MCP server ${name} stopped during the call: ${error}`,
  exited: 'The server process ended.',
  configCommandBlocked: (keys: string[]) =>
    `MCP servers that run a command on this computer (${keys.join(', ')}) cannot be configured over the remote API of this server (the operator can allow it with SVC_ALLOW_MCP_COMMANDS=1).`,
  configuredSummary: 'An MCP server of the configuration (mcpServers)',
  cwdOutside: (cwd: string) => `The MCP server's cwd ${cwd} is not inside its space folder.`,
  cwdMissing: (cwd: string) => `The MCP server's cwd ${cwd} does not exist in its space folder.`,
  commandBlocked:
    'Testing an MCP server that runs a command on this computer is blocked for remote requests by this server (the operator can allow it with SVC_ALLOW_MCP_COMMANDS=1).',
} as const;
