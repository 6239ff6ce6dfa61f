import type { ActivityEntry, App } from '#core/kernel/app.js';
import { identityOf } from '#core/apps/app-rules.js';
import {
  ALREADY_INSTALLED,
  type ActivityOutcome,
  type ActivityPage,
  type AlreadyInstalled,
  type AppChanges,
  type AppListFilter,
  AppRepository,
  type NewApp,
} from '#core/ports/app.repository.port.js';
import { AppScheduler } from '#core/ports/app-scheduler.port.js';
import type { RunStarter } from '#core/ports/run-starter.port.js';

/** A valid automation spec (an hourly schedule) to install in unit tests; spread it to vary a field. */
export const WATCHER_SPEC = {
  name: 'Watcher',
  version: '1.0.0',
  author: 'alice',
  description: 'Watches.',
  type: 'automation',
  system_prompt: 'Watch.',
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1h' } } }],
};

/** AppRepository in memory, with the same uniqueness rule as the database (one install per place). */
export class FakeAppRepository extends AppRepository {
  readonly apps = new Map<string, App>();
  readonly activity: ActivityEntry[] = [];
  private tick = 0;

  constructor(private readonly now: () => number = () => Date.now()) {
    super();
  }

  async install(app: NewApp): Promise<App | AlreadyInstalled> {
    const at = this.stamp();
    const record: App = { ...structuredClone(app), installedAt: at, updatedAt: at, uninstalledAt: null };
    if (this.clashes(record)) return ALREADY_INSTALLED;
    this.apps.set(app.id, record);
    return structuredClone(record);
  }

  async findById(id: string): Promise<App | null> {
    const app = this.apps.get(id);
    return app ? structuredClone(app) : null;
  }

  async list(filter: AppListFilter): Promise<App[]> {
    return [...this.apps.values()]
      .filter((a) => filter.spaceId === undefined || a.spaceId === filter.spaceId)
      .filter((a) => (filter.status === undefined ? a.status !== 'uninstalled' : a.status === filter.status))
      .filter((a) => filter.type === undefined || a.spec.type === filter.type)
      .filter(
        (a) =>
          filter.webhookPath === undefined ||
          (a.spec.subscriptions ?? []).some(
            (s) => s.source.type === 'webhook' && s.source.config.path === filter.webhookPath,
          ),
      )
      .sort((a, b) => a.installedAt.getTime() - b.installedAt.getTime())
      .map((a) => structuredClone(a));
  }

  async update(id: string, changes: AppChanges): Promise<App | AlreadyInstalled | null> {
    const current = this.apps.get(id);
    if (!current) return null;
    const { automation, ...fields } = changes;
    const next: App = {
      ...current,
      ...structuredClone(fields),
      automation: { ...current.automation, ...automation },
      updatedAt: this.stamp(),
    };
    if (this.clashes(next)) return ALREADY_INSTALLED;
    this.apps.set(id, next);
    return structuredClone(next);
  }

  async delete(id: string): Promise<boolean> {
    this.dropActivity([id]);
    return this.apps.delete(id);
  }

  async deleteAllInSpace(spaceId: string): Promise<string[]> {
    const ids = [...this.apps.values()].filter((a) => a.spaceId === spaceId).map((a) => a.id);
    for (const id of ids) this.apps.delete(id);
    this.dropActivity(ids);
    return ids;
  }

  async addActivity(entry: ActivityEntry): Promise<void> {
    this.activity.push(structuredClone(entry));
  }

  async addActivityIfAppExists(entry: ActivityEntry): Promise<boolean> {
    if (!this.apps.has(entry.appId)) return false;
    await this.addActivity(entry);
    return true;
  }

  async listActivity(appId: string, page: ActivityPage): Promise<ActivityEntry[]> {
    return this.activity
      .filter((e) => e.appId === appId && (page.before === undefined || e.ts < page.before))
      .sort((a, b) => b.ts - a.ts)
      .slice(0, page.limit)
      .map((e) => structuredClone(e));
  }

  async recentOutcomes(appId: string, limit: number): Promise<ActivityOutcome[]> {
    return (await this.listActivity(appId, { limit })).map((e) => ({
      type: e.type,
      content: e.content.outage === true ? { outage: true } : {},
    }));
  }

  async findActivity(appId: string, entryId: string): Promise<ActivityEntry | null> {
    const entry = this.activity.find((e) => e.appId === appId && e.id === entryId);
    return entry ? structuredClone(entry) : null;
  }

  async mergeActivityContent(
    appId: string,
    entryId: string,
    patch: Record<string, unknown>,
  ): Promise<ActivityEntry | null> {
    const entry = this.activity.find((e) => e.appId === appId && e.id === entryId);
    if (!entry) return null;
    entry.content = { ...entry.content, ...structuredClone(patch) };
    return structuredClone(entry);
  }

  private clashes(app: App): boolean {
    if (app.status === 'uninstalled') return false;
    return [...this.apps.values()].some(
      (other) =>
        other.id !== app.id &&
        other.status !== 'uninstalled' &&
        other.spaceId === app.spaceId &&
        identityOf(other.spec) === identityOf(app.spec),
    );
  }

  private dropActivity(appIds: string[]): void {
    for (let i = this.activity.length - 1; i >= 0; i--) {
      if (appIds.includes(this.activity[i]!.appId)) this.activity.splice(i, 1);
    }
  }

  /** Strictly increasing times, so "oldest first" is stable within one millisecond. */
  private stamp(): Date {
    this.tick = Math.max(this.tick + 1, this.now());
    return new Date(this.tick);
  }
}

/**
 * Records which apps the scheduler was asked to sync (with their status) or forget, whose runs
 * ended, and the run starter handed over.
 */
export class RecordingAppScheduler extends AppScheduler {
  readonly synced: string[] = [];
  readonly forgotten: string[] = [];
  readonly ended: string[] = [];
  starter: RunStarter | null = null;

  async sync(app: App): Promise<void> {
    this.synced.push(`${app.id}:${app.status}`);
  }

  async forget(appId: string): Promise<void> {
    this.forgotten.push(appId);
  }

  async runEnded(appId: string): Promise<void> {
    this.ended.push(appId);
  }

  useRunStarter(starter: RunStarter): void {
    this.starter = starter;
  }
}
