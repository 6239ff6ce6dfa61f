import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppChannels } from '#contracts/apps.js';
import { ErrorCodes } from '#contracts/errors.js';
import {
  MCP_STATUS_CHANNEL,
  type McpServerState,
  type McpServerStatusDto,
  type McpStatusEvent,
} from '#contracts/mcp.js';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import type { AgentTool } from '../agent/tools/tool.js';
import type { App } from '../apps/app.js';
import { runsLocalCommand } from '../apps/app-rules.js';
import { mcpServer } from '../apps/spec/validate-spec.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { isMap } from '../apps/spec/spec-fields.js';
import { AppRepository } from '../ports/app.repository.port.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { type McpConnection, McpConnectionLost, McpConnector, type McpToolInfo } from '../ports/mcp-connector.port.js';
import { SpaceRepository } from '../ports/space.repository.port.js';
import {
  chatServers,
  launchOf,
  type McpLaunch,
  MCP_MAX_RESTARTS,
  mcpServerName,
  McpTexts,
  mcpToolName,
  restartDelayMs,
  runServers,
} from './mcp-rules.js';

/** One server this process keeps a connection to. */
interface Entry {
  appId: string;
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
 * The MCP servers of installed `mcp` apps: one connection per server per process, shared by
 * every turn (chats, digital-human chats and runs), opened on first use, restarted with
 * backoff when it dies, closed when its app is paused, deleted or changed and at shutdown.
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
  ) {}

  onModuleInit(): void {
    // Lifecycle changes may come from any replica: re-read the app and drop what no longer holds.
    this.unsubscribe = this.bus.subscribe(({ channel, data }) => {
      if (
        channel !== AppChannels.statusChanged &&
        channel !== AppChannels.listChanged &&
        channel !== AppChannels.deleted
      )
        return;
      const appId = (data as { appId?: unknown }).appId;
      if (typeof appId === 'string' && this.entries.has(appId)) void this.recheck(appId);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    await Promise.allSettled([...this.entries.keys()].map((id) => this.close(id, false)));
  }

  // ── what turns get ─────────────────────────────────────────────────────────────────────

  /** The MCP tools of a chat in `spaceId`: the space's and global servers, minus those `requiring` turns off. */
  async chatTools(spaceId: string, requiring: App | null = null): Promise<AgentTool[]> {
    const servers = chatServers(await this.apps.list({ status: 'active' }), spaceId, requiring);
    return this.toolsOf(servers);
  }

  /** A run's MCP tools (its `requires.mcps`), or why it cannot start. */
  async runTools(app: App): Promise<{ tools: AgentTool[]; blocked: null } | { tools: null; blocked: string }> {
    const needed = runServers(await this.apps.list({}), app);
    if (needed.blocked !== null) return { tools: null, blocked: needed.blocked };
    for (const server of needed.servers) {
      const entry = await this.ensure(server);
      if (entry.status !== 'connected') {
        return { tools: null, blocked: McpTexts.failing(entry.name, entry.error ?? 'not connected') };
      }
    }
    return { tools: await this.toolsOf(needed.servers), blocked: null };
  }

  /** Why a run of `app` cannot start now (a required server missing, off or failing); null when it can. */
  async runBlocker(app: App): Promise<string | null> {
    return (await this.runTools(app)).blocked;
  }

  /** The servers a chat in `spaceId` gets, without connecting (for toolsets/list). */
  async chatServersOf(spaceId: string): Promise<App[]> {
    return chatServers(await this.apps.list({ status: 'active' }), spaceId, null);
  }

  /** Connects to each installed server (of `spaceId` and global, or all) and answers its status. */
  async testInstalled(spaceId: string | null): Promise<McpServerStatusDto[]> {
    const installed = (await this.apps.list({ status: 'active' })).filter(
      (a) => a.spec.type === 'mcp' && (spaceId === null || a.spaceId === spaceId || a.spaceId === null),
    );
    const out: McpServerStatusDto[] = [];
    for (const app of installed) {
      const entry = await this.ensure(app, true);
      out.push(this.statusOf(entry));
    }
    return out;
  }

  /**
   * `POST /api/agent/test-mcp`: connects to the servers given (`servers`, an object of
   * `mcp_server` definitions by name) or else to the installed ones (of `spaceId` and global,
   * or all) and answers each one's status, tools or error. A given stdio server runs a
   * command on this host: the same policy as installing one applies.
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
    if (!this.config.allowMcpCommands && given.some(({ def }) => runsLocalCommand({ type: 'mcp', mcp_server: def }))) {
      throw DomainError.forbidden(McpTexts.commandBlocked, ErrorCodes.MCP_COMMAND_BLOCKED);
    }
    const folder = (await this.spaces.findById(TEMP_SPACE_ID))?.path ?? this.config.dataDir;
    return Promise.all(given.map(({ name, def }) => this.testLaunch(name, launchOf(def, {}, folder))));
  }

  /** Connects once to a server given by the caller, lists its tools and closes again. */
  async testLaunch(name: string, launch: McpLaunch): Promise<McpServerStatusDto> {
    try {
      const connection = await this.connector.connect(launch, () => undefined);
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

  /** The launch of an app's server: settings filled in, run in the app's space folder. */
  async launchFor(app: App): Promise<McpLaunch> {
    const space = await this.spaces.findById(app.spaceId ?? TEMP_SPACE_ID);
    const folder = space?.path ?? this.config.dataDir;
    return launchOf(app.spec.mcp_server ?? {}, app.userConfig, folder);
  }

  // ── connections ────────────────────────────────────────────────────────────────────────

  private async toolsOf(servers: App[]): Promise<AgentTool[]> {
    const tools: AgentTool[] = [];
    const names = new Set<string>();
    for (const server of servers) {
      const entry = await this.ensure(server);
      for (const tool of entry.connection?.tools ?? []) {
        const name = mcpToolName(entry.name, tool.name);
        if (names.has(name)) continue;
        names.add(name);
        tools.push(this.agentTool(entry.appId, name, tool));
      }
    }
    return tools;
  }

  /** A server's tool as the model sees it; each call goes through whatever connection is current. */
  private agentTool(appId: string, name: string, tool: McpToolInfo): AgentTool {
    return {
      name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      run: async (input, ctx) => {
        const entry = this.entries.get(appId);
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
   * The app's entry, connected if it can be: opened on first use, reopened when the app's
   * launch changed. A failing server is not retried here while a restart is scheduled,
   * unless `now` (a test of the connection) asks for it.
   */
  private async ensure(app: App, now = false): Promise<Entry> {
    const launch = await this.launchFor(app);
    const launchKey = JSON.stringify(launch);
    let entry = this.entries.get(app.id);
    if (entry && entry.launchKey !== launchKey) {
      await this.close(app.id, false);
      entry = undefined;
    }
    if (!entry) {
      entry = {
        appId: app.id,
        name: mcpServerName(app),
        launchKey,
        status: 'connecting',
        error: null,
        connection: null,
        opening: null,
        failures: 0,
        retry: null,
        closed: false,
      };
      this.entries.set(app.id, entry);
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
        const connection = await this.connector.connect(launch, (reason) => {
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
    if (!keep) await this.close(appId, true);
  }

  /** Closes and forgets the app's server; `announce` tells clients it stopped. */
  async close(appId: string, announce = true): Promise<void> {
    const entry = this.entries.get(appId);
    if (!entry) return;
    entry.closed = true;
    if (entry.retry) clearTimeout(entry.retry);
    this.entries.delete(appId);
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
      appId: entry.appId,
    };
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
