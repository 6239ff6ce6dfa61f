import type { ActivityType, AppStatus, UpgradeStrategy } from '#contracts/apps.js';
import type { AppSpec } from './app-spec/app-spec.js';

/** An installed digital human (docs/api/digital-humans.md, "Install and lifecycle"). */
export interface App {
  /** UUID. */
  id: string;
  /** null: installed for every workspace (global). */
  spaceId: string | null;
  /** The normalized spec; user edits (PATCH spec, frequency) are written into it. */
  spec: AppSpec;
  status: AppStatus;
  /** Setting values by `config_schema` key, defaults filled. */
  userConfig: Record<string, unknown>;
  /** The user's own choices (model, notification level, memory, ...), kept apart from the spec. */
  userOverrides: Record<string, unknown>;
  permissions: AppPermissions;
  upgradeStrategy: UpgradeStrategy;
  /** Shipped with the server; cannot be deleted permanently. */
  builtIn: boolean;
  automation: AutomationFields;
  installedAt: Date;
  updatedAt: Date;
  uninstalledAt: Date | null;
}

/** What the user turned on or off beyond the spec's own `permissions`. */
export interface AppPermissions {
  granted: string[];
  denied: string[];
}

/** Run bookkeeping kept on the record, so every replica answers `state` alike. */
export interface AutomationFields {
  runningCount: number;
  nextRunAtMs: number | null;
  lastRunAtMs: number | null;
  lastStatus: 'ok' | 'error' | 'skipped' | null;
  lastError: string | null;
  pendingEscalationId: string | null;
}

export const IDLE_AUTOMATION: Readonly<AutomationFields> = {
  runningCount: 0,
  nextRunAtMs: null,
  lastRunAtMs: null,
  lastStatus: null,
  lastError: null,
  pendingEscalationId: null,
};

/** One line of an app's activity feed (docs/api/digital-humans.md, "Runs": `id`, `runId`, `type`, `ts`, `content`). */
export interface ActivityEntry {
  id: string;
  appId: string;
  runId: string | null;
  type: ActivityType;
  /** Epoch milliseconds. */
  ts: number;
  content: Record<string, unknown>;
}
