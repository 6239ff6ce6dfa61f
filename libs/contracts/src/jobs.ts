import type { TurnKind } from './agent.js';

/**
 * Typed job map: every job name the server enqueues, with its payload.
 * A process with the worker role refuses to start unless each name here has a processor.
 */
export interface JobMap {
  /** Periodic proof that the queue is being consumed; recorded for /readyz. */
  'system.heartbeat': { scheduledAt?: number };
  /** One assistant turn, by its turn record; `kind` as recorded (jobs queued before kinds existed lack it). */
  'agent.turn': { turnId: string; kind?: TurnKind };
  /** Marks turns whose replica died as interrupted. */
  'agent.reap': Record<string, never>;
  /** Reorganizes a space's memory; the job id names the run (and the lease holder). */
  'memory.consolidate': { spaceId: string; trigger: 'manual' | 'auto' };
  /** Closes a digital human's question nobody answered in time; the job id names the entry. */
  'app.escalation-expire': { appId: string; entryId: string; runId: string };
  /** One occurrence of a schedule subscription; the job id names (app, subscription, time). */
  'trigger.schedule': { appId: string; subscriptionId: string; scheduledMs: number };
  /**
   * An accepted webhook delivery (already de-duplicated and queued in Postgres as `seq`): starts
   * the app's next queued delivery when the app is free. Jobs queued by older versions carry
   * the delivery itself (`subscriptionId`, `path`, `body`, `deliveryId`) and no `seq`.
   */
  'trigger.webhook': {
    appId: string;
    seq?: string;
    subscriptionId?: string;
    path?: string;
    body?: unknown;
    deliveryId?: string | null;
  };
}

export type JobName = keyof JobMap;

export const JOB_NAMES: readonly JobName[] = [
  'system.heartbeat',
  'agent.turn',
  'agent.reap',
  'memory.consolidate',
  'app.escalation-expire',
  'trigger.schedule',
  'trigger.webhook',
];
