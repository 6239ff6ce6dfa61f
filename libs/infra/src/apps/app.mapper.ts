import type { ActivityType, AppStatus, UpgradeStrategy } from '#contracts/apps.js';
import type { ActivityEntry, App, AutomationFields } from '#core/kernel/app.js';
import { identityOf } from '#core/apps/app-rules.js';
import type { AppSpec } from '#core/kernel/app-spec/app-spec.js';
import type { AppChanges, NewApp } from '#core/ports/app.repository.port.js';
import { AppActivityEntity } from '../database/entities/app-activity.entity.js';
import type { AppEntity } from '../database/entities/app.entity.js';

/** The pair of functions between App records and their rows. */

const msOrNull = (value: string | null): number | null => (value === null ? null : Number(value));
const textOrNull = (value: number | null): string | null => (value === null ? null : String(value));

/** One install per place and digital human while installed; null frees the key once uninstalled. */
export function installKeyOf(spaceId: string | null, spec: AppSpec, status: AppStatus): string | null {
  return status === 'uninstalled' ? null : `${spaceId ?? '*'}:${identityOf(spec)}`;
}

export function toApp(e: AppEntity): App {
  return {
    id: e.id,
    spaceId: e.spaceId,
    spec: e.spec as unknown as AppSpec,
    status: e.status as AppStatus,
    userConfig: e.userConfig,
    userOverrides: e.userOverrides,
    permissions: { granted: e.permissions.granted ?? [], denied: e.permissions.denied ?? [] },
    upgradeStrategy: e.upgradeStrategy as UpgradeStrategy,
    builtIn: e.builtIn,
    automation: {
      runningCount: e.runningCount,
      nextRunAtMs: msOrNull(e.nextRunAtMs),
      lastRunAtMs: msOrNull(e.lastRunAtMs),
      lastStatus: e.lastStatus as AutomationFields['lastStatus'],
      lastError: e.lastError,
      pendingEscalationId: e.pendingEscalationId,
    },
    installedAt: e.installedAt,
    updatedAt: e.updatedAt,
    uninstalledAt: e.uninstalledAt,
  };
}

/** The columns of a new app (times are set by the database). */
export function toNewRow(app: NewApp): Partial<AppEntity> {
  return {
    id: app.id,
    spaceId: app.spaceId,
    installKey: installKeyOf(app.spaceId, app.spec, app.status),
    spec: app.spec as unknown as Record<string, unknown>,
    status: app.status,
    userConfig: app.userConfig,
    userOverrides: app.userOverrides,
    permissions: app.permissions,
    upgradeStrategy: app.upgradeStrategy,
    builtIn: app.builtIn,
    ...automationColumns(app.automation),
  };
}

/** Whether the changes move the install key (its space, spec or status): only then is the row read first. */
export function changesInstallKey(changes: AppChanges): boolean {
  return changes.spaceId !== undefined || changes.spec !== undefined || changes.status !== undefined;
}

/** The columns `changes` writes; `current` (needed when `changesInstallKey`): the install key follows the merged record. */
export function toChangedColumns(current: App | null, changes: AppChanges): Partial<AppEntity> {
  const row: Partial<AppEntity> = automationColumns(changes.automation ?? {});
  if (current) {
    const merged = { ...current, ...changes };
    row.installKey = installKeyOf(merged.spaceId, merged.spec, merged.status);
  }
  if (changes.spaceId !== undefined) row.spaceId = changes.spaceId;
  if (changes.spec !== undefined) row.spec = changes.spec as unknown as Record<string, unknown>;
  if (changes.status !== undefined) row.status = changes.status;
  if (changes.userConfig !== undefined) row.userConfig = changes.userConfig;
  if (changes.userOverrides !== undefined) row.userOverrides = changes.userOverrides;
  if (changes.permissions !== undefined) row.permissions = changes.permissions;
  if (changes.upgradeStrategy !== undefined) row.upgradeStrategy = changes.upgradeStrategy;
  if (changes.uninstalledAt !== undefined) row.uninstalledAt = changes.uninstalledAt;
  return row;
}

function automationColumns(a: Partial<AutomationFields>): Partial<AppEntity> {
  const row: Partial<AppEntity> = {};
  if (a.runningCount !== undefined) row.runningCount = a.runningCount;
  if (a.nextRunAtMs !== undefined) row.nextRunAtMs = textOrNull(a.nextRunAtMs);
  if (a.lastRunAtMs !== undefined) row.lastRunAtMs = textOrNull(a.lastRunAtMs);
  if (a.lastStatus !== undefined) row.lastStatus = a.lastStatus;
  if (a.lastError !== undefined) row.lastError = a.lastError;
  if (a.pendingEscalationId !== undefined) row.pendingEscalationId = a.pendingEscalationId;
  return row;
}

export function toActivityEntry(e: AppActivityEntity): ActivityEntry {
  return {
    id: e.id,
    appId: e.appId,
    runId: e.runId,
    type: e.type as ActivityType,
    ts: Number(e.ts),
    content: e.content,
  };
}

export function toActivityRow(entry: ActivityEntry): AppActivityEntity {
  return Object.assign(new AppActivityEntity(), {
    id: entry.id,
    appId: entry.appId,
    runId: entry.runId,
    type: entry.type,
    ts: String(entry.ts),
    content: entry.content,
  });
}
