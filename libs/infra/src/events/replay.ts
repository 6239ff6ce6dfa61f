import type { LoggedEvent, ReplayResult } from '#core/ports/event-log.port.js';

/**
 * What a client that has seen up to `afterSeq` must receive, given the log's `newer` events
 * (seq > afterSeq, ascending), the oldest seq it still holds and the last seq it assigned
 * (null: nothing was ever logged). It is a gap when the log does not reach back to
 * afterSeq + 1, or when the client claims a seq the log never assigned (e.g. after a restart).
 */
export function replayFrom(newer: LoggedEvent[], afterSeq: number, oldest: number, last: number | null): ReplayResult {
  if (last === null) return afterSeq > 0 ? { complete: false, fromSeq: 1, events: [] } : { complete: true, events: [] };
  if (afterSeq > last) return { complete: false, fromSeq: last + 1, events: [] };
  if (afterSeq + 1 < oldest) return { complete: false, fromSeq: oldest, events: newer };
  return { complete: true, events: newer };
}
