import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { type LeaderCampaign, LeaderLease, type LeadershipListener } from '#core/ports/leader-lease.port.js';
import type { AppLogger } from '../logging/logger.js';

export interface RedisLeaseOptions {
  /** Lifetime of the lease key; a dead holder's lease is taken over after at most this plus `renewEveryMs`. */
  ttlMs?: number;
  /** How often the holder renews and the others try to acquire. */
  renewEveryMs?: number;
}

export const DEFAULT_LEASE_TTL_MS = 10_000;
export const DEFAULT_LEASE_RENEW_MS = 3_000;

/** Extends the lease only while it is still ours (compare-and-set). */
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
/** Deletes the lease only while it is still ours. */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Leases in Redis: `SET key token NX PX ttl` to acquire, a compare-and-set script to renew
 * every `renewEveryMs`, a compare-and-delete to release at shutdown. A holder that cannot
 * renew (Redis unreachable) steps down before its key can expire, so two replicas never
 * lead at once while their clocks agree; a replica that dies is replaced within
 * `ttlMs + renewEveryMs` (13 s by default), one that shuts down within `renewEveryMs`.
 */
export class RedisLeaderLease extends LeaderLease {
  private readonly redis: Redis;
  private readonly campaigns = new Set<RedisCampaign>();
  private readonly ttlMs: number;
  private readonly renewEveryMs: number;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly owner: string,
    private readonly logger?: AppLogger,
    options: RedisLeaseOptions = {},
  ) {
    super();
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.renewEveryMs = options.renewEveryMs ?? DEFAULT_LEASE_RENEW_MS;
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: Math.max(500, this.renewEveryMs - 500) });
    this.redis.on('error', (err: Error) => this.logger?.warn('leader lease redis error', { error: err.message }));
  }

  campaign(name: string, listener: LeadershipListener): LeaderCampaign {
    const campaign = new RedisCampaign(
      this.redis,
      `${this.prefix}:lease:${name}`,
      `${this.owner}:${randomUUID()}`,
      this.ttlMs,
      this.renewEveryMs,
      listener,
      this.logger,
      () => this.campaigns.delete(campaign),
    );
    this.campaigns.add(campaign);
    return campaign;
  }

  async close(): Promise<void> {
    await Promise.all([...this.campaigns].map((c) => c.stop()));
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

class RedisCampaign implements LeaderCampaign {
  private leader = false;
  private stopped = false;
  private ticking: Promise<void> | null = null;
  /** Another replica held the lease when this one tried: an election is then a takeover. */
  private sawOtherHolder = false;
  /** When the last successful acquire or renew was sent. */
  private heldSince = 0;
  private readonly timer: NodeJS.Timeout;
  readonly settled: Promise<void>;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly token: string,
    private readonly ttlMs: number,
    private readonly renewEveryMs: number,
    private readonly listener: LeadershipListener,
    private readonly logger: AppLogger | undefined,
    private readonly onStop: () => void,
  ) {
    this.timer = setInterval(() => void this.tick(), renewEveryMs);
    this.timer.unref();
    this.settled = this.tick();
  }

  isLeader(): boolean {
    return this.leader;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.onStop();
    await this.ticking;
    if (this.leader) {
      this.leader = false;
      await this.redis.eval(RELEASE, 1, this.key, this.token).catch(() => undefined);
    }
  }

  private tick(): Promise<void> {
    if (this.ticking || this.stopped) return this.ticking ?? Promise.resolve();
    this.ticking = this.attempt().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async attempt(): Promise<void> {
    const sentAt = Date.now();
    try {
      if (!this.leader) {
        const ok = await this.redis.set(this.key, this.token, 'PX', this.ttlMs, 'NX');
        if (ok !== 'OK') {
          this.sawOtherHolder = true;
          return;
        }
        this.heldSince = sentAt;
        this.leader = true;
        if (this.stopped) return; // stop() releases it
        this.logger?.info('leader lease acquired', { key: this.key, takeover: this.sawOtherHolder });
        this.notify(() => this.listener.elected({ takeover: this.sawOtherHolder }));
        return;
      }
      const renewed = await this.redis.eval(RENEW, 1, this.key, this.token, String(this.ttlMs));
      if (Number(renewed) === 1) {
        this.heldSince = sentAt;
        return;
      }
      this.logger?.warn('leader lease lost to another replica', { key: this.key });
      this.depose();
    } catch (err) {
      // Unsure whether the key still exists: step down before it could have expired.
      if (this.leader && Date.now() - this.heldSince > this.ttlMs - this.renewEveryMs) {
        this.logger?.warn('leader lease could not be renewed in time; stepping down', {
          key: this.key,
          error: (err as Error).message,
        });
        this.depose();
      }
    }
  }

  private depose(): void {
    if (!this.leader) return;
    this.leader = false;
    this.sawOtherHolder = true;
    if (!this.stopped) this.notify(() => this.listener.deposed());
  }

  private notify(call: () => void): void {
    try {
      call();
    } catch (err) {
      this.logger?.warn('leadership listener failed', { key: this.key, error: (err as Error).message });
    }
  }
}
