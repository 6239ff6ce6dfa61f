import type { Redis } from 'ioredis';
import { LivePageRegistry, type ReplicaPages } from '#core/browser/live-page-registry.js';

/** Alone on the data folder (no Redis): no other replica, so this process's own announcement is all there is. */
export class LocalLivePageRegistry extends LivePageRegistry {
  readonly leaseMs = Number.POSITIVE_INFINITY;
  private own: ReplicaPages | null = null;

  async announce(holding: ReplicaPages): Promise<void> {
    this.own = holding;
  }

  async all(): Promise<ReplicaPages[]> {
    return this.own ? [this.own] : [];
  }

  async withdraw(): Promise<void> {
    this.own = null;
  }
}

export const BROWSER_PAGES_LEASE_MS = 10_000;

/**
 * One Redis hash, a field per replica: `{expiresAt, pages, views}`. Readers ignore (and sweep)
 * fields past their time, so a replica that died drops out within `leaseMs`.
 */
export class RedisLivePageRegistry extends LivePageRegistry {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    readonly leaseMs = BROWSER_PAGES_LEASE_MS,
  ) {
    super();
    this.key = `${prefix}:browser-pages`;
  }

  async announce(holding: ReplicaPages): Promise<void> {
    await this.redis.hset(
      this.key,
      holding.replica,
      JSON.stringify({ ...holding, expiresAt: Date.now() + this.leaseMs }),
    );
  }

  async all(): Promise<ReplicaPages[]> {
    const entries = await this.redis.hgetall(this.key);
    const now = Date.now();
    const live: ReplicaPages[] = [];
    const lapsed: string[] = [];
    for (const [replica, value] of Object.entries(entries)) {
      let parsed: (ReplicaPages & { expiresAt: number }) | null = null;
      try {
        parsed = JSON.parse(value) as ReplicaPages & { expiresAt: number };
      } catch {
        /* unreadable: swept below */
      }
      if (parsed && parsed.expiresAt > now) live.push({ replica, pages: parsed.pages, views: parsed.views });
      else lapsed.push(replica);
    }
    if (lapsed.length > 0) await this.redis.hdel(this.key, ...lapsed);
    return live;
  }

  async withdraw(replica: string): Promise<void> {
    await this.redis.hdel(this.key, replica);
  }
}
