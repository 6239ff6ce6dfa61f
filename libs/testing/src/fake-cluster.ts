import { Backups, type BackupReport } from '#core/ports/backup.port.js';
import { ConnectionRegistry } from '#core/ports/connection-registry.port.js';
import { type LeaderCampaign, LeaderLease, type LeadershipListener } from '#core/ports/leader-lease.port.js';
import { type ReadinessReport, ReadinessProbe } from '#core/ports/readiness.port.js';
import { StorageFaults } from '#core/ports/storage-faults.port.js';

interface Contender {
  listener: LeadershipListener;
  leader: boolean;
}

/**
 * The leases of a deployment in memory, shared by the FakeLeaderLease of each replica: at most
 * one campaign holds a name; the others wait in line and the next one is elected (a takeover)
 * when the holder stops or is deposed.
 */
export class LeaseTable {
  private readonly lines = new Map<string, Contender[]>();
  /** Every change of leadership, in order: `elected:<name>` (with `+takeover`) or `deposed:<name>`. */
  readonly history: string[] = [];

  join(name: string, contender: Contender): void {
    const line = this.lines.get(name) ?? [];
    line.push(contender);
    this.lines.set(name, line);
    if (line.length === 1) this.elect(name, contender, false);
  }

  leave(name: string, contender: Contender): void {
    const line = this.lines.get(name) ?? [];
    const index = line.indexOf(contender);
    if (index < 0) return;
    line.splice(index, 1);
    contender.leader = false;
    if (index === 0 && line.length > 0) this.elect(name, line[0], true);
  }

  /**
   * The holder loses the lease (it could not renew in time) and goes to the end of the line;
   * the next in line takes over. Alone, it wins the lease again on its next try.
   */
  depose(name: string): void {
    const line = this.lines.get(name) ?? [];
    const holder = line.shift();
    if (!holder) return;
    holder.leader = false;
    this.history.push(`deposed:${name}`);
    holder.listener.deposed();
    line.push(holder);
    this.elect(name, line[0], line[0] !== holder);
  }

  holder(name: string): LeadershipListener | null {
    return this.lines.get(name)?.[0]?.listener ?? null;
  }

  private elect(name: string, contender: Contender, takeover: boolean): void {
    contender.leader = true;
    this.history.push(`elected:${name}${takeover ? '+takeover' : ''}`);
    contender.listener.elected({ takeover });
  }
}

/**
 * One replica's view of a LeaseTable (a fresh table when none is given: alone on its data folder,
 * the first campaign of a name wins at once).
 */
export class FakeLeaderLease extends LeaderLease {
  private readonly campaigns = new Set<{ name: string; contender: Contender }>();

  constructor(readonly table: LeaseTable = new LeaseTable()) {
    super();
  }

  campaign(name: string, listener: LeadershipListener): LeaderCampaign {
    const contender: Contender = { listener, leader: false };
    const entry = { name, contender };
    this.campaigns.add(entry);
    this.table.join(name, contender);
    return {
      settled: Promise.resolve(),
      isLeader: () => contender.leader,
      stop: async () => {
        this.campaigns.delete(entry);
        this.table.leave(name, contender);
      },
    };
  }

  async close(): Promise<void> {
    for (const { name, contender } of [...this.campaigns]) this.table.leave(name, contender);
    this.campaigns.clear();
  }
}

/** Socket counts of several replicas: each FakeConnectionRegistry over one shared map is a replica. */
export class FakeConnectionRegistry extends ConnectionRegistry {
  constructor(
    readonly replicaId: string = 'replica-1',
    readonly counts: Map<string, number> = new Map(),
  ) {
    super();
  }

  setLocalCount(count: number): void {
    this.counts.set(this.replicaId, count);
  }

  async totalCount(): Promise<number> {
    return [...this.counts.values()].reduce((sum, n) => sum + n, 0);
  }
}

/** Readiness from named checks the test sets (`fail('redis', 'down')`); ready when every check is ok. */
export class FakeReadinessProbe extends ReadinessProbe {
  readonly checks = new Map<string, { ok: boolean; error?: string }>([['database', { ok: true }]]);

  pass(name: string): this {
    this.checks.set(name, { ok: true });
    return this;
  }

  fail(name: string, error: string): this {
    this.checks.set(name, { ok: false, error });
    return this;
  }

  async check(): Promise<ReadinessReport> {
    const checks = Object.fromEntries([...this.checks].map(([name, check]) => [name, { ...check }]));
    return { ready: Object.values(checks).every((c) => c.ok), checks };
  }
}

/** The store is away exactly for the errors the test marks (`outage()` makes one). */
export class FakeStorageFaults extends StorageFaults {
  private readonly outages = new WeakSet<object>();

  /** An error that this port reports as a passing outage. */
  outage(message = 'the database is unavailable'): Error {
    const err = new Error(message);
    this.outages.add(err);
    return err;
  }

  isUnavailable(err: unknown): boolean {
    return typeof err === 'object' && err !== null && this.outages.has(err);
  }
}

/** Backups that are only recorded; unavailable (as with DATABASE_URL) when constructed so. */
export class FakeBackups extends Backups {
  readonly taken: BackupReport[] = [];

  constructor(
    private readonly embedded = true,
    private readonly root = '/data/backups',
  ) {
    super();
  }

  available(): boolean {
    return this.embedded;
  }

  async backupNow(): Promise<BackupReport> {
    if (!this.embedded) throw new Error('backups are taken with pg_dump when DATABASE_URL is set');
    const report = { path: `${this.root}/backup-${this.taken.length + 1}`, databaseBytes: 4096, files: 0 };
    this.taken.push(report);
    return report;
  }
}
