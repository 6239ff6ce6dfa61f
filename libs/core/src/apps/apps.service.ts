import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import {
  APP_STATUSES,
  AppChannels,
  type AppDeletedEvent,
  AppErrorTexts,
  type AppListChangedEvent,
  type AppStatus,
  type AppStatusChangedEvent,
  type AutomationStateDto,
  UPGRADE_STRATEGIES,
  type UpgradeStrategy,
} from '#contracts/apps.js';
import { ErrorCodes } from '#contracts/errors.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { AppCleanup } from '../ports/app-cleanup.port.js';
import { ALREADY_INSTALLED, type AppChanges, AppRepository } from '../ports/app.repository.port.js';
import { AppScheduler } from '../ports/app-scheduler.port.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { SpaceRepository } from '../ports/space.repository.port.js';
import type { SkillFiles } from '../skills/skill-rules.js';
import { SkillsService } from '../skills/skills.service.js';
import { SpaceErrors } from '../spaces/spaces.service.js';
import { type ActivityEntry, type App, IDLE_AUTOMATION } from '../kernel/app.js';
import { eachConcurrently } from '../kernel/concurrently.js';
import { AppData } from './app-data.js';
import { AppLifecycle } from './app-lifecycle.js';
import {
  automationState,
  checkOverrides,
  checkPermissionName,
  nextRunOf,
  resolveConfig,
  withFrequency,
} from './app-rules.js';
import { McpPolicyTexts, refusesCommand, serverOf } from '../kernel/app-spec/mcp-command-policy.js';
import { applyMergePatch } from './merge-patch.js';
import { isMap, specError } from '../kernel/app-spec/spec-fields.js';
import type { AppSpec } from '../kernel/app-spec/app-spec.js';
import { webhookPathConflict } from '../triggers/webhook-rules.js';
import { parseSpecYaml, specToYaml } from '../kernel/app-spec/spec-yaml.js';
import { validateSpec } from '../kernel/app-spec/validate-spec.js';

export const AppErrors = {
  notFound: (appId: string) => `App not found: ${appId}`,
  alreadyInstalled: 'This digital human is already installed there.',
  mcpCommandBlocked: McpPolicyTexts.install,
  builtIn: 'Built-in digital humans cannot be deleted.',
  uninstalled: 'The digital human is uninstalled; reinstall it first.',
  notPaused: 'The digital human is not paused.',
  typeFixed: 'type cannot change; install the other kind as a new digital human',
} as const;

export const ACTIVITY_PAGE_DEFAULT = 50;
export const ACTIVITY_PAGE_MAX = 200;
/** How long a request waits for the app services to finish starting before answering 503. */
const READY_WAIT_MS = 3000;
/** Next due times written together at start (one small update each, independent of the others). */
const START_CONCURRENCY = 8;

export interface InstallInput {
  spec: unknown;
  spaceId?: string | null;
  userConfig?: unknown;
  /**
   * Skill files the package or the store brings (paths relative to each skill's folder): a
   * skill app's own, and the bundled skills of a digital human's `requires.skills`.
   */
  skills?: SkillFiles[];
}

export interface ListInput {
  spaceId?: string;
  status?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Digital humans: install, records, lifecycle, settings, spec edits, events (docs/api/digital-humans.md,
 * "App (digital human) operations"). Runs, chat and triggers build on it.
 */
@Injectable()
export class AppsService extends AppCleanup implements OnApplicationBootstrap {
  private ready = false;
  private starting: Promise<void> | null = null;

  constructor(
    private readonly apps: AppRepository,
    private readonly spaces: SpaceRepository,
    private readonly data: AppData,
    private readonly lifecycle: AppLifecycle,
    private readonly scheduler: AppScheduler,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'allowMcpCommands'>,
    private readonly skills: SkillsService,
  ) {
    super();
  }

  /** Starts in the background: the server listens meanwhile and app requests wait briefly, then 503. */
  onApplicationBootstrap(): void {
    void this.start();
  }

  /**
   * Brings every active app's schedule in line with its spec after a restart: the next due
   * time is computed again and handed to the scheduler.
   */
  private start(): Promise<void> {
    this.starting ??= (async () => {
      try {
        const current: App[] = [];
        await eachConcurrently(await this.apps.list({ status: 'active' }), START_CONCURRENCY, async (app) => {
          current.push(await this.withNextRun(app));
        });
        await this.scheduler.syncAll(current);
        this.ready = true;
      } catch {
        // The database may still be coming up: the next request tries again.
        this.starting = null;
      }
    })();
    return this.starting;
  }

  private async whenReady(): Promise<void> {
    if (this.ready) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.start(), new Promise((resolve) => (timer = setTimeout(resolve, READY_WAIT_MS)))]);
    clearTimeout(timer);
    if (!this.ready) throw new DomainError('unavailable', AppErrorTexts.notInitialized, ErrorCodes.NOT_INITIALIZED);
  }

  // ── install ────────────────────────────────────────────────────────────────────────────

  /**
   * Installs a spec. `spaceId` undefined or null installs for every workspace. Only automation
   * apps are activated (scheduled). Every way in (install, import, the store) comes through
   * here: `remote` requests may install an MCP server that runs a local command only where
   * the operator allows it (SVC_ALLOW_MCP_COMMANDS=1); HTTP servers are always allowed.
   */
  async install(input: InstallInput, remote = true): Promise<App> {
    await this.whenReady();
    const now = this.clock.now();
    const spec = validateSpec(input.spec, now);
    if (remote) this.assertCommandPolicy(spec, undefined, AppErrors.mcpCommandBlocked);
    const spaceId = input.spaceId ?? null;
    await this.assertSpace(spaceId);
    // Another copy in the same place answers ALREADY_INSTALLED below, not a path conflict.
    await this.assertHookPathsFree(spec, (other) => other.spaceId === spaceId && sameApp(other.spec, spec));
    const userConfig = resolveConfig(spec.config_schema, input.userConfig, 'userConfig');
    const installed = await this.apps.install({
      id: randomUUID(),
      spaceId,
      spec,
      status: 'active',
      userConfig,
      userOverrides: {},
      permissions: { granted: [], denied: [] },
      upgradeStrategy: 'notify',
      builtIn: false,
      automation: { ...IDLE_AUTOMATION },
    });
    if (installed === ALREADY_INSTALLED) throw alreadyInstalled();
    try {
      await this.skills.installFor(installed, input.skills);
    } catch (err) {
      // Nothing half-installed stays: the record goes with the files written so far.
      await this.skills.removeFor(installed).catch(() => undefined);
      await this.apps.delete(installed.id);
      throw err;
    }
    await this.publishList(installed.id, 'installed');
    return spec.type === 'automation' ? this.activate(installed, true) : installed;
  }

  /** Installs from spec-file text (import-spec); the file must carry `version` and `author` itself. */
  async importSpec(input: { spaceId?: string | null; yamlContent: string; userConfig?: unknown }): Promise<App> {
    await this.whenReady();
    return this.install({
      spec: parseSpecYaml(input.yamlContent),
      spaceId: input.spaceId,
      userConfig: input.userConfig,
    });
  }

  // ── reading ────────────────────────────────────────────────────────────────────────────

  async list(input: ListInput): Promise<App[]> {
    await this.whenReady();
    const status = input.status === undefined || input.status === '' ? undefined : input.status;
    if (status !== undefined && !APP_STATUSES.includes(status as AppStatus)) {
      throw DomainError.invalid(`status must be one of ${APP_STATUSES.join(', ')}`);
    }
    return this.apps.list({
      ...(input.spaceId !== undefined && input.spaceId !== '' ? { spaceId: input.spaceId } : {}),
      ...(status !== undefined ? { status: status as AppStatus } : {}),
    });
  }

  async get(appId: string): Promise<App> {
    await this.whenReady();
    const app = UUID.test(appId) ? await this.apps.findById(appId) : null;
    if (!app) throw DomainError.notFound(AppErrors.notFound(appId), ErrorCodes.APP_NOT_FOUND);
    return app;
  }

  async state(appId: string): Promise<AutomationStateDto> {
    return automationState(await this.get(appId));
  }

  async activity(appId: string, limit?: number, before?: number): Promise<ActivityEntry[]> {
    await this.get(appId);
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
      throw DomainError.invalid('limit must be a whole number of at least 1');
    }
    if (before !== undefined && (!Number.isFinite(before) || before < 0)) {
      throw DomainError.invalid('before must be a timestamp in milliseconds');
    }
    return this.apps.listActivity(appId, {
      limit: Math.min(limit ?? ACTIVITY_PAGE_DEFAULT, ACTIVITY_PAGE_MAX),
      ...(before !== undefined ? { before } : {}),
    });
  }

  async exportSpec(appId: string): Promise<string> {
    return specToYaml((await this.get(appId)).spec);
  }

  // ── settings ───────────────────────────────────────────────────────────────────────────

  /** Replaces every setting value; missing keys get their default. Returns the stored values. */
  async setConfig(appId: string, values: unknown): Promise<Record<string, unknown>> {
    const app = await this.installed(appId);
    const userConfig = resolveConfig(app.spec.config_schema, values, 'config');
    return (await this.reschedule(await this.change(app, { userConfig }))).userConfig;
  }

  async patchOverrides(appId: string, patch: unknown): Promise<App> {
    const app = await this.installed(appId);
    if (!isMap(patch)) throw DomainError.invalid('body must be a JSON object (a JSON Merge Patch)');
    const userOverrides = checkOverrides(applyMergePatch(app.userOverrides, patch));
    return this.change(app, { userOverrides });
  }

  async grant(appId: string, permission: unknown): Promise<App> {
    const app = await this.installed(appId);
    const name = checkPermissionName(permission);
    const granted = [...new Set([...app.permissions.granted, name])];
    return this.change(app, { permissions: { granted, denied: app.permissions.denied.filter((p) => p !== name) } });
  }

  async revoke(appId: string, permission: unknown): Promise<App> {
    const app = await this.installed(appId);
    const name = checkPermissionName(permission);
    const denied = [...new Set([...app.permissions.denied, name])];
    return this.change(app, { permissions: { granted: app.permissions.granted.filter((p) => p !== name), denied } });
  }

  async setUpgradeStrategy(appId: string, strategy: unknown): Promise<App> {
    const app = await this.installed(appId);
    if (!UPGRADE_STRATEGIES.includes(strategy as UpgradeStrategy)) {
      throw DomainError.invalid(`strategy must be one of ${UPGRADE_STRATEGIES.join(', ')}`);
    }
    return this.change(app, { upgradeStrategy: strategy as UpgradeStrategy });
  }

  async clearMemory(appId: string): Promise<void> {
    const app = await this.get(appId);
    await this.data.clearMemory(app.id, app.spaceId);
  }

  // ── spec edits ─────────────────────────────────────────────────────────────────────────

  /** JSON Merge Patch of the spec's top-level fields; the result is validated as a whole. */
  async patchSpec(appId: string, patch: unknown): Promise<App> {
    const app = await this.installed(appId);
    if (!isMap(patch)) throw DomainError.invalid('body must be a JSON object (a JSON Merge Patch)');
    return this.withSpec(app, applyMergePatch(app.spec, patch));
  }

  /**
   * Replaces the whole spec (a Store update's merged spec); validated as a whole, the type stays.
   * `skills`: the update's skill files, written again like at install.
   */
  /** A new spec (a Store update); `settings` replace stored values in the same change. */
  async replaceSpec(
    appId: string,
    spec: unknown,
    skills?: SkillFiles[],
    settings: Record<string, unknown> = {},
  ): Promise<App> {
    const updated = await this.withSpec(await this.installed(appId), spec, settings);
    if (skills) await this.skills.installFor(updated, skills);
    return updated;
  }

  private async withSpec(app: App, candidate: unknown, settings: Record<string, unknown> = {}): Promise<App> {
    const spec = validateSpec(candidate, this.clock.now());
    if (spec.type !== app.spec.type)
      throw new DomainError('unprocessable', AppErrors.typeFixed, ErrorCodes.VALIDATION_FAILED);
    // A spec edit or a Store update may not turn a server into a command (or change the command).
    this.assertCommandPolicy(spec, app.spec, McpPolicyTexts.change);
    await this.assertHookPathsFree(spec, (other) => other.id === app.id);
    // Settings follow the new schema: values of removed keys go, new defaults come in.
    const kept = Object.fromEntries(
      Object.entries({ ...app.userConfig, ...settings }).filter(([key]) =>
        spec.config_schema?.some((f) => f.key === key),
      ),
    );
    const userConfig = resolveConfig(spec.config_schema, kept, 'config');
    return this.reschedule(await this.change(app, { spec, userConfig }));
  }

  /** Rewrites one schedule subscription's timing in the stored spec (an interval or a cron expression). */
  async setFrequency(appId: string, subscriptionId: unknown, frequency: unknown): Promise<App> {
    const app = await this.installed(appId);
    const spec = withFrequency(app.spec, subscriptionId, frequency, this.clock.now());
    return this.reschedule(await this.change(app, { spec }));
  }

  // ── lifecycle ──────────────────────────────────────────────────────────────────────────

  async pause(appId: string): Promise<App> {
    const app = await this.installed(appId);
    if (app.status === 'paused') return app;
    const paused = await this.change(app, { status: 'paused', automation: { nextRunAtMs: null } });
    await this.scheduler.sync(paused);
    await this.publishStatus(paused);
    return paused;
  }

  /** Back to active from paused (or from error, which clears the error). */
  async resume(appId: string): Promise<App> {
    const app = await this.installed(appId);
    if (app.status !== 'paused' && app.status !== 'error') {
      throw new DomainError('conflict', AppErrors.notPaused, ErrorCodes.APP_NOT_PAUSED);
    }
    const resumed = await this.change(app, { status: 'active', automation: { lastError: null } });
    return this.activate(resumed, true);
  }

  /**
   * Soft delete: the app is deactivated first (no more triggers; its chat threads and runs
   * stop, on whichever replica they run), then leaves the list; its threads are kept for a
   * reinstall. `purge` also deletes its data folder.
   */
  async uninstall(appId: string, purge: boolean): Promise<void> {
    const app = await this.get(appId);
    if (app.status !== 'uninstalled') {
      await this.scheduler.forget(app.id);
      await this.lifecycle.stopWork(app.id);
      const gone = await this.change(app, {
        status: 'uninstalled',
        uninstalledAt: new Date(this.clock.now()),
        automation: { nextRunAtMs: null },
      });
      await this.skills.removeFor(app);
      await this.publishList(app.id, 'uninstalled');
      await this.publishStatus(gone);
    }
    if (purge) await this.data.purge(app.id, app.spaceId);
  }

  async reinstall(appId: string): Promise<App> {
    const app = await this.get(appId);
    if (app.status !== 'uninstalled') return app;
    // A reinstall starts the server again: the same rule as an install.
    this.assertCommandPolicy(app.spec, undefined, AppErrors.mcpCommandBlocked);
    await this.assertHookPathsFree(app.spec, (other) => other.id === app.id);
    const back = await this.change(app, { status: 'active', uninstalledAt: null });
    // Bundled files are not kept after an uninstall: a skill app's own SKILL.md comes back from its spec.
    await this.skills.installFor(back);
    await this.publishList(app.id, 'installed');
    return back.spec.type === 'automation' ? this.activate(back, true) : back;
  }

  /**
   * Deletes the app for good: what runs for it stops, then its threads, its data folder
   * (`.svc/apps/<appId>/`), its activity and its record go. Built-in apps are protected.
   */
  async deletePermanently(appId: string): Promise<void> {
    const app = await this.get(appId);
    if (app.builtIn) throw DomainError.forbidden(AppErrors.builtIn);
    await this.scheduler.forget(app.id);
    await this.lifecycle.stopWork(app.id);
    await this.lifecycle.removeAll(app.id);
    await this.data.purge(app.id, app.spaceId);
    await this.skills.removeFor(app);
    if (!(await this.apps.delete(app.id))) return;
    if (app.status !== 'uninstalled') await this.publishList(app.id, 'uninstalled');
    await this.bus.publish(AppChannels.deleted, { appId: app.id } satisfies AppDeletedEvent);
  }

  /** Sets the space new work starts in (null: global); the data folder moves along. */
  async moveSpace(appId: string, spaceId: string | null): Promise<App> {
    const app = await this.installed(appId);
    if (app.spaceId === spaceId) return app;
    await this.assertSpace(spaceId);
    await this.data.move(app.id, app.spaceId, spaceId);
    const moved = await this.change(app, { spaceId });
    return this.reschedule(moved);
  }

  /**
   * Deleting a space deletes its apps (AppCleanup): what runs for them stops and their threads go;
   * the folder, data included, goes with the space.
   */
  async deleteAllInSpace(spaceId: string): Promise<void> {
    for (const appId of await this.apps.deleteAllInSpace(spaceId)) {
      await this.scheduler.forget(appId);
      await this.lifecycle.stopWork(appId);
      await this.lifecycle.removeAll(appId);
      await this.bus.publish(AppChannels.deleted, { appId } satisfies AppDeletedEvent);
    }
  }

  // ── helpers ────────────────────────────────────────────────────────────────────────────

  /** An app that is installed (not uninstalled). */
  private async installed(appId: string): Promise<App> {
    const app = await this.get(appId);
    if (app.status === 'uninstalled')
      throw new DomainError('conflict', AppErrors.uninstalled, ErrorCodes.APP_UNINSTALLED);
    return app;
  }

  /** The MCP command policy (see mcp-command-policy.ts): 403 MCP_COMMAND_BLOCKED before anything is stored. */
  private assertCommandPolicy(next: AppSpec, current: AppSpec | undefined, message: string): void {
    if (refusesCommand(this.config.allowMcpCommands, serverOf(next), serverOf(current))) {
      throw DomainError.forbidden(message, ErrorCodes.MCP_COMMAND_BLOCKED);
    }
  }

  /** Webhook paths are unique across installed apps (`except`: the apps not to compare with). */
  private async assertHookPathsFree(spec: AppSpec, except: (other: App) => boolean): Promise<void> {
    if (!spec.subscriptions?.some((s) => s.source.type === 'webhook')) return;
    const others = (await this.apps.list({})).filter((other) => !except(other));
    const conflict = webhookPathConflict(spec, others);
    if (conflict) {
      throw specError(
        conflict.field,
        `"${conflict.path}" is already the webhook path of another digital human (${conflict.appId})`,
      );
    }
  }

  private async assertSpace(spaceId: string | null): Promise<void> {
    if (spaceId !== null && !(await this.spaces.findById(spaceId)))
      throw DomainError.notFound(SpaceErrors.notFound, ErrorCodes.SPACE_NOT_FOUND);
  }

  private async change(app: App, changes: AppChanges): Promise<App> {
    const updated = await this.apps.update(app.id, changes);
    if (updated === ALREADY_INSTALLED) throw alreadyInstalled();
    if (!updated) throw DomainError.notFound(AppErrors.notFound(app.id), ErrorCodes.APP_NOT_FOUND);
    return updated;
  }

  /** After the spec or place changed: an active automation app is scheduled again. */
  private async reschedule(app: App): Promise<App> {
    if (app.status === 'active' && app.spec.type === 'automation') return this.activate(app, true);
    // Every replica's connection to a changed MCP server follows app events: it is closed and reopened.
    if (app.spec.type === 'mcp') await this.publishStatus(app);
    return app;
  }

  /** The app with its next due time computed again (written when it changed). */
  private async withNextRun(app: App): Promise<App> {
    const nextRunAtMs = nextRunOf(app, this.clock.now());
    return nextRunAtMs === app.automation.nextRunAtMs ? app : this.change(app, { automation: { nextRunAtMs } });
  }

  /** Computes the next due time, hands the app to the scheduler and tells clients. */
  private async activate(app: App, announce: boolean): Promise<App> {
    const current = await this.withNextRun(app);
    await this.scheduler.sync(current);
    if (announce) await this.publishStatus(current);
    return current;
  }

  private publishStatus(app: App): Promise<void> {
    return this.bus.publish(AppChannels.statusChanged, {
      appId: app.id,
      state: automationState(app),
    } satisfies AppStatusChangedEvent);
  }

  private publishList(appId: string, change: AppListChangedEvent['change']): Promise<void> {
    return this.bus.publish(AppChannels.listChanged, { appId, change } satisfies AppListChangedEvent);
  }
}

/** The same digital human (author and name), as the install key counts it. */
function sameApp(a: AppSpec, b: AppSpec): boolean {
  return a.author === b.author && a.name === b.name;
}

function alreadyInstalled(): DomainError {
  return new DomainError('conflict', AppErrors.alreadyInstalled, ErrorCodes.ALREADY_INSTALLED);
}
