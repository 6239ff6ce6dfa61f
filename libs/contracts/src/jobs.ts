import type { TurnKind } from './agent.js';
import type { ChannelChoice } from './channels.js';

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
    /** Set when the subscription is not a digital human's: the kind of its owner (`team`), `appId` its id. */
    owner?: string;
  };
  /** One occurrence of a team's schedule trigger; the job id names (trigger, time). */
  'team.trigger-schedule': { teamId: string; triggerId: string; scheduledMs: number };
  /** A team run's time limit: seals the run epoch when it is still open; the job id names the epoch and its due time. */
  'team.run-deadline': { teamId: string; epochId: string };
  /** Ingests one source of a knowledge base at one content hash; the job id names (knowledge base, source, hash, generation). */
  'knowledge.ingest': { kbId: string; sourceId: string; hash: string; batchId: string };
  /**
   * A channel message (already claimed once per instance and platform message id): dispatch it.
   * `appId`: the instance's digital human when the message was received (read beside the
   * instance by the dispatch; jobs queued before it was added have none).
   */
  'channel.inbound': { instanceId: string; message: ChannelInboundJob; appId?: string };
  /** A reply to a channel thread, in parts already split to the platform's limit, sent in order. */
  'channel.reply': {
    instanceId: string;
    chatType: 'direct' | 'group';
    chatId: string;
    replyTo: string | null;
    parts: string[];
    /** Buttons under the last part (only for providers that show them: `supportsChoices`). */
    choices?: ChannelChoice[];
    /** The reply's key (its job id's): each part sent is marked under it, so a job run again sends only the rest. */
    key?: string;
  };
}

/** A platform message as a provider normalised it. */
export interface ChannelInboundJob {
  messageId: string;
  chatId: string;
  chatType: 'direct' | 'group';
  chatName?: string;
  from: { id: string; name?: string };
  text: string;
  mentioned: boolean;
  images?: Array<{ mediaType: string; data: string }>;
}

export type JobName = keyof JobMap;

/**
 * Jobs that hold a worker slot for long: a whole turn, a document's ingestion, a memory
 * consolidation. Every other job is short and runs in the queue's quick lane, so a schedule
 * tick or a channel message never waits for a turn to end.
 */
export const LONG_JOB_NAMES: readonly JobName[] = ['agent.turn', 'knowledge.ingest', 'memory.consolidate'];

export const JOB_NAMES: readonly JobName[] = [
  'system.heartbeat',
  'agent.turn',
  'agent.reap',
  'memory.consolidate',
  'app.escalation-expire',
  'trigger.schedule',
  'trigger.webhook',
  'knowledge.ingest',
  'team.run-deadline',
  'team.trigger-schedule',
  'channel.inbound',
  'channel.reply',
];
