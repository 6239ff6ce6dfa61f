import { Injectable } from '@nestjs/common';
import type { FileTriggerConfig } from './file-trigger-rules.js';

/** A file subscription of someone other than a digital human (a team), in one space. */
export interface OwnedFileSubscription {
  /** Who owns it (a team's id): the burst's claim is kept under it. */
  ownerId: string;
  subscriptionId: string;
  /** `{pattern?, path?}` as a digital human's file subscription. */
  config: FileTriggerConfig;
}

/** A burst of matching changes to an owned subscription, claimed once across replicas. */
export interface OwnedFileBurst {
  ownerId: string;
  subscriptionId: string;
  spaceId: string;
  /** `{type, path, spaceId}` per changed file, then `{more: N}` past the cap, as a run's `changes`. */
  changes: unknown[];
}

/**
 * The triggers context's port for file subscriptions other contexts own (teams): the owner says
 * which subscriptions listen in a space and what a burst starts; the file-watch lease holder
 * matches the changes and collects the bursts, and each burst is claimed once across replicas
 * exactly as for a digital human's. Contexts register here; this context imports none of them.
 */
@Injectable()
export class FileOwners {
  private readonly owners = new Map<string, FileOwner>();

  register(kind: string, owner: FileOwner): void {
    this.owners.set(kind, owner);
  }

  kinds(): string[] {
    return [...this.owners.keys()];
  }

  async subscriptions(kind: string, spaceId: string): Promise<OwnedFileSubscription[]> {
    return (await this.owners.get(kind)?.subscriptions(spaceId)) ?? [];
  }

  async fire(kind: string, burst: OwnedFileBurst): Promise<void> {
    const owner = this.owners.get(kind);
    if (!owner) throw new Error(`no file owner "${kind}" is registered`);
    await owner.fire(burst);
  }
}

export interface FileOwner {
  subscriptions(spaceId: string): Promise<OwnedFileSubscription[]>;
  fire(burst: OwnedFileBurst): Promise<void>;
}
