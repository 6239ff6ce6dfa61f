import { randomBytes } from 'node:crypto';

/** Where the data lives: the embedded database in the data folder, or Postgres (with or without Redis). */
export type DeploymentMode = 'embedded' | 'services';

/**
 * This process among the deployment's replicas, bound once by the infrastructure: the one id it
 * claims turns, holds leases and counts sockets under, and whether other processes may share
 * its database and data folder.
 */
export class Replica {
  constructor(
    /** `<pid>-<random>`: the process id first, so an operator can find the process a turn runs in. */
    readonly id: string,
    readonly mode: DeploymentMode,
    /** Other replicas may run beside this one (REDIS_URL set); otherwise it is alone on its data folder. */
    readonly shared: boolean,
  ) {}

  /** A fresh id for this process. */
  static newId(): string {
    return `${process.pid}-${randomBytes(4).toString('hex')}`;
  }

  /** A process alone on its data folder (unit tests, tools). */
  static alone(): Replica {
    return new Replica(Replica.newId(), 'embedded', false);
  }
}
