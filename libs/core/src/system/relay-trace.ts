/**
 * Per-stage timestamps of conversation events on their way to the sockets, for `bench/agent`
 * only (SVC_RELAY_TRACE names the file the server writes them to at exit). Off by default:
 * then every stage costs one boolean test and nothing is kept.
 *
 * Stages, in order: `built` (the event handed to ConversationEvents), `appended` (the log
 * answered its seq), `published` (handed to the bus), `gateway` (the gateway received it),
 * `written` (its frame handed to the last subscribed socket).
 */
export const RELAY_STAGES = ['built', 'appended', 'published', 'gateway', 'written'] as const;
export type RelayStage = (typeof RELAY_STAGES)[number];

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes of one machine. */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

/** At most this many events are kept (a bench run is far smaller); later ones are not traced. */
const MAX_TRACED = 2_000_000;

class RelayTrace {
  enabled = false;
  private readonly stamps = new Map<string, number[]>();

  mark(conversationId: string, seq: number, stage: RelayStage, at = preciseNow()): void {
    if (!this.enabled) return;
    const key = `${conversationId}:${seq}`;
    let row = this.stamps.get(key);
    if (!row) {
      if (this.stamps.size >= MAX_TRACED) return;
      row = [];
      this.stamps.set(key, row);
    }
    row[RELAY_STAGES.indexOf(stage)] = at;
  }

  /** `{ "<conversationId>:<seq>": [built, appended, published, gateway, written] }`. */
  dump(): Record<string, number[]> {
    return Object.fromEntries(this.stamps);
  }
}

export const relayTrace = new RelayTrace();
