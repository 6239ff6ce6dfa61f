import { type BusEvent, type EventChannel, type EventMap, isEventChannel } from '#contracts/events.js';
import { type BusEventHandler, EventBus } from '#core/ports/event-bus.port.js';
import { EventLog, type LoggedEvent, type ReplayResult } from '#core/ports/event-log.port.js';
import {
  ACTIVE_TURN_STATUSES,
  type CompletedTurn,
  type NewTurn,
  type PendingInput,
  type PendingQuestion,
  type PendingApproval,
  type ApprovalDecision,
  type TurnRecord,
  TurnRepository,
  type TurnStatus,
} from '#core/ports/turn.repository.port.js';

/**
 * An in-process bus that records what was published and delivers it to subscribers at once.
 * It refuses a channel that `EventMap` lacks (libs/contracts/src/events.ts): a test that makes
 * code publish one fails.
 */
export class RecordingEventBus extends EventBus {
  readonly published: BusEvent[] = [];
  private readonly handlers = new Set<BusEventHandler>();

  async publish<C extends EventChannel>(channel: C, data: EventMap[C]): Promise<void> {
    if (!isEventChannel(channel)) throw new Error(`published on "${String(channel)}", a channel EventMap lacks`);
    const event = { channel, data: data as Record<string, unknown> };
    this.published.push(event);
    const frame = JSON.stringify({ type: 'event', ...event });
    for (const handler of [...this.handlers]) handler(event, frame);
  }

  subscribe(handler: BusEventHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  channels(): string[] {
    return this.published.map((e) => e.channel);
  }

  on(channel: string): Array<Record<string, unknown>> {
    return this.published.filter((e) => e.channel === channel).map((e) => e.data);
  }
}

/** An unbounded event log in memory. */
export class FakeEventLog extends EventLog {
  private readonly logs = new Map<string, LoggedEvent[]>();

  async append(conversationId: string, channel: string, data: Record<string, unknown>): Promise<LoggedEvent> {
    const log = this.logs.get(conversationId) ?? [];
    const seq = log.length + 1;
    const event = { seq, channel, data: { ...data, seq } };
    log.push(event);
    this.logs.set(conversationId, log);
    return event;
  }

  async since(conversationId: string, afterSeq: number): Promise<ReplayResult> {
    return { complete: true, events: (this.logs.get(conversationId) ?? []).filter((e) => e.seq > afterSeq) };
  }
}

/** Turn records in memory, honouring the port's rules (one active turn per conversation, finish once). */
export class FakeTurnRepository extends TurnRepository {
  readonly records = new Map<string, TurnRecord>();
  /** Turn id → when its end was recorded, until `endAnnounced` (the table's `end_pending_at`). */
  readonly endPending = new Map<string, Date>();

  async createQueued(turn: NewTurn): Promise<TurnRecord | null> {
    if (this.active().some((t) => t.conversationId === turn.conversationId)) return null;
    const record: TurnRecord = {
      ...turn,
      status: 'queued',
      replicaId: null,
      heartbeatAt: null,
      stopRequested: false,
      pendingInputs: [],
      pendingQuestion: null,
      questionAnswer: null,
      pendingApproval: null,
      approvalDecision: null,
      pendingRetry: null,
      thoughts: [],
      error: null,
      createdAt: new Date(),
      startedAt: null,
      endedAt: null,
    };
    this.records.set(turn.id, record);
    return structuredClone(record);
  }

  async findById(id: string): Promise<TurnRecord | null> {
    const record = this.records.get(id);
    return record ? structuredClone(record) : null;
  }

  async findActive(conversationId: string): Promise<TurnRecord | null> {
    const record = this.active().find((t) => t.conversationId === conversationId);
    return record ? structuredClone(record) : null;
  }

  async listActive(): Promise<TurnRecord[]> {
    return this.active().map((t) => structuredClone(t));
  }

  async claim(id: string, replicaId: string): Promise<TurnRecord | null> {
    const record = this.records.get(id);
    if (!record || record.status !== 'queued' || record.stopRequested) return null;
    Object.assign(record, { status: 'running', replicaId, heartbeatAt: new Date(), startedAt: new Date() });
    return structuredClone(record);
  }

  async heartbeat(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const record = this.records.get(id);
      if (record?.status === 'running') record.heartbeatAt = new Date();
    }
  }

  async addPendingInput(conversationId: string, input: PendingInput): Promise<TurnRecord | null> {
    const record = this.active().find((t) => t.conversationId === conversationId && !t.stopRequested);
    if (!record) return null;
    record.pendingInputs.push(input);
    return structuredClone(record);
  }

  async takePendingInputs(id: string): Promise<PendingInput[]> {
    const record = this.records.get(id);
    return record ? record.pendingInputs.splice(0) : [];
  }

  async setQuestion(id: string, question: PendingQuestion | null): Promise<void> {
    const record = this.records.get(id);
    if (record) Object.assign(record, { pendingQuestion: question, questionAnswer: null });
  }

  async answerQuestion(
    conversationId: string | null,
    questionId: string,
    answers: Record<string, unknown>,
  ): Promise<boolean> {
    const record = this.active().find(
      (t) =>
        t.pendingQuestion?.id === questionId &&
        t.questionAnswer === null &&
        !t.stopRequested &&
        (conversationId === null || t.conversationId === conversationId),
    );
    if (!record) return false;
    record.questionAnswer = answers;
    return true;
  }

  async setApproval(id: string, pending: PendingApproval | null): Promise<void> {
    const record = this.records.get(id);
    if (record) Object.assign(record, { pendingApproval: pending, approvalDecision: null });
  }

  async decideApproval(
    conversationId: string,
    toolId: string | null,
    decision: ApprovalDecision,
  ): Promise<TurnRecord | null> {
    const record = this.active().find(
      (t) =>
        t.conversationId === conversationId &&
        t.pendingApproval !== null &&
        t.approvalDecision === null &&
        !t.stopRequested &&
        (toolId === null || t.pendingApproval.toolId === toolId),
    );
    if (!record) return null;
    record.approvalDecision = decision;
    return structuredClone(record);
  }

  async setRetry(id: string, retry: Record<string, unknown> | null): Promise<void> {
    const record = this.records.get(id);
    if (record) record.pendingRetry = retry;
  }

  async saveThoughts(id: string, thoughts: unknown[]): Promise<void> {
    const record = this.records.get(id);
    if (record) record.thoughts = structuredClone(thoughts);
  }

  async requestStop(conversationId: string | null): Promise<TurnRecord[]> {
    const flagged = this.active().filter((t) => conversationId === null || t.conversationId === conversationId);
    for (const record of flagged) record.stopRequested = true;
    return flagged.map((t) => structuredClone(t));
  }

  async finish(
    id: string,
    status: Exclude<TurnStatus, 'queued' | 'running'>,
    error: string | null = null,
  ): Promise<boolean> {
    const record = this.records.get(id);
    if (!record || !ACTIVE_TURN_STATUSES.includes(record.status)) return false;
    Object.assign(record, {
      status,
      error,
      endedAt: new Date(),
      pendingQuestion: null,
      pendingApproval: null,
      pendingRetry: null,
    });
    this.endPending.set(id, new Date());
    return true;
  }

  async endAnnounced(id: string): Promise<void> {
    this.endPending.delete(id);
  }

  async findUnannounced(before: Date): Promise<TurnRecord[]> {
    return [...this.endPending]
      .filter(([, at]) => at < before)
      .sort(([, a], [, b]) => a.getTime() - b.getTime())
      .map(([id]) => this.records.get(id))
      .filter((t): t is TurnRecord => t !== undefined)
      .map((t) => structuredClone(t));
  }

  /** As the database's `complete_turn`, less moving messages (this fake holds no conversation). */
  async complete(id: string, followUpId: string): Promise<CompletedTurn | null> {
    const record = this.records.get(id);
    if (!record || !(await this.finish(id, 'completed'))) return null;
    const late = record.pendingInputs.splice(0);
    const last = late[late.length - 1];
    const followUp = last
      ? await this.createQueued({
          id: followUpId,
          kind: last.kind ?? record.kind,
          conversationId: record.conversationId,
          spaceId: record.spaceId,
          request: last.request ?? record.request,
        })
      : null;
    return { lateInputs: late.length, followUp };
  }

  async findStale(before: Date): Promise<TurnRecord[]> {
    return [...this.records.values()]
      .filter((t) => t.status === 'running' && t.heartbeatAt !== null && t.heartbeatAt < before)
      .map((t) => structuredClone(t));
  }

  async listActiveOn(replicaId: string): Promise<TurnRecord[]> {
    return this.active()
      .filter((t) => t.replicaId === replicaId)
      .map((t) => structuredClone(t));
  }

  private active(): TurnRecord[] {
    return [...this.records.values()].filter((t) => ACTIVE_TURN_STATUSES.includes(t.status));
  }
}
