import type { App } from '../kernel/app.js';
import type { RunStarter } from './run-starter.port.js';

/**
 * The seam for triggers (schedules, file and webhook subscriptions). Apps call it whenever
 * what should fire may have changed: installed, activated, paused, resumed, moved, its spec
 * or a frequency rewritten, uninstalled or deleted. An implementation reads the app as
 * given (its status and `spec.subscriptions`) and makes its timers match.
 */
export abstract class AppScheduler {
  /** The app's triggers should match its current spec and status (none unless active). */
  abstract sync(app: App): Promise<void>;
  /** `sync` for each of many apps (at start); an implementation may batch its round trips. */
  async syncAll(apps: readonly App[]): Promise<void> {
    for (const app of apps) await this.sync(app);
  }
  /** The app is gone or uninstalled: drop every trigger of it. */
  abstract forget(appId: string): Promise<void>;
  /** A run of the app ended (its turn is recorded as ended): the next queued delivery may start. */
  abstract runEnded(appId: string): Promise<void>;
  /** The apps context hands over, once at start, how a firing trigger starts, skips and pauses its runs. */
  abstract useRunStarter(starter: RunStarter): void;
}

/** Until triggers exist nothing fires on its own; every call is accepted and does nothing. */
export class NoAppScheduler extends AppScheduler {
  async sync(): Promise<void> {}
  async forget(): Promise<void> {}
  async runEnded(): Promise<void> {}
  useRunStarter(): void {}
}
