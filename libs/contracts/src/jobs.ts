/**
 * Typed job map: every job name the server enqueues, with its payload.
 * A process with the worker role refuses to start unless each name here has a processor.
 */
export interface JobMap {
  /** Periodic proof that the queue is being consumed; recorded for /readyz. */
  'system.heartbeat': { scheduledAt?: number };
}

export type JobName = keyof JobMap;

export const JOB_NAMES: readonly JobName[] = ['system.heartbeat'];
