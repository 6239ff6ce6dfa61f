import { Injectable } from '@nestjs/common';

/**
 * What another part of the digital-human context does when an app stops working or goes
 * away: its chat and runs stop their turns and drop their threads; triggers could drop their
 * timers the same way. Each step may be called again for the same app and must not mind.
 */
export interface AppLifecycleListener {
  /** The app was uninstalled or is about to be deleted: stop whatever runs for it, on any replica. */
  stopWork?(appId: string): Promise<void>;
  /** The app is deleted for good: remove what belongs to it besides its record and data folder. */
  removeAll?(appId: string): Promise<void>;
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

  async stopWork(appId: string): Promise<void> {
    for (const listener of this.listeners) await listener.stopWork?.(appId);
  }

  async removeAll(appId: string): Promise<void> {
    for (const listener of this.listeners) await listener.removeAll?.(appId);
  }
}
