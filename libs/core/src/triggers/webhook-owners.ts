import { Injectable } from '@nestjs/common';

/** A webhook subscription of someone other than a digital human (a team), found by its path. */
export interface OwnedWebhook {
  /** Who owns it (a team's id): the de-duplication claims are kept under it. */
  ownerId: string;
  subscriptionId: string;
  /** `{path, secret?}` as a subscription's. */
  config: Record<string, unknown>;
}

/** An accepted delivery to an owned webhook (already de-duplicated across replicas). */
export interface OwnedWebhookDelivery {
  ownerId: string;
  subscriptionId: string;
  path: string;
  body: unknown;
  deliveryId: string | null;
}

/**
 * The triggers context's port for webhook subscriptions other contexts own (teams): the owner
 * registers how a path is found and what a delivery starts; `POST /hooks/<path>` then checks the
 * signature, de-duplicates across replicas and queues the delivery exactly as for a digital
 * human's subscription. Contexts register here; this context imports none of them.
 */
@Injectable()
export class WebhookOwners {
  private readonly owners = new Map<string, WebhookOwner>();

  register(kind: string, owner: WebhookOwner): void {
    this.owners.set(kind, owner);
  }

  /** The first owner's webhook at this path, with the owner's kind. */
  async find(path: string): Promise<(OwnedWebhook & { kind: string }) | null> {
    for (const [kind, owner] of this.owners) {
      const found = await owner.find(path);
      if (found) return { ...found, kind };
    }
    return null;
  }

  async fire(kind: string, delivery: OwnedWebhookDelivery): Promise<void> {
    const owner = this.owners.get(kind);
    if (!owner) throw new Error(`no webhook owner "${kind}" is registered`);
    await owner.fire(delivery);
  }
}

export interface WebhookOwner {
  find(path: string): Promise<OwnedWebhook | null>;
  fire(delivery: OwnedWebhookDelivery): Promise<void>;
}
