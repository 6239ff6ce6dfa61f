import type { AppConfig } from '#core/config/app-config.js';
import { Replica } from '#core/ports/replica.port.js';

/**
 * The one reading of the deployment mode from the validated configuration: embedded database
 * or Postgres, alone on the data folder or beside other replicas (Redis). The entry point asks
 * it before Nest loads (to start the embedded database early); Infrastructure builds its adapters
 * by it and InfraModule binds the resulting Replica.
 */
export interface Deployment {
  mode: Replica['mode'];
  /** Redis is used: events, leases, lockouts, presence and the queue go through it. */
  redis: boolean;
}

export function deploymentOf(config: AppConfig): Deployment {
  return { mode: config.databaseUrl === null ? 'embedded' : 'services', redis: config.redisUrl !== null };
}

/** This process's identity: one per process, created with its Infrastructure. */
export function replicaOf(config: AppConfig): Replica {
  const deployment = deploymentOf(config);
  return new Replica(Replica.newId(), deployment.mode, deployment.redis);
}
