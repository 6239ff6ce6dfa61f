import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppChannels } from '#contracts/apps.js';
import { CONFIG_CHANGED_CHANNEL, type ConfigChanged } from '#contracts/models.js';
import { ErrorCodes } from '#contracts/errors.js';
import {
  MCP_STATUS_CHANNEL,
  type McpServerState,
  type McpServerStatusDto,
  type McpStatusEvent,
} from '#contracts/mcp.js';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import type { AgentTool } from '../kernel/tool.js';
import type { App } from '../kernel/app.js';
import { refusesCommand } from '../kernel/app-spec/mcp-command-policy.js';
import { mcpServer } from '../kernel/app-spec/validate-spec.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { isMap } from '../kernel/app-spec/spec-fields.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import { type HostAllowList, parseHostAllowList } from '../config/host-allow-list.js';
import { CatalogFetcher } from '../ports/catalog-fetcher.port.js';
import { isBlockedAddress } from '../kernel/addresses.js';
import { internalAddressProblem, McpAddressTexts } from './mcp-address-guard.js';
import { AppRepository } from '../ports/app.repository.port.js';
import { FileStore } from '../ports/file-store.port.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { type McpConnection, McpConnectionLost, McpConnector, type McpToolInfo } from '../ports/mcp-connector.port.js';
import { SpaceRepository } from '../ports/space.repository.port.js';
import {
  chatServers,
  checkMcpServersBranch,
  type ConfiguredServer,
  configuredServers,
  launchOf,
  MCP_SERVERS_BRANCH,
  namesConfigured,
  type McpLaunch,
  MCP_MAX_RESTARTS,
  mcpServerName,
  McpTexts,
  mcpToolName,
  restartDelayMs,
  needsInstalledServers,
  runServers,
} from './mcp-rules.js';

/** A server a turn may use: an installed `mcp` app's, or one of the configuration's `mcpServers`. */
interface ServerRef {
  /** The app's id, or `config:<key>` for a configured server. */
  key: string;
  appId: string | null;
  name: string;
  launch: McpLaunch;
}

const CONFIGURED_PREFIX = 'config:';

/** One server this process keeps a connection to. */
interface Entry {
  key: string;
  appId: string | null;
  name: string;
  /** The launch it was opened with: a changed app gets a new connection. */
  launchKey: string;
  status: McpServerState;
  error: string | null;
  connection: McpConnection | null;
  /** The connection being opened, awaited by every turn that wants it meanwhile. */
  opening: Promise<McpConnection | null> | null;
  /** Failed (re)starts in a row. */
  failures: number;
  retry: NodeJS.Timeout | null;
  closed: boolean;
}

/**
 * The MCP servers of installed `mcp` apps and of the configuration's `mcpServers` branch: one
 * connection per server per process, shared by every turn (chats, digital-human chats and
 * runs), opened on first use, restarted with backoff when it dies, closed when its app is
 * paused, deleted or changed (or its configuration entry removed or changed) and at shutdown.
 * Every status change is announced as `agent:mcp-status`.
 */
@Injectable()
export class McpServers implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Mcp');
  private readonly entries = new Map<string, Entry>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly apps: AppRepository,
    private readonly spaces: SpaceRepository,
    private readonly connector: McpConnector,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly models: ModelSourcesService,
    private readonly files: FileStore,
    private readonly fetcher: CatalogFetcher,
  ) {
    this.allow = parseHostAllowList(this.config.mcpAllow.join(',')) as HostAllowList;
  }

  /** SVC_MCP_ALLOW: internal hosts an MCP server given to `test-mcp` may reach. */
  private readonly allow: HostAllowList;

  onModuleInit(): void {
    this.models.checkBranch(MCP_SERVERS_BRANCH, (next, stored) =>
      checkMcpServersBranch(next, stored, this.config.allowMcpCommands),
    );
    // Lifecycle changes may come from any replica: re-read the app and drop what no longer holds.
    // The event's data is read only for the channels here (a bus may decode it on first read).
    this.unsubscribe = this.bus.subscribe((event) => {
      const channel = event.channel;
      if (channel === CONFIG_CHANGED_CHANNEL) {
        if ((event.data as unknown as ConfigChanged).branches?.includes(MCP_SERVERS_BRANCH))
          void this.resyncConfigured();
        return;
      }
      if (
        channel !== AppChannels.statusChanged &&
        channel !== AppChannels.listChanged &&
        channel !== AppChannels.deleted
      )
        return;
      const appId = (event.data as { appId?: unknown }).appId;
      if (typeof appId === 'string' && this.entries.has(appId)) void this.recheck(appId);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    await Promise.allSettled([...this.entries.keys()].map((id) => this.close(id, false)));
  }

  // ── what turns get ─────────────────────────────────────────────────────────────────────

  /**
   * The MCP tools of a chat in `spaceId`: the space's and global servers and the configured
   * ones (an installed server wins a name both have), minus those `requiring` turns off.
   */
  async chatTools(spaceId: string, requiring: App | null = null): Promise<AgentTool[]> {
    return this.toolsOf(await this.chatRefs(spaceId, requiring));
  }

  /** A run's MCP tools (its `requires.mcps`), or why it cannot start. */
  async runTools(app: App): Promise<{ tools: AgentTool[]; blocked: null } | { tools: null; blocked: string }> {
    // Most digital humans need none: no list of the installed servers for them (a read per run).
    if (!needsInstalledServers(app)) return { tools: [], blocked: null };
    const needed = runServers(await this.apps.list({ type: 'mcp' }), app);
    if (needed.blocked !== null) return { tools: null, blocked: needed.blocked };
    const refs = await Promise.all(needed.servers.map((server) => this.appRef(server)));
    for (const ref of refs) {
      const entry = await this.ensure(ref);
      if (entry.status !== 'connected') {
        return { tools: null, blocked: McpTexts.failing(entry.name, entry.error ?? 'not connected') };
      }
    }
    return { tools: await this.toolsOf(refs), blocked: null };
  }

  /** Why a run of `app` cannot start now (a required server missing, off or failing); null when it can. */
  async runBlocker(app: App): Promise<string | null> {
    return (await this.runTools(app)).blocked;
  }

  /** The servers a chat in `spaceId` gets, without connecting (for toolsets/list). */
  async chatServersOf(spaceId: string): Promise<Array<{ name: string; displayName: string; summary: string }>> {
    const apps = chatServers(await this.apps.list({ status: 'active', type: 'mcp' }), spaceId, null);
    const taken = new Set(apps.map((a) => mcpServerName(a)));
    return [
      ...apps.map((app) => ({
        name: mcpServerName(app),
        displayName: app.spec.display_name ?? app.spec.name,
        summary: app.spec.description,
      })),
      ...(await this.configured())
        .filter((c) => !taken.has(c.name))
        .map((c) => ({ name: c.name, displayName: c.key, summary: c.description ?? McpTexts.configuredSummary })),
    ];
  }

  /** Connects to each installed server (of `spaceId` and global, or all) and configured one, and answers its status. */
  async testInstalled(spaceId: string | null): Promise<McpServerStatusDto[]> {
    const installed = (await this.apps.list({ status: 'active', type: 'mcp' })).filter(
      (a) => a.spec.type === 'mcp' && (spaceId === null || a.spaceId === spaceId || a.spaceId === null),
    );
    const refs = [
      ...(await Promise.all(installed.map((app) => this.appRef(app)))),
      ...(await this.configuredRefs(new Set())),
    ];
    const out: McpServerStatusDto[] = [];
    for (const ref of refs) out.push(this.statusOf(await this.ensure(ref, true)));
    return out;
  }

  /**
   * `POST /api/agent/test-mcp`: connects to the servers given (`servers`, an object of
   * `mcp_server` definitions by name) or else to the installed and configured ones (of
   * `spaceId` and global, or all) and answers each one's status, tools or error. A given
   * stdio server runs a command on this host: the same policy as installing one applies.
   */
  async test(input: { servers?: unknown; spaceId?: unknown }): Promise<McpServerStatusDto[]> {
    if (input.servers === undefined || input.servers === null) {
      if (input.spaceId !== undefined && input.spaceId !== null && typeof input.spaceId !== 'string')
        throw DomainError.invalid('spaceId must be a string');
      return this.testInstalled(typeof input.spaceId === 'string' && input.spaceId !== '' ? input.spaceId : null);
    }
    if (!isMap(input.servers)) throw DomainError.invalid('servers must be an object of server definitions by name');
    const given = Object.entries(input.servers).map(([name, value]) => {
      try {
        return { name, def: mcpServer(value, `servers.${name}`) };
      } catch (err) {
        throw DomainError.invalid(messageOf(err));
      }
    });
    if (given.some(({ def }) => refusesCommand(this.config.allowMcpCommands, def))) {
      throw DomainError.forbidden(McpTexts.commandBlocked, ErrorCodes.MCP_COMMAND_BLOCKED);
    }
    const folder = await this.folderOf(null);
    return Promise.all(
      given.map(async ({ name, def }) => {
        const launch = launchOf(def, {}, folder);
        if (launch.transport !== 'http') return this.testLaunch(name, launch);
        const refused = await internalAddressProblem(launch.url, this.allow, (host) =>
          this.fetcher.blockedAddressOf(host),
        );
        if (refused !== null) return { name, status: 'failed', tools: [], error: refused };
        // Checked again on the addresses the connection itself resolves (a name may rebind meanwhile).
        return this.testLaunch(name, { ...launch, refuseAddress: (host, address) => this.refusal(host, address) });
      }),
    );
  }

  /** Why an inline server's resolved address is refused (internal and not allowed by SVC_MCP_ALLOW), or null. */
  private refusal(host: string, address: string): string | null {
    const name = host.toLowerCase();
    if (this.allow.allows(name) || this.allow.allows(name, address) || !isBlockedAddress(address)) return null;
    return McpAddressTexts.internal(name, address);
  }

  /** Connects once to a server given by the caller, lists its tools and closes again. */
  async testLaunch(name: string, launch: McpLaunch): Promise<McpServerStatusDto> {
    try {
      const connection = await this.connector.connect(await this.guarded(launch), () => undefined);
      const tools = connection.tools.map(({ name: tool, description }) => ({ name: tool, description }));
      await connection.close().catch(() => undefined);
      return { name, status: 'connected', tools, error: null };
    } catch (err) {
      return { name, status: 'failed', tools: [], error: messageOf(err) };
    }
  }

  /** Every server this process knows. */
  statuses(): McpServerStatusDto[] {
    return [...this.entries.values()].map((e) => this.statusOf(e));
  }

  /** The launch of an app's server: settings filled in, run in the app's space folder (or its `cwd` inside it). */
  async launchFor(app: App): Promise<McpLaunch> {
    return launchOf(app.spec.mcp_server ?? {}, app.userConfig, await this.folderOf(app.spaceId));
  }

  /** A space's folder; global servers (null) run in the temporary space's. */
  private async folderOf(spaceId: string | null): Promise<string> {
    const space = await this.spaces.findById(spaceId ?? TEMP_SPACE_ID);
    return space?.path ?? this.config.dataDir;
  }

  /** A stdio launch's `cwd` through the path guard: inside its space folder (symlinks resolved) and existing. */
  private async guarded(launch: McpLaunch): Promise<McpLaunch> {
    if (launch.transport !== 'stdio' || launch.cwd === launch.root) return launch;
    const rel = launch.cwd.slice(launch.root.length + 1);
    let target;
    try {
      target = await this.files.resolve({ roots: [launch.root], path: launch.cwd, allowRoot: true });
    } catch {
      throw new Error(McpTexts.cwdOutside(rel));
    }
    if ((await this.files.stat(target))?.kind !== 'folder') throw new Error(McpTexts.cwdMissing(rel));
    return { ...launch, cwd: target.real };
  }

  // ── which servers ──────────────────────────────────────────────────────────────────────

  private async appRef(app: App): Promise<ServerRef> {
    return { key: app.id, appId: app.id, name: mcpServerName(app), launch: await this.launchFor(app) };
  }

  /** The configuration's servers (stored, valid ones). */
  private async configured(): Promise<ConfiguredServer[]> {
    const branch = await this.models.storedBranch(MCP_SERVERS_BRANCH).catch(() => undefined);
    return configuredServers(branch, mcpServer).filter((c) => !c.disabled);
  }

  /** The configured servers as refs, except names `taken` (installed servers win). */
  private async configuredRefs(taken: Set<string>): Promise<ServerRef[]> {
    const folder = await this.folderOf(null);
    return (await this.configured())
      .filter((c) => !taken.has(c.name))
      .map((c) => ({
        key: `${CONFIGURED_PREFIX}${c.key}`,
        appId: null,
        name: c.name,
        launch: launchOf(c.def, {}, folder),
      }));
  }

  private async chatRefs(spaceId: string, requiring: App | null): Promise<ServerRef[]> {
    const apps = chatServers(await this.apps.list({ status: 'active', type: 'mcp' }), spaceId, requiring);
    const refs = await Promise.all(apps.map((app) => this.appRef(app)));
    const off = (requiring?.spec.requires?.mcps ?? []).filter((m) => m.enabled === false).map((m) => m.id);
    const taken = new Set(refs.map((r) => r.name));
    const configured = (await this.configuredRefs(taken)).filter(
      (ref) => !off.some((id) => namesConfigured(ref.key.slice(CONFIGURED_PREFIX.length), id)),
    );
    return [...refs, ...configured];
  }

  /** After a configuration change: closes configured servers that are gone or changed; reopens changed ones in use. */
  private async resyncConfigured(): Promise<void> {
    const now = new Map((await this.configuredRefs(new Set())).map((r) => [r.key, r]));
    for (const entry of [...this.entries.values()]) {
      if (!entry.key.startsWith(CONFIGURED_PREFIX)) continue;
      const ref = now.get(entry.key);
      if (ref && JSON.stringify(ref.launch) === entry.launchKey) continue;
      const wasOpen = entry.connection !== null;
      // An earlier iteration awaited: a turn may have replaced this entry meanwhile.
      await this.closeEntry(entry, true);
      if (ref && wasOpen) await this.ensure(ref).catch(() => undefined);
    }
  }

  // ── connections ────────────────────────────────────────────────────────────────────────

  private async toolsOf(servers: ServerRef[]): Promise<AgentTool[]> {
    const tools: AgentTool[] = [];
    const names = new Set<string>();
    for (const server of servers) {
      const entry = await this.ensure(server);
      for (const tool of entry.connection?.tools ?? []) {
        const name = mcpToolName(entry.name, tool.name);
        if (names.has(name)) continue;
        names.add(name);
        tools.push(this.agentTool(entry.key, name, tool));
      }
    }
    return tools;
  }

  /** A server's tool as the model sees it; each call goes through whatever connection is current. */
  private agentTool(key: string, name: string, tool: McpToolInfo): AgentTool {
    return {
      name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      run: async (input, ctx) => {
        const entry = this.entries.get(key);
        const connection = entry?.connection;
        if (!entry || !connection) {
          return { output: McpTexts.notConnected(entry?.name ?? name, entry?.error ?? null), isError: true };
        }
        try {
          const result = await connection.call(tool.name, input, ctx.signal);
          return { output: result.text, isError: result.isError };
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          if (err instanceof McpConnectionLost) {
            this.lost(entry, connection, messageOf(err));
            return { output: McpTexts.stoppedDuringCall(entry.name, entry.error ?? messageOf(err)), isError: true };
          }
          return { output: `MCP error: ${messageOf(err)}`, isError: true };
        }
      },
    };
  }

  /**
   * The server's entry, connected if it can be: opened on first use, reopened when its
   * launch changed. A failing server is not retried here while a restart is scheduled,
   * unless `now` (a test of the connection) asks for it.
   */
  private async ensure(ref: ServerRef, now = false): Promise<Entry> {
    const { launch } = ref;
    const launchKey = JSON.stringify(launch);
    let entry = this.entries.get(ref.key);
    if (entry && entry.launchKey !== launchKey) {
      await this.closeEntry(entry, false);
      // Another turn may have opened the new launch while this one closed the old: look again.
      return this.ensure(ref, now);
    }
    if (!entry) {
      entry = {
        key: ref.key,
        appId: ref.appId,
        name: ref.name,
        launchKey,
        status: 'connecting',
        error: null,
        connection: null,
        opening: null,
        failures: 0,
        retry: null,
        closed: false,
      };
      this.entries.set(ref.key, entry);
      await this.open(entry, launch);
      return entry;
    }
    if (entry.opening) await entry.opening;
    else if (!entry.connection && (now || entry.retry === null)) await this.open(entry, launch);
    return entry;
  }

  private open(entry: Entry, launch: McpLaunch): Promise<McpConnection | null> {
    if (entry.retry) clearTimeout(entry.retry);
    entry.retry = null;
    entry.opening = (async () => {
      await this.setStatus(entry, 'connecting', null);
      try {
        let opened: McpConnection | null = null;
        const connection = await this.connector.connect(await this.guarded(launch), (reason) => {
          if (opened) this.lost(entry, opened, reason);
        });
        opened = connection;
        if (entry.closed) {
          await connection.close().catch(() => undefined);
          return null;
        }
        entry.connection = connection;
        entry.failures = 0;
        await this.setStatus(entry, 'connected', null);
        return connection;
      } catch (err) {
        entry.failures += 1;
        this.logger.warn(`MCP server ${entry.name} failed to start: ${messageOf(err)}`);
        await this.setStatus(entry, 'failed', messageOf(err));
        this.scheduleRestart(entry, launch);
        return null;
      } finally {
        entry.opening = null;
      }
    })();
    return entry.opening;
  }

  /** The connection ended by itself: announce it and restart with backoff. */
  private lost(entry: Entry, connection: McpConnection, reason: string): void {
    if (entry.closed || entry.connection !== connection) return;
    entry.connection = null;
    entry.failures += 1;
    this.logger.warn(`MCP server ${entry.name} stopped: ${reason}`);
    void connection.close().catch(() => undefined);
    void this.setStatus(entry, 'failed', reason);
    const launch = JSON.parse(entry.launchKey) as McpLaunch;
    this.scheduleRestart(entry, launch);
  }

  private scheduleRestart(entry: Entry, launch: McpLaunch): void {
    // After MCP_MAX_RESTARTS failures in a row it waits for the next turn that wants it.
    if (entry.closed || entry.failures > MCP_MAX_RESTARTS) return;
    entry.retry = setTimeout(
      () => {
        entry.retry = null;
        if (!entry.closed && !entry.connection && !entry.opening) void this.open(entry, launch);
      },
      restartDelayMs(entry.failures - 1),
    );
    entry.retry.unref();
  }

  /** After a lifecycle event: closes the server unless its app is still active with the same launch. */
  private async recheck(appId: string): Promise<void> {
    const entry = this.entries.get(appId);
    if (!entry) return;
    const app = await this.apps.findById(appId).catch(() => undefined);
    if (app === undefined) return;
    const keep =
      app !== null && app.status === 'active' && JSON.stringify(await this.launchFor(app)) === entry.launchKey;
    // Only the entry read above: a turn may have replaced it while the app was read.
    if (!keep) await this.closeEntry(entry, true);
  }

  /** Closes and forgets a server (by app id, or `config:<key>`); `announce` tells clients it stopped. */
  async close(key: string, announce = true): Promise<void> {
    const entry = this.entries.get(key);
    if (entry) await this.closeEntry(entry, announce);
  }

  /**
   * Closes and forgets `entry` if it is still the one under its key. A caller that awaited
   * after reading it must not close a newer entry a concurrent start put there meanwhile.
   */
  private async closeEntry(entry: Entry, announce: boolean): Promise<void> {
    if (this.entries.get(entry.key) !== entry) return;
    entry.closed = true;
    if (entry.retry) clearTimeout(entry.retry);
    this.entries.delete(entry.key);
    const connection = entry.connection;
    entry.connection = null;
    await connection?.close().catch(() => undefined);
    if (announce) {
      entry.status = 'stopped';
      await this.announce([this.statusOf(entry)]);
    }
  }

  private async setStatus(entry: Entry, status: McpServerState, error: string | null): Promise<void> {
    entry.status = status;
    entry.error = error;
    if (!entry.closed) await this.announce([]);
  }

  private async announce(extra: McpServerStatusDto[]): Promise<void> {
    const event: McpStatusEvent = { servers: [...this.statuses(), ...extra], timestamp: this.clock.now() };
    await this.bus.publish(MCP_STATUS_CHANNEL, event).catch(() => undefined);
  }

  private statusOf(entry: Entry): McpServerStatusDto {
    return {
      name: entry.name,
      status: entry.status,
      tools: (entry.status === 'connected' ? (entry.connection?.tools ?? []) : []).map(({ name, description }) => ({
        name,
        description,
      })),
      error: entry.error,
      ...(entry.appId !== null ? { appId: entry.appId } : {}),
    };
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
