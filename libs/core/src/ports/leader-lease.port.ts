/**
 * Leadership of a named task across replicas: at most one replica holds a lease at a time,
 * and when the holder dies another one takes over within about a lease lifetime. One
 * process per data folder (no Redis) is always the leader.
 */

export interface LeadershipListener {
  /**
   * This replica now holds the lease. `takeover` is true when another replica held it
   * before (work it did may have been cut short), false on a fresh start.
   */
  elected(info: { takeover: boolean }): void;
  /** This replica no longer holds the lease (lost it, or could not renew it in time). */
  deposed(): void;
}

export interface LeaderCampaign {
  /** Resolves once the first attempt to acquire the lease is over, won or not. */
  readonly settled: Promise<void>;
  isLeader(): boolean;
  /** Stops campaigning and releases the lease when held; `deposed` is not called. */
  stop(): Promise<void>;
}

export abstract class LeaderLease {
  /** Campaigns for `name` until stopped; the listener hears every change of leadership. */
  abstract campaign(name: string, listener: LeadershipListener): LeaderCampaign;
  /** Stops every campaign (releasing held leases) and closes connections. */
  abstract close(): Promise<void>;
}
