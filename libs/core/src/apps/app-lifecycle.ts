import { Injectable } from '@nestjs/common';
import type { App } from './app.js';

/**
 * What another part of the digital-human context does when an app stops working or goes
 * away: its chat and runs stop their turns and drop their threads; triggers could drop their
 * timers the same way. Each step may be called again for the same app and must not mind.
 */
export interface AppLifecycleListener {
  /** The app was uninstalled or is about to be deleted: stop whatever runs for it, on any replica. */
  stopWork?(app: App): Promise<void>;
  /** The app is deleted for good: remove what belongs to it besides its record and data folder. */
  removeAll?(app: App): Promise<void>;
}

/**
 * The listeners AppsService calls on uninstall and permanent delete. Contexts that build on
 * apps (chat and runs) register in `onModuleInit`, so AppsService needs none of them.
 */
@Injectable()
export class AppLifecycle {
  private readonly listeners: AppLifecycleListener[] = [];

  register(listener: AppLifecycleListener): void {
    this.listeners.push(listener);
  }

  async stopWork(app: App): Promise<void> {
    for (const listener of this.listeners) await listener.stopWork?.(app);
  }

  async removeAll(app: App): Promise<void> {
    for (const listener of this.listeners) await listener.removeAll?.(app);
  }
}
