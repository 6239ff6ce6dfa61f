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

/** At most this many stamps are kept (a bench run is far smaller); later ones are not traced. */
const MAX_STAMPS = 10_000_000;
const STAGE_INDEX: Record<RelayStage, number> = { built: 0, appended: 1, published: 2, gateway: 3, written: 4 };

/**
 * Stamps are appended to one growing Float64Array as (conversation, seq, stage, time): a
 * mark costs a Map lookup and four stores, so tracing takes little from the relay it measures
 * (a Map of string keys and arrays per event did: ~7 % of the server's CPU in a burst).
 * Seqs (below 2^53) are exact in a double.
 */
export class RelayTrace {
  enabled = false;
  private readonly conversations = new Map<string, number>();
  private readonly names: string[] = [];
  private stamps = new Float64Array(4 * 65_536);
  private length = 0;

  mark(conversationId: string, seq: number, stage: RelayStage, at = preciseNow()): void {
    if (!this.enabled) return;
    let conversation = this.conversations.get(conversationId);
    if (conversation === undefined) {
      conversation = this.names.push(conversationId) - 1;
      this.conversations.set(conversationId, conversation);
    }
    if (this.length + 4 > this.stamps.length) {
      if (this.stamps.length >= 4 * MAX_STAMPS) return;
      const grown = new Float64Array(this.stamps.length * 2);
      grown.set(this.stamps);
      this.stamps = grown;
    }
    const s = this.stamps;
    const i = this.length;
    s[i] = conversation;
    s[i + 1] = seq;
    s[i + 2] = STAGE_INDEX[stage];
    s[i + 3] = at;
    this.length = i + 4;
  }

  /**
   * The `appended` and `published` stamps of an event its bus kept and published in one step
   * (every bus adapter's `publishLogged`): the same moment for both.
   */
  markLogged(conversationId: string, seq: number): void {
    if (!this.enabled) return;
    const at = preciseNow();
    this.mark(conversationId, seq, 'appended', at);
    this.mark(conversationId, seq, 'published', at);
  }

  /** `{ "<conversationId>:<seq>": [built, appended, published, gateway, written] }`. */
  dump(): Record<string, number[]> {
    const rows: Record<string, number[]> = {};
    const s = this.stamps;
    for (let i = 0; i < this.length; i += 4) {
      const key = `${this.names[s[i]!]}:${s[i + 1]}`;
      (rows[key] ??= [])[s[i + 2]!] = s[i + 3]!;
    }
    return rows;
  }
}

export const relayTrace = new RelayTrace();
