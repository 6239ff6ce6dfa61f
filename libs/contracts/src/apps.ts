/** Wire types of digital humans (apps): records, automation state, activity, events (docs/api/digital-humans.md). */

/** Lifecycle status of an installed app record. */
export const APP_STATUSES = ['active', 'paused', 'waiting_user', 'needs_login', 'error', 'uninstalled'] as const;
export type AppStatus = (typeof APP_STATUSES)[number];

export const APP_TYPES = ['automation', 'mcp', 'skill', 'extension'] as const;
export type AppType = (typeof APP_TYPES)[number];

export const UPGRADE_STRATEGIES = ['auto', 'notify', 'manual'] as const;
export type UpgradeStrategy = (typeof UPGRADE_STRATEGIES)[number];

/** Runtime permissions a spec may declare and a user may grant or revoke. */
export const APP_PERMISSIONS = [
  'ai-browser',
  'ai-terminal',
  'email',
  'im-push',
  'svc-api-ref',
  'conversation-collab',
] as const;
export type AppPermission = (typeof APP_PERMISSIONS)[number];

export interface AppPermissionsDto {
  granted: string[];
  denied: string[];
}

/** Real-time run state: what `GET /api/apps/:appId/state` returns and `app:status_changed` carries. */
export type AutomationStatus = 'idle' | 'running' | 'paused' | 'waiting_user' | 'needs_login' | 'error' | 'uninstalled';

export interface AutomationStateDto {
  status: AutomationStatus;
  /** Whether schedules and events start runs on their own (an active automation app). */
  automaticEnabled: boolean;
  runningCount: number;
  nextRunAtMs: number | null;
  lastRunAtMs: number | null;
  lastStatus: 'ok' | 'error' | 'skipped' | null;
  lastError: string | null;
  pendingEscalationId: string | null;
  /**
   * Each subscription and whether it starts runs: `schedule`, `file` and `webhook` do (while the
   * app is active); `webpage`, `rss`, `custom` and `wecom` are kept but nothing produces their events.
   */
  triggers: AutomationTriggerDto[];
}

export interface AutomationTriggerDto {
  id: string;
  type: string;
  fires: boolean;
  /** Why it does not fire, when it does not. */
  note?: string;
  /** Webhooks: the path after `/hooks/`. */
  path?: string;
}

/** The App object. Times are epoch milliseconds, like the automation state. */
export interface AppDto {
  id: string;
  /** null: installed for every workspace (global). */
  spaceId: string | null;
  /** The normalized spec (canonical field names, unknown fields dropped). */
  spec: Record<string, unknown>;
  status: AppStatus;
  userConfig: Record<string, unknown>;
  userOverrides: Record<string, unknown>;
  permissions: AppPermissionsDto;
  upgradeStrategy: UpgradeStrategy;
  builtIn: boolean;
  installedAt: number;
  updatedAt: number;
  uninstalledAt?: number;
  lastRunAt?: number;
  errorMessage?: string;
  pendingEscalationId?: string;
}

export const ACTIVITY_TYPES = [
  'run_complete',
  'run_error',
  'run_skipped',
  'milestone',
  'output',
  'escalation',
  /** A run's tool call held for approval; the entry is updated with the decision (docs/api/agent.md, "Tool approvals"). */
  'approval',
] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

export interface ActivityEntryDto {
  id: string;
  runId: string | null;
  type: ActivityType;
  /** Epoch milliseconds. */
  ts: number;
  content: Record<string, unknown>;
}

/** Global event channels of digital humans (docs/api/digital-humans.md, "Events"). */
export const AppChannels = {
  statusChanged: 'app:status_changed',
  listChanged: 'app:list_changed',
  deleted: 'app:deleted',
  activityEntryNew: 'app:activity_entry:new',
  imSessionUpdated: 'app:im-session-updated',
  escalationNew: 'app:escalation:new',
  escalationResolved: 'app:escalation:resolved',
} as const;

export interface AppActivityEntryNewEvent {
  appId: string;
  entry: Omit<ActivityEntryDto, 'appId'>;
}

export interface AppEscalationNewEvent {
  appId: string;
  entryId: string;
  question: string;
  choices: string[];
  /** A team member's escalation (docs/api/teams.md): its team and epoch. */
  teamId?: string;
  epochId?: string;
}

/** The user's answer to a question (docs/api/digital-humans.md, "Events": `choice`, `text`). */
export interface EscalationResponse {
  choice?: string;
  text?: string;
}

export interface AppEscalationResolvedEvent {
  appId: string;
  entryId: string;
  response: EscalationResponse;
}

/** `POST /api/apps/:appId/trigger` (and what every trigger gets back from starting a run). */
export type RunTriggerResult =
  { outcome: 'started'; runId: string; conversationId: string } | { outcome: 'skipped'; runId: null; reason: string };

/** A digital human's chat thread got a message (`lastMessage`: its first 50 characters). */
export interface AppImSessionUpdatedEvent {
  appId: string;
  /** `app-chat` for threads opened over HTTP; message channels name themselves. */
  channel: string;
  /** The thread's conversation id. */
  chatId: string;
  chatType: 'direct' | 'group';
  /** The message channel's instance; null for HTTP threads. */
  instanceId: string | null;
  lastMessage: string;
}

/** The default chat thread of a digital human. */
export const appChatConversationId = (appId: string): string => `app-chat:${appId}`;

/** The conversation all runs of an app are kept in: one at a time, each message marked with its run. */
export const appRunConversationId = (appId: string): string => `app-run:${appId}`;

/** `GET /api/apps/:appId/chat/session-state`. */
export interface AppChatSessionStateDto {
  isActive: boolean;
  thoughts: unknown[];
  spaceId: string | null;
}

export interface AppStatusChangedEvent {
  appId: string;
  state: AutomationStateDto;
}

export interface AppListChangedEvent {
  appId: string;
  change: 'installed' | 'uninstalled';
}

export interface AppDeletedEvent {
  appId: string;
}

/** Exact texts the specification fixes for digital-human operations. */
export const AppErrorTexts = {
  notInitialized: 'App Manager is not yet initialized. Please try again shortly.',
} as const;
