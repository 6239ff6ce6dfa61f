import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { type LeaderCampaign, LeaderLease, type LeadershipListener } from '#core/ports/leader-lease.port.js';
import type { AppLogger } from '../logging/logger.js';

export interface RedisLeaseOptions {
  /** Lifetime of the lease key; a hung holder's lease is taken over after at most this plus `renewEveryMs`. */
  ttlMs?: number;
  /** How often the holder renews and the others try to acquire. */
  renewEveryMs?: number;
  /** How often a replica checks whether the holders of leases it wants are still connected to Redis. */
  watchEveryMs?: number;
}

export const DEFAULT_LEASE_TTL_MS = 10_000;
export const DEFAULT_LEASE_RENEW_MS = 3_000;
export const DEFAULT_LEASE_WATCH_MS = 500;

/** Extends the lease only while it is still ours (compare-and-set). */
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
/** Deletes the lease only while it still holds the given value (ours, or a holder that is gone). */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * A lease's value: the holder's token (its replica id first), then the Redis client id and name
 * of the connection it renews the lease on. Another replica that finds no such client connected
 * knows the holder is gone (a killed process' sockets are closed by its kernel at once) and need
 * not wait for the key to expire. A value without them (written by an older release) is only
 * taken over on expiry.
 */
const leaseValue = (token: string, clientId: string, connectionName: string): string =>
  `${token} ${clientId} ${connectionName}`;
const LEASE_VALUE = / (\d+) (\S+)$/;

/**
 * Leases in Redis: `SET key value NX PX ttl` to acquire, a compare-and-set script to renew every
 * `renewEveryMs`, a compare-and-delete to release at shutdown. A holder that cannot renew (Redis
 * unreachable) or whose connection to Redis closes steps down before its key can expire, so two
 * replicas never lead at once while their clocks agree. Every `watchEveryMs` a replica reads the
 * leases it campaigns for without holding them (one `MGET`) and asks Redis whether their holders'
 * connections are still there (one `CLIENT LIST ID`): a replica that died is replaced within about
 * `watchEveryMs` (0.5 s), one that hangs with its connection open within `ttlMs + renewEveryMs`
 * (13 s), one that shuts down at once. Where `CLIENT` commands are refused (an ACL, some managed
 * Redis services) only expiry remains.
 */
export class RedisLeaderLease extends LeaderLease {
  private readonly redis: Redis;
  private readonly campaigns = new Set<RedisCampaign>();
  private readonly ttlMs: number;
  private readonly renewEveryMs: number;
  /** Names this process' lease connection in `CLIENT LIST`, so a reused client id is not mistaken for it. */
  private readonly connectionName = `svc-lease-${randomUUID()}`;
  /** The id Redis gave the connection now open; null while it is closed or not yet asked. */
  private clientId: string | null = null;
  private readonly watcher: NodeJS.Timeout;
  private watching: Promise<void> | null = null;
  /** False once Redis refused `CLIENT ID` or `CLIENT LIST`: leases are then taken over on expiry only. */
  private clientCommandsAllowed = true;

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
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 1,
      commandTimeout: Math.max(500, this.renewEveryMs - 500),
      connectionName: this.connectionName,
    });
    this.redis.on('error', (err: Error) => this.logger?.warn('leader lease redis error', { error: err.message }));
    // The leases this replica holds carry the id of a connection that is gone: others may take
    // them over now, so this replica stops leading before they can.
    this.redis.on('close', () => {
      this.clientId = null;
      for (const campaign of this.campaigns) campaign.connectionLost();
    });
    this.watcher = setInterval(() => void this.watch(), options.watchEveryMs ?? DEFAULT_LEASE_WATCH_MS);
    this.watcher.unref();
  }

  campaign(name: string, listener: LeadershipListener): LeaderCampaign {
    const campaign = new RedisCampaign(
      this.redis,
      `${this.prefix}:lease:${name}`,
      `${this.owner}:${randomUUID()}`,
      (token) => this.valueFor(token),
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
    clearInterval(this.watcher);
    await this.watching;
    await Promise.all([...this.campaigns].map((c) => c.stop()));
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** The value a campaign writes when it acquires: its token, then this connection's id and name. */
  private async valueFor(token: string): Promise<string> {
    if (!this.clientCommandsAllowed) return token;
    try {
      this.clientId ??= String(await this.redis.call('CLIENT', 'ID'));
    } catch (err) {
      // An answer from Redis (not a lost connection): the command is not allowed here.
      if ((err as Error).name !== 'ReplyError') throw err;
      this.clientCommandsRefused(err as Error);
      return token;
    }
    return leaseValue(token, this.clientId, this.connectionName);
  }

  private clientCommandsRefused(err: Error): void {
    if (!this.clientCommandsAllowed) return;
    this.clientCommandsAllowed = false;
    this.logger?.info('leader lease: Redis refused CLIENT commands; a dead holder is replaced when its lease expires', {
      error: err.message,
    });
  }

  private watch(): Promise<void> {
    if (this.watching) return this.watching;
    this.watching = this.takeOverFromGone()
      .catch((err: Error) => this.logger?.debug('leader lease watch failed', { error: err.message }))
      .finally(() => {
        this.watching = null;
      });
    return this.watching;
  }

  /** Acquires, at once, the leases wanted here that are free or whose holder's connection is gone. */
  private async takeOverFromGone(): Promise<void> {
    const waiting = [...this.campaigns].filter((c) => c.waiting());
    if (waiting.length === 0) return;
    const values = await this.redis.mget(...waiting.map((c) => c.key));
    const holders = new Map<RedisCampaign, { value: string; clientId: string; name: string }>();
    waiting.forEach((campaign, i) => {
      const value = values[i];
      const parsed = value ? LEASE_VALUE.exec(value) : null;
      if (!value) campaign.poke();
      else if (parsed && this.clientCommandsAllowed)
        holders.set(campaign, { value, clientId: parsed[1]!, name: parsed[2]! });
    });
    if (holders.size === 0) return;
    const ids = [...new Set([...holders.values()].map((h) => h.clientId))];
    let listing: string;
    try {
      listing = String(await this.redis.call('CLIENT', 'LIST', 'ID', ...ids));
    } catch (err) {
      if ((err as Error).name === 'ReplyError') this.clientCommandsRefused(err as Error);
      return;
    }
    const connected = new Set(
      listing.split('\n').map((line) => `${/(?:^| )id=(\d+)/.exec(line)?.[1]} ${/ name=(\S*)/.exec(line)?.[1]}`),
    );
    for (const [campaign, holder] of holders) {
      if (!connected.has(`${holder.clientId} ${holder.name}`)) await campaign.takeOverFrom(holder.value);
    }
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
  /** The value written when this campaign acquired the lease (compared on renew and release). */
  private value = '';
  private readonly timer: NodeJS.Timeout;
  readonly settled: Promise<void>;

  constructor(
    private readonly redis: Redis,
    readonly key: string,
    private readonly token: string,
    private readonly valueToWrite: (token: string) => Promise<string>,
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

  /** Campaigning without holding the lease (and not already trying). */
  waiting(): boolean {
    return !this.leader && !this.stopped && !this.ticking;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.onStop();
    await this.ticking;
    if (this.leader) {
      this.leader = false;
      await this.redis.eval(RELEASE, 1, this.key, this.value).catch(() => undefined);
    }
  }

  /** The lease was seen free: try now rather than at the next tick. */
  poke(): void {
    void this.tick();
  }

  /** The holder's connection is gone: remove its lease (unless it changed meanwhile) and try now. */
  async takeOverFrom(goneHolder: string): Promise<void> {
    if (!this.waiting()) return;
    const removed = await this.redis.eval(RELEASE, 1, this.key, goneHolder);
    if (Number(removed) === 1) this.logger?.info('leader lease holder disconnected; taking over', { key: this.key });
    await this.tick();
  }

  /** This replica's lease connection closed: its lease may be taken over now, so it stops leading. */
  connectionLost(): void {
    if (!this.leader || this.stopped) return;
    this.logger?.warn('leader lease connection closed; stepping down', { key: this.key });
    this.depose();
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
        const value = await this.valueToWrite(this.token);
        const ok = await this.redis.set(this.key, value, 'PX', this.ttlMs, 'NX');
        if (ok !== 'OK') {
          this.sawOtherHolder = true;
          return;
        }
        this.value = value;
        this.heldSince = sentAt;
        this.leader = true;
        if (this.stopped) return; // stop() releases it
        this.logger?.info('leader lease acquired', { key: this.key, takeover: this.sawOtherHolder });
        this.notify(() => this.listener.elected({ takeover: this.sawOtherHolder }));
        return;
      }
      const renewed = await this.redis.eval(RENEW, 1, this.key, this.value, String(this.ttlMs));
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
