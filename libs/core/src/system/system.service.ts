import { Inject, Injectable } from '@nestjs/common';
import { REMOTE_PROTOCOL_VERSION, type RemoteStatus, type SecurityPolicy } from '#contracts/api.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Clock } from '../ports/clock.port.js';
import { ConnectionRegistry } from '../ports/connection-registry.port.js';
import { type ReadinessReport, ReadinessProbe } from '../ports/readiness.port.js';
import { SettingsRepository } from '../ports/settings.repository.port.js';

const HEARTBEAT_KEY = 'queue.lastHeartbeatAt';

/** Service-wide facts: versions, remote status, policy, health. */
@Injectable()
export class SystemService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly connections: ConnectionRegistry,
    private readonly readinessProbe: ReadinessProbe,
    private readonly settings: SettingsRepository,
    private readonly clock: Clock,
  ) {}

  /** The application version (package version), not the protocol version. */
  version(): string {
    return this.config.version;
  }

  async remoteStatus(): Promise<RemoteStatus> {
    return {
      active: true,
      clients: await this.connections.totalCount(),
      version: REMOTE_PROTOCOL_VERSION,
      serverVersion: this.config.version,
    };
  }

  /**
   * The server edition is remote by nature and the access password gives full control,
   * so nothing is withheld from remote callers: not a tunnel-restricted build, and the
   * browser allow-list stays editable.
   */
  securityPolicy(): SecurityPolicy {
    return { tunnelSafe: false, browserAllowlistEditable: true };
  }

  async readiness(): Promise<ReadinessReport & { lastHeartbeatAt: string | null }> {
    const [report, last] = await Promise.all([
      this.readinessProbe.check(),
      this.settings.get<number>(HEARTBEAT_KEY).catch(() => null),
    ]);
    return { ...report, lastHeartbeatAt: last === null ? null : new Date(last).toISOString() };
  }

  /** Called by the heartbeat job: proof that some worker consumes the queue. */
  async recordHeartbeat(): Promise<void> {
    await this.settings.set(HEARTBEAT_KEY, this.clock.now());
  }
}
