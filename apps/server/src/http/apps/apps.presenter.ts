import type { ActivityEntryDto, AppDto } from '#contracts/apps.js';
import type { ActivityEntry, App } from '#core/kernel/app.js';

/** Domain records → wire shapes (times in epoch milliseconds; optional fields left out when unset). */

export function toAppDto(app: App): AppDto {
  const dto: AppDto = {
    id: app.id,
    spaceId: app.spaceId,
    spec: app.spec as unknown as Record<string, unknown>,
    status: app.status,
    userConfig: app.userConfig,
    userOverrides: app.userOverrides,
    permissions: app.permissions,
    upgradeStrategy: app.upgradeStrategy,
    builtIn: app.builtIn,
    installedAt: app.installedAt.getTime(),
    updatedAt: app.updatedAt.getTime(),
  };
  if (app.uninstalledAt) dto.uninstalledAt = app.uninstalledAt.getTime();
  if (app.automation.lastRunAtMs !== null) dto.lastRunAt = app.automation.lastRunAtMs;
  if (app.automation.lastError !== null) dto.errorMessage = app.automation.lastError;
  if (app.automation.pendingEscalationId !== null) dto.pendingEscalationId = app.automation.pendingEscalationId;
  return dto;
}

export function toActivityDto(entry: ActivityEntry): ActivityEntryDto {
  return { id: entry.id, runId: entry.runId, type: entry.type, ts: entry.ts, content: entry.content };
}
