/**
 * Per-stage timestamps of conversation events on their way to the sockets, for `bench/agent`
 * only (SVC_RELAY_TRACE names the file the server writes them to at exit). Off by default:
 * then every stage costs one boolean test and nothing is kept. On, `selects` may name the
 * conversations worth tracing (the bench's paced relays): the others then cost one Map look-up
 * a stage, so a throughput measured beside them is the server's, not the trace's.
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
  /** Asked once per conversation, at its first stage: trace it? Unset, every one is. */
  selects: ((conversationId: string) => boolean) | null = null;
  /** A conversation's index in `names`, or -1 for one not traced. */
  private readonly conversations = new Map<string, number>();
  private readonly names: string[] = [];
  private stamps = new Float64Array(4 * 65_536);
  private length = 0;

  /** Whether this conversation's events are stamped (tracing on, and the conversation selected). */
  traces(conversationId: string): boolean {
    return this.enabled && this.indexOf(conversationId) >= 0;
  }

  mark(conversationId: string, seq: number, stage: RelayStage, at?: number): void {
    if (!this.enabled) return;
    const conversation = this.indexOf(conversationId);
    if (conversation < 0) return;
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
    s[i + 3] = at ?? preciseNow();
    this.length = i + 4;
  }

  /** The last conversation asked about (a stream's events come one conversation at a time). */
  private lastConversationId = '';
  private lastIndex = -1;

  private indexOf(conversationId: string): number {
    if (conversationId === this.lastConversationId) return this.lastIndex;
    let conversation = this.conversations.get(conversationId);
    if (conversation === undefined) {
      conversation = this.selects === null || this.selects(conversationId) ? this.names.push(conversationId) - 1 : -1;
      this.conversations.set(conversationId, conversation);
    }
    this.lastConversationId = conversationId;
    this.lastIndex = conversation;
    return conversation;
  }

  /**
   * The `appended` and `published` stamps of an event its bus kept and published in one step
   * (every bus adapter's `publishLogged`): the same moment for both.
   */
  markLogged(conversationId: string, seq: number): void {
    if (!this.traces(conversationId)) return;
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
