import type { DataSource, Repository } from 'typeorm';
import type { TurnKind } from '#contracts/agent.js';
import {
  type ApprovalDecision,
  type CompletedTurn,
  type NewTurn,
  type PendingApproval,
  type PendingInput,
  type PendingQuestion,
  type TurnRecord,
  TurnRepository,
  type TurnStatus,
} from '#core/ports/turn.repository.port.js';
import { storableJson, storableText } from '#core/errors/text-rules.js';
import { AgentTurnEntity } from '../database/entities/agent-turn.entity.js';
import { returningRows } from '../database/returning-rows.js';

const ACTIVE = `"status" IN ('queued', 'running')`;
/** Unannounced ends one reaper sweep publishes at most. */
const UNANNOUNCED_BATCH = 200;

const toRecord = (e: AgentTurnEntity): TurnRecord => ({
  id: e.id,
  kind: e.kind as TurnKind,
  conversationId: e.conversationId,
  spaceId: e.spaceId,
  status: e.status as TurnStatus,
  replicaId: e.replicaId,
  heartbeatAt: e.heartbeatAt,
  stopRequested: e.stopRequested,
  request: e.request ?? {},
  pendingInputs: (e.pendingInputs ?? []) as PendingInput[],
  pendingQuestion: e.pendingQuestion as PendingQuestion | null,
  questionAnswer: e.questionAnswer,
  pendingApproval: e.pendingApproval as PendingApproval | null,
  approvalDecision: e.approvalDecision as ApprovalDecision | null,
  pendingRetry: e.pendingRetry,
  thoughts: e.thoughts ?? [],
  error: e.error,
  createdAt: e.createdAt,
  startedAt: e.startedAt,
  endedAt: e.endedAt,
});

/** A row of "agent_turn" as `RETURNING *` or `to_jsonb` gives it (timestamps as Date or as ISO text). */
export interface TurnRow {
  id: string;
  kind: string;
  conversation_id: string;
  space_id: string;
  status: string;
  replica_id: string | null;
  heartbeat_at: Date | string | null;
  stop_requested: boolean;
  request: Record<string, unknown> | null;
  pending_inputs: unknown[] | null;
  pending_question: Record<string, unknown> | null;
  question_answer: Record<string, unknown> | null;
  pending_approval?: Record<string, unknown> | null;
  approval_decision?: Record<string, unknown> | null;
  pending_retry: Record<string, unknown> | null;
  thoughts: unknown[] | null;
  error: string | null;
  created_at: Date | string;
  started_at: Date | string | null;
  ended_at: Date | string | null;
}

const toDate = (v: Date | string | null): Date | null => (v === null ? null : v instanceof Date ? v : new Date(v));

export const turnFromRow = (r: TurnRow): TurnRecord => ({
  id: r.id,
  kind: r.kind as TurnKind,
  conversationId: r.conversation_id,
  spaceId: r.space_id,
  status: r.status as TurnStatus,
  replicaId: r.replica_id,
  heartbeatAt: toDate(r.heartbeat_at),
  stopRequested: r.stop_requested,
  request: r.request ?? {},
  pendingInputs: (r.pending_inputs ?? []) as PendingInput[],
  pendingQuestion: r.pending_question as PendingQuestion | null,
  questionAnswer: r.question_answer,
  pendingApproval: (r.pending_approval ?? null) as PendingApproval | null,
  approvalDecision: (r.approval_decision ?? null) as ApprovalDecision | null,
  pendingRetry: r.pending_retry,
  thoughts: r.thoughts ?? [],
  error: r.error,
  createdAt: toDate(r.created_at)!,
  startedAt: toDate(r.started_at),
  endedAt: toDate(r.ended_at),
});

export class TypeormTurnRepository extends TurnRepository {
  private readonly repo: Repository<AgentTurnEntity>;

  constructor(private readonly ds: DataSource) {
    super();
    this.repo = ds.getRepository(AgentTurnEntity);
  }

  async createQueued(turn: NewTurn): Promise<TurnRecord | null> {
    const rows = (await this.ds.query(
      `INSERT INTO "agent_turn" ("id", "kind", "conversation_id", "space_id", "status", "request", "pending_inputs", "thoughts")
       VALUES ($1, $2, $3, $4, 'queued', $5, '[]'::jsonb, '[]'::jsonb)
       ON CONFLICT ("conversation_id") WHERE ${ACTIVE} DO NOTHING RETURNING *`,
      [turn.id, turn.kind, turn.conversationId, turn.spaceId, storableJson(turn.request)],
    )) as TurnRow[];
    return rows[0] ? turnFromRow(rows[0]) : null;
  }

  async findById(id: string): Promise<TurnRecord | null> {
    // Read at each step of a turn: the SQL without the query builder (as createQueued's row).
    const rows = (await this.ds.query(`SELECT * FROM "agent_turn" WHERE "id" = $1`, [id])) as TurnRow[];
    return rows[0] ? turnFromRow(rows[0]) : null;
  }

  /** Without the query builder: a run's start asks it twice, and building took longer than running. */
  async findActive(conversationId: string): Promise<TurnRecord | null> {
    const rows = (await this.ds.query(`SELECT * FROM "agent_turn" WHERE "conversation_id" = $1 AND ${ACTIVE} LIMIT 1`, [
      conversationId,
    ])) as TurnRow[];
    return rows[0] ? turnFromRow(rows[0]) : null;
  }

  /** One indexed look-up without the query builder (each webhook delivery's drain step asks it). */
  override async hasActive(conversationId: string): Promise<boolean> {
    const rows: unknown[] = await this.ds.query(
      `SELECT 1 FROM "agent_turn" WHERE "conversation_id" = $1 AND ${ACTIVE} LIMIT 1`,
      [conversationId],
    );
    return rows.length > 0;
  }

  async listActive(): Promise<TurnRecord[]> {
    const rows = await this.repo.createQueryBuilder('t').where(`t.${ACTIVE}`).orderBy('t.created_at', 'ASC').getMany();
    return rows.map(toRecord);
  }

  async claim(id: string, replicaId: string): Promise<TurnRecord | null> {
    const rows = (await this.ds.query(
      `UPDATE "agent_turn" SET "status" = 'running', "replica_id" = $2, "heartbeat_at" = now(), "started_at" = now()
       WHERE "id" = $1 AND "status" = 'queued' AND NOT "stop_requested" RETURNING *`,
      [id, replicaId],
    )) as unknown;
    const row = returningRows<TurnRow>(rows)[0];
    return row ? turnFromRow(row) : null;
  }

  async heartbeat(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.ds.query(
      `UPDATE "agent_turn" SET "heartbeat_at" = now() WHERE "id" = ANY($1::uuid[]) AND "status" = 'running'`,
      [ids],
    );
  }

  async addPendingInput(conversationId: string, input: PendingInput): Promise<TurnRecord | null> {
    const rows = (await this.ds.query(
      `UPDATE "agent_turn" SET "pending_inputs" = "pending_inputs" || $2::jsonb
       WHERE "conversation_id" = $1 AND ${ACTIVE} AND NOT "stop_requested" RETURNING *`,
      [conversationId, storableJson([input])],
    )) as unknown;
    const row = returningRows<TurnRow>(rows)[0];
    return row ? turnFromRow(row) : null;
  }

  /**
   * One statement (each step of a turn takes its input here): the row locked and read as it was,
   * emptied only when it held something. An input added meanwhile waits for the lock and lands in
   * the emptied list; nothing is taken twice or lost.
   */
  async takePendingInputs(id: string): Promise<PendingInput[]> {
    const rows = (await this.ds.query(
      `WITH taken AS (SELECT "pending_inputs" FROM "agent_turn" WHERE "id" = $1 FOR UPDATE)
       UPDATE "agent_turn" SET "pending_inputs" = '[]'::jsonb FROM taken
        WHERE "agent_turn"."id" = $1 AND taken."pending_inputs" <> '[]'::jsonb
       RETURNING taken."pending_inputs" AS "pending_inputs"`,
      [id],
    )) as unknown;
    return returningRows<{ pending_inputs: PendingInput[] }>(rows)[0]?.pending_inputs ?? [];
  }

  async setQuestion(id: string, question: PendingQuestion | null): Promise<void> {
    await this.ds.query(`UPDATE "agent_turn" SET "pending_question" = $2, "question_answer" = NULL WHERE "id" = $1`, [
      id,
      question === null ? null : storableJson(question),
    ]);
  }

  async answerQuestion(
    conversationId: string | null,
    questionId: string,
    answers: Record<string, unknown>,
  ): Promise<boolean> {
    const rows = (await this.ds.query(
      `UPDATE "agent_turn" SET "question_answer" = $3
       WHERE ${ACTIVE} AND "pending_question"->>'id' = $2 AND "question_answer" IS NULL AND NOT "stop_requested"
         AND ($1::text IS NULL OR "conversation_id" = $1) RETURNING "id"`,
      [conversationId, questionId, storableJson(answers)],
    )) as unknown;
    return firstId(rows) !== null;
  }

  async setApproval(id: string, pending: PendingApproval | null): Promise<void> {
    await this.ds.query(`UPDATE "agent_turn" SET "pending_approval" = $2, "approval_decision" = NULL WHERE "id" = $1`, [
      id,
      pending === null ? null : storableJson(pending),
    ]);
  }

  async decideApproval(
    conversationId: string,
    toolId: string | null,
    decision: ApprovalDecision,
  ): Promise<TurnRecord | null> {
    // One conditional update: of two answers racing on any replicas, one is recorded.
    const rows = (await this.ds.query(
      `UPDATE "agent_turn" SET "approval_decision" = $3
       WHERE "conversation_id" = $1 AND ${ACTIVE} AND "pending_approval" IS NOT NULL AND "approval_decision" IS NULL
         AND NOT "stop_requested" AND ($2::text IS NULL OR "pending_approval"->>'toolId' = $2) RETURNING *`,
      [conversationId, toolId, storableJson(decision)],
    )) as unknown;
    const row = returningRows<TurnRow>(rows)[0];
    return row ? turnFromRow(row) : null;
  }

  async setRetry(id: string, retry: Record<string, unknown> | null): Promise<void> {
    await this.ds.query(`UPDATE "agent_turn" SET "pending_retry" = $2 WHERE "id" = $1`, [
      id,
      retry === null ? null : storableJson(retry),
    ]);
  }

  async saveThoughts(id: string, thoughts: unknown[]): Promise<void> {
    await this.ds.query(`UPDATE "agent_turn" SET "thoughts" = $2 WHERE "id" = $1`, [id, storableJson(thoughts)]);
  }

  async requestStop(conversationId: string | null): Promise<TurnRecord[]> {
    const rows = (await this.ds.query(
      `UPDATE "agent_turn" SET "stop_requested" = true
       WHERE ${ACTIVE} AND ($1::text IS NULL OR "conversation_id" = $1) RETURNING "id"`,
      [conversationId],
    )) as unknown;
    const ids = allIds(rows);
    const turns = await Promise.all(ids.map((id) => this.findById(id)));
    return turns.filter((t): t is TurnRecord => t !== null);
  }

  async finish(
    id: string,
    status: Exclude<TurnStatus, 'queued' | 'running'>,
    error: string | null = null,
  ): Promise<boolean> {
    const rows = (await this.ds.query(
      `UPDATE "agent_turn" SET "status" = $2, "error" = $3, "ended_at" = now(), "end_pending_at" = now(),
         "pending_question" = NULL, "pending_approval" = NULL, "pending_retry" = NULL
       WHERE "id" = $1 AND ${ACTIVE} RETURNING "id"`,
      [id, status, error === null ? null : storableText(error)],
    )) as unknown;
    return firstId(rows) !== null;
  }

  async complete(id: string, followUpId: string): Promise<CompletedTurn | null> {
    // One statement: the function (migrations CompleteTurn1766300000000, TurnEndPending1766600000000)
    // locks, ends (marked unannounced) and follows up.
    const rows = (await this.ds.query(
      `SELECT "ended", "late_inputs", "follow_up" FROM complete_turn($1::uuid, $2::uuid, true)`,
      [id, followUpId],
    )) as Array<{ ended: boolean; late_inputs: number; follow_up: TurnRow | null }>;
    const row = rows[0];
    if (!row?.ended) return null;
    return { lateInputs: row.late_inputs, followUp: row.follow_up ? turnFromRow(row.follow_up) : null };
  }

  async endAnnounced(id: string): Promise<void> {
    await this.ds.query(
      `UPDATE "agent_turn" SET "end_pending_at" = NULL WHERE "id" = $1 AND "end_pending_at" IS NOT NULL`,
      [id],
    );
  }

  /**
   * Served by the partial index IDX_agent_turn_end_pending (only unannounced ends are in it),
   * oldest first and a bounded batch: after a long event-log outage the next sweeps take the rest.
   */
  async findUnannounced(before: Date): Promise<TurnRecord[]> {
    const rows = await this.repo
      .createQueryBuilder('t')
      .where('t.end_pending_at IS NOT NULL')
      .andWhere('t.end_pending_at < :before', { before })
      .orderBy('t.end_pending_at', 'ASC')
      .limit(UNANNOUNCED_BATCH)
      .getMany();
    return rows.map(toRecord);
  }

  async findStale(before: Date): Promise<TurnRecord[]> {
    const rows = await this.repo
      .createQueryBuilder('t')
      .where(`t.status = 'running'`)
      .andWhere('t.heartbeat_at < :before', { before })
      .getMany();
    return rows.map(toRecord);
  }

  async listActiveOn(replicaId: string): Promise<TurnRecord[]> {
    const rows = await this.repo
      .createQueryBuilder('t')
      .where(`t.${ACTIVE}`)
      .andWhere('t.replica_id = :replicaId', { replicaId })
      .getMany();
    return rows.map(toRecord);
  }
}

const rowsOf = (result: unknown): Array<{ id: string }> => returningRows<{ id: string }>(result);
const firstId = (result: unknown): string | null => rowsOf(result)[0]?.id ?? null;
const allIds = (result: unknown): string[] => rowsOf(result).map((r) => r.id);
