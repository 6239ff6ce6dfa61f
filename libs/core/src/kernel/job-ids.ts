import { createHash, randomUUID } from 'node:crypto';

/**
 * Every job id the server gives a queued job (docs/architecture.md, "The rules": jobs are
 * deduplicated by deterministic job ids). A queue keeps one job per id, and keeps completed
 * jobs for a while (the BullMQ adapter: a day), so an id names one piece of work: the same
 * work queued twice, by any replica, runs once, and different work never shares an id.
 * BullMQ ids may not contain `:`.
 */

function hex(text: string | Buffer, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** One assistant turn, by its turn record. */
export function turnJobId(turnId: string): string {
  return `turn-${turnId}`;
}

/** One occurrence of a schedule subscription (app, subscription, scheduled time). */
export function occurrenceJobId(appId: string, subscriptionId: string, scheduledMs: number): string {
  return `sched-${appId}-${hex(subscriptionId, 12)}-${scheduledMs}`;
}

/** The expiry of one escalation (a digital human's question), by its activity entry. */
export function escalationExpiryJobId(entryId: string): string {
  return `escalation-expire-${entryId}`;
}

/** A team run's time limit, by its epoch and the moment it is due (ms). */
export function teamRunDeadlineJobId(epochId: string, dueMs: number): string {
  return `team-deadline-${epochId}-${dueMs}`;
}

/** One occurrence of a team's schedule trigger (trigger, scheduled time). */
export function teamScheduleJobId(triggerId: string, scheduledMs: number): string {
  return `team-sched-${triggerId}-${scheduledMs}`;
}

/** One run of a space's memory consolidation: the space, then a fresh token that also names the lease holder. */
export function consolidationJobId(spaceId: string): string {
  return `memory-consolidate-${spaceId}-${randomUUID()}`;
}

/** A de-duplication claim an accepted webhook delivery took: its key and how long it holds. */
export interface HookClaimWindow {
  key: string;
  windowMs: number;
}

/**
 * One accepted webhook delivery, from the claims it took and the time it took them. Each claim
 * is named with its window's bucket (`floor(now / windowMs)`): a claim is taken again only once
 * its window has passed since it was last taken, which is always a later bucket, so a later
 * delivery of the same body (or id) gets a new job id and is queued, while the same accepted
 * delivery queued twice (a retry of a queue call whose claims were given back) gets the same
 * one. The id names no
 * moment of its own (only the window a claim fell in).
 */
export function webhookDeliveryJobId(claims: readonly HookClaimWindow[], claimedAtMs: number): string {
  const named = claims.map((c) => `${c.key}@${Number.isFinite(c.windowMs) ? Math.floor(claimedAtMs / c.windowMs) : 0}`);
  return `hook-${hex(named.join(' '), 24)}`;
}

/**
 * The ingestion of one knowledge-base source at one content hash within one batch (the
 * knowledge base's ingestion round that counts it): (knowledge base, source, content hash,
 * batch). The same pending source queued again while its batch runs, by any replica, is one job;
 * a source already in the index is never queued (KnowledgeService.ingest), so an unchanged re-ingest
 * does nothing; a later batch (a retry of a failed source, `clear-relearn`) is new work.
 */
export function knowledgeIngestJobId(kbId: string, sourceId: string, contentHash: string, batchId: string): string {
  return `kb-ingest-${kbId}-${sourceId}-${contentHash.slice(0, 16)}-${batchId}`;
}

/** One platform message of a channel instance (its claim is taken first; the id keeps a retried add single). */
export function channelInboundJobId(instanceId: string, messageId: string): string {
  return `channel-in-${instanceId}-${hex(messageId, 24)}`;
}

/** The reply of one turn to its channel thread. */
export function channelReplyJobId(key: string): string {
  return `channel-reply-${hex(key, 32)}`;
}

/** The job that starts an app's next queued delivery, once per delivery (`seq`, plus a back-off time when delayed). */
export function deliveryDrainJobId(appId: string, key: string): string {
  return `hook-drain-${hex(`${appId} ${key}`, 24)}`;
}
