import { type LeaderCampaign, LeaderLease, type LeadershipListener } from '#core/ports/leader-lease.port.js';

/**
 * One process per data folder (no Redis): this process is always the leader. Election is
 * announced on the next tick, as with the Redis lease, so callers see the same order.
 */
export class LocalLeaderLease extends LeaderLease {
  private readonly campaigns = new Set<LocalCampaign>();

  campaign(_name: string, listener: LeadershipListener): LeaderCampaign {
    const campaign = new LocalCampaign(listener, () => this.campaigns.delete(campaign));
    this.campaigns.add(campaign);
    return campaign;
  }

  async close(): Promise<void> {
    await Promise.all([...this.campaigns].map((c) => c.stop()));
  }
}

class LocalCampaign implements LeaderCampaign {
  private leader = false;
  private stopped = false;
  readonly settled: Promise<void>;

  constructor(
    listener: LeadershipListener,
    private readonly onStop: () => void,
  ) {
    this.settled = Promise.resolve().then(() => {
      if (this.stopped) return;
      this.leader = true;
      listener.elected({ takeover: false });
    });
  }

  isLeader(): boolean {
    return this.leader;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.leader = false;
    this.onStop();
  }
}
