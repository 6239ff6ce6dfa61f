/** A conversation event as kept for replay: the data carries `seq` too. */
export interface LoggedEvent {
  seq: number;
  channel: string;
  data: Record<string, unknown>;
}

export type ReplayResult =
  /** Every event after `afterSeq` that the log holds, oldest first. */
  | { complete: true; events: LoggedEvent[] }
  /** The log no longer reaches back to `afterSeq`; it resumes at `fromSeq`. */
  | { complete: false; fromSeq: number; events: LoggedEvent[] };

/**
 * The recent events of each conversation, bounded, shared by every replica. `seq` increases
 * per conversation, so a reconnecting client can ask for what it missed.
 */
export abstract class EventLog {
  /** Assigns the next seq and keeps the event (with that seq in its data). */
  abstract append(conversationId: string, channel: string, data: Record<string, unknown>): Promise<LoggedEvent>;

  /**
   * `append` without waiting, for a log held in this process; null where the log is elsewhere
   * (then use `append`). Lets an in-process bus publish a stream delta without a promise hop.
   */
  appendNow(_conversationId: string, _channel: string, _data: Record<string, unknown>): LoggedEvent | null {
    return null;
  }

  abstract since(conversationId: string, afterSeq: number): Promise<ReplayResult>;
}

/** How many recent events each conversation keeps. */
export const EVENT_LOG_CAPACITY = 10_000;
