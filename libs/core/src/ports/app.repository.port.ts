import type { AppStatus, AppType } from '#contracts/apps.js';
import type { ActivityEntry, App, AutomationFields } from '../kernel/app.js';

export type NewApp = Omit<App, 'installedAt' | 'updatedAt' | 'uninstalledAt'>;

export type AppChanges = Partial<
  Pick<
    App,
    'spaceId' | 'spec' | 'status' | 'userConfig' | 'userOverrides' | 'permissions' | 'upgradeStrategy' | 'uninstalledAt'
  >
> & { automation?: Partial<AutomationFields> };

export interface AppListFilter {
  /** Only apps of this space; null: only global apps; absent: every place. */
  spaceId?: string | null;
  /** Only apps in this status; absent: every status except `uninstalled`. */
  status?: AppStatus;
  /** Only apps whose spec has a webhook subscription with exactly this path (a delivery's look-up). */
  webhookPath?: string;
  /**
   * Only apps of this type (MCP servers, read for every turn's tools: not every digital human's
   * spec, of which there may be thousands).
   */
  type?: AppType;
}

export interface ActivityPage {
  /** At most this many entries, newest first. */
  limit: number;
  /** Only entries older than this time (epoch ms): the cursor of the next page. */
  before?: number;
}

/** The same digital human is installed (not uninstalled) in that place already. */
export const ALREADY_INSTALLED = 'already-installed';
export type AlreadyInstalled = typeof ALREADY_INSTALLED;

/** An activity entry as the failure count reads it (`consecutiveFailures`). */
export type ActivityOutcome = Pick<ActivityEntry, 'type'> & { content: { outage?: true } };

/**
 * Installed digital humans and their activity. "Same digital human in the same place"
 * (author and name, one space or global) is unique among apps not uninstalled; the store
 * settles races and answers ALREADY_INSTALLED instead of writing.
 */
export abstract class AppRepository {
  abstract install(app: NewApp): Promise<App | AlreadyInstalled>;
  abstract findById(id: string): Promise<App | null>;
  /** Oldest install first. */
  abstract list(filter: AppListFilter): Promise<App[]>;
  /** Changes the listed fields; null when the app is gone. */
  abstract update(id: string, changes: AppChanges): Promise<App | AlreadyInstalled | null>;
  /** Deletes the app and its activity for good. */
  abstract delete(id: string): Promise<boolean>;
  /** Deletes every app of the space (any status) and their activity; returns their ids. */
  abstract deleteAllInSpace(spaceId: string): Promise<string[]>;
  abstract addActivity(entry: ActivityEntry): Promise<void>;
  /** Adds the entry only while its app exists (one step: a run's end needs no look-up first); false when the app is gone. */
  abstract addActivityIfAppExists(entry: ActivityEntry): Promise<boolean>;
  abstract listActivity(appId: string, page: ActivityPage): Promise<ActivityEntry[]>;
  /**
   * The newest `limit` entries, newest first, with only what the failure count reads: the type,
   * and whether a run's error was the server's own outage (`content.outage`). A run's output can
   * be large; the count reads up to 50 entries on every tick and delivery.
   */
  abstract recentOutcomes(appId: string, limit: number): Promise<ActivityOutcome[]>;
  abstract findActivity(appId: string, entryId: string): Promise<ActivityEntry | null>;
  /** Sets top-level keys of an entry's content (others kept) in one write; null when there is no such entry. */
  abstract mergeActivityContent(
    appId: string,
    entryId: string,
    patch: Record<string, unknown>,
  ): Promise<ActivityEntry | null>;
}
