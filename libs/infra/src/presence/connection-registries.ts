import type { Redis } from 'ioredis';
import { ConnectionRegistry } from '#core/ports/connection-registry.port.js';

/** One process: the count is this process's own. */
export class LocalConnectionRegistry extends ConnectionRegistry {
  private count = 0;

  setLocalCount(count: number): void {
    this.count = count;
  }

  async totalCount(): Promise<number> {
    return this.count;
  }
}

const HEARTBEAT_MS = 5_000;
const TTL_MS = 3 * HEARTBEAT_MS;

/**
 * Each replica keeps `<count>:<expiresAt>` under its id in one Redis hash and refreshes it
 * on change and on a heartbeat; entries of replicas that stopped refreshing are ignored
 * and swept, so a crashed replica's sockets stop being counted within seconds.
 */
export class RedisConnectionRegistry extends ConnectionRegistry {
  private count = 0;
  private readonly key: string;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly replicaId: string,
  ) {
    super();
    this.key = `${prefix}:ws-clients`;
    this.timer = setInterval(() => void this.flush(), HEARTBEAT_MS);
    this.timer.unref();
    void this.flush();
  }

  setLocalCount(count: number): void {
    this.count = count;
    void this.flush();
  }

  async totalCount(): Promise<number> {
    const entries = await this.redis.hgetall(this.key);
    const now = Date.now();
    let total = 0;
    const expired: string[] = [];
    for (const [replica, value] of Object.entries(entries)) {
      const [count, expiresAt] = value.split(':').map(Number);
      if (expiresAt! > now) total += count!;
      else expired.push(replica);
    }
    if (expired.length > 0) await this.redis.hdel(this.key, ...expired);
    return total;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.hdel(this.key, this.replicaId).catch(() => undefined);
  }

  private async flush(): Promise<void> {
    await this.redis.hset(this.key, this.replicaId, `${this.count}:${Date.now() + TTL_MS}`).catch(() => undefined);
  }
}
