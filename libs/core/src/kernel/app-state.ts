import type { AutomationStateDto } from '#contracts/apps.js';
import type { App } from './app.js';

/** Facts about an installed app that several contexts read (apps, triggers, MCP). No I/O here. */

/** Whether schedules and events start runs of this app on their own. */
export function runsAutomatically(app: App): boolean {
  return app.spec.type === 'automation' && app.status === 'active' && (app.spec.subscriptions?.length ?? 0) > 0;
}

/** The real-time automation state of an app (`GET state`, `app:status_changed`). */
export function automationState(app: App): AutomationStateDto {
  const a = app.automation;
  const status = app.status === 'active' ? (a.runningCount > 0 ? 'running' : 'idle') : app.status;
  return {
    status,
    automaticEnabled: runsAutomatically(app),
    runningCount: a.runningCount,
    nextRunAtMs: a.nextRunAtMs,
    lastRunAtMs: a.lastRunAtMs,
    lastStatus: a.lastStatus,
    lastError: a.lastError,
    pendingEscalationId: a.pendingEscalationId,
    triggers: (app.spec.subscriptions ?? []).map((s) => {
      const fires = FIRING_SOURCES.has(s.source.type);
      const path = s.source.type === 'webhook' ? s.source.config.path : undefined;
      return {
        id: s.id,
        type: s.source.type,
        fires,
        ...(fires ? {} : { note: NEVER_FIRES }),
        ...(typeof path === 'string' ? { path } : {}),
      };
    }),
  };
}

/** Sources that start runs; the others are accepted and kept, but nothing produces their events. */
const FIRING_SOURCES: ReadonlySet<string> = new Set(['schedule', 'file', 'webhook']);
const NEVER_FIRES = 'accepted and kept; this server produces no events of this source';
