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

/** The job that starts an app's next queued delivery, once per delivery (`seq`, plus a back-off time when delayed). */
export function deliveryDrainJobId(appId: string, key: string): string {
  return `hook-drain-${hex(`${appId} ${key}`, 24)}`;
}
