import type { DataSource, EntityManager, Repository } from 'typeorm';
import type { MessageRole, ReasoningEffort } from '#contracts/conversations.js';
import {
  COMPACTION_KIND,
  type Conversation,
  type ConversationPatch,
  type ConversationWithMessages,
  type LastMessagePatch,
  type Message,
  type NewConversation,
  type NewMessage,
  type Thought,
} from '#core/kernel/conversation.js';
import { conversationKey, isUuid, mergeMeta, parseConversationId } from '#core/conversations/conversation-rules.js';
import { storableJson, storableText } from '#core/errors/text-rules.js';
import {
  ConversationRepository,
  type SubmittedMessage,
  type UserSubmission,
} from '#core/ports/conversation.repository.port.js';
import { type TurnRow, turnFromRow } from '../agent/typeorm-turn.repository.js';
import { ConversationEntity } from '../database/entities/conversation.entity.js';
import { returningRows } from '../database/returning-rows.js';

interface ConversationRow {
  id: string;
  space_id: string;
  title: string;
  starred: boolean;
  ephemeral: boolean;
  app_id: string | null;
  reasoning_effort: string | null;
  model_source_id: string | null;
  model_id: string | null;
  created_at: Date;
  updated_at: Date;
  message_count: number;
}

interface MessageRow {
  id: string;
  conversation_id: string;
  position: number;
  role: string;
  content: string;
  meta: Record<string, unknown> | null;
  created_at: Date | string;
}

/** A message's columns joined to its conversation's row (null when it has none). */
interface JoinedMessageColumns {
  m_id: string | null;
  m_position: number | null;
  m_role: string | null;
  m_content: string | null;
  m_meta: Record<string, unknown> | null;
  m_created_at: Date | string | null;
}

const CONVERSATION_COLUMNS = `c."id", c."space_id", c."title", c."starred", c."ephemeral", c."app_id", c."reasoning_effort",
  c."model_source_id", c."model_id", c."created_at", c."updated_at",
  (SELECT count(*)::int FROM "conversation_message" m WHERE m."conversation_id" = c."id") AS "message_count"`;

const MESSAGE_COLUMNS = `"id", "conversation_id", "position", "role", "content", "meta", "created_at"`;

const toConversation = (r: ConversationRow): Conversation => ({
  id: r.id,
  spaceId: r.space_id,
  title: r.title,
  starred: r.starred,
  ephemeral: r.ephemeral,
  appId: r.app_id,
  reasoningEffort: r.reasoning_effort as ReasoningEffort | null,
  modelSourceId: r.model_source_id,
  modelId: r.model_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  messageCount: Number(r.message_count),
});

const toMessage = (r: MessageRow): Message => ({
  id: r.id,
  conversationId: r.conversation_id,
  position: r.position,
  role: r.role as MessageRole,
  content: r.content,
  meta: r.meta ?? {},
  createdAt: r.created_at instanceof Date ? r.created_at : new Date(r.created_at),
});

/**
 * One run's messages in a digital human's run conversation ($1 the conversation, $2 the run id):
 * the `meta ? 'runId'` term lets the planner use the partial index on the run id
 * (`IDX_conversation_message_run`), so a run reads its own messages however many runs came before.
 */
export const RUN_MESSAGES_CONDITION = `"conversation_id" = $1 AND "meta" ? 'runId' AND "meta" ->> 'runId' = $2`;

/**
 * The compaction summaries of conversation $1, in the terms of the partial index on them
 * (`IDX_conversation_message_compaction`), so a turn finds the latest without walking the rest.
 */
export const COMPACTION_SUMMARY_CONDITION = `"conversation_id" = $1 AND "role" = 'system' AND "meta" ->> 'kind' = '${COMPACTION_KIND}'`;

/** createIfAbsent's statements before it gives up on a row others keep creating and deleting. */
const CREATE_IF_ABSENT_TRIES = 5;

/**
 * Conversation records on TypeORM over `pg` (Postgres or the embedded PGlite). Ordering is
 * a `position` per message, unique per conversation; appends take the conversation row's
 * lock, so concurrent appends queue up and each sees the previous one's position.
 */
export class TypeormConversationRepository extends ConversationRepository {
  private readonly repo: Repository<ConversationEntity>;

  constructor(private readonly ds: DataSource) {
    super();
    this.repo = ds.getRepository(ConversationEntity);
  }

  async create(c: NewConversation): Promise<Conversation> {
    const rows = (await this.ds.query(
      `INSERT INTO "conversation" ("id", "space_id", "title", "ephemeral", "reasoning_effort", "app_id")
       VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING "id", "space_id", "title", "starred", "ephemeral", "app_id", "reasoning_effort", "model_source_id",
         "model_id", "created_at", "updated_at", 0 AS "message_count"`,
      [parseConversationId(c.id, 'id'), c.spaceId, c.title, c.ephemeral, c.reasoningEffort, c.appId ?? null],
    )) as ConversationRow[];
    return toConversation(rows[0]!);
  }

  async createIfAbsent(c: NewConversation): Promise<Conversation> {
    const id = parseConversationId(c.id, 'id');
    // One statement: the row inserted, or else the one there. The read shares the insert's
    // snapshot, so a row another transaction committed meanwhile (a conflict the insert waited
    // for) or one deleted between the two is not seen: nothing comes back, and it goes again
    // (a few times: only a row created and deleted over and over by others keeps it empty).
    for (let attempt = 1; ; attempt++) {
      const rows = (await this.ds.query(
        `WITH ins AS (
           INSERT INTO "conversation" ("id", "space_id", "title", "ephemeral", "reasoning_effort", "app_id")
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT ("id") DO NOTHING RETURNING *)
         SELECT ${CONVERSATION_COLUMNS} FROM ins c
         UNION ALL
         SELECT ${CONVERSATION_COLUMNS} FROM "conversation" c WHERE c."id" = $1 AND NOT EXISTS (SELECT 1 FROM ins)`,
        [id, c.spaceId, c.title, c.ephemeral, c.reasoningEffort, c.appId ?? null],
      )) as ConversationRow[];
      if (rows[0]) return toConversation(rows[0]);
      if (attempt === CREATE_IF_ABSENT_TRIES)
        throw new Error(`conversation ${id} was created and removed by others ${attempt} times while it was opened`);
    }
  }

  async listForSpace(spaceId: string): Promise<Conversation[]> {
    const rows = (await this.ds.query(
      `SELECT ${CONVERSATION_COLUMNS} FROM "conversation" c
       WHERE c."space_id" = $1 AND NOT c."ephemeral" AND c."app_id" IS NULL
       ORDER BY c."updated_at" DESC, c."created_at" DESC, c."id" DESC`,
      [spaceId],
    )) as ConversationRow[];
    return rows.map(toConversation);
  }

  async findById(id: string): Promise<Conversation | null> {
    const key = conversationKey(id);
    return key === null ? null : this.findIn(this.ds.manager, key);
  }

  async findWithMessages(conversationId: string, fromMessageId?: string): Promise<ConversationWithMessages | null> {
    const from = fromMessageId !== undefined && isUuid(fromMessageId) ? fromMessageId : null;
    return this.conversationJoined(
      conversationId,
      `(SELECT f."position" FROM "conversation_message" f WHERE f."conversation_id" = $1 AND f."id" = $2::uuid)`,
      [from],
    );
  }

  /**
   * From the latest compaction summary, found through the partial index on summaries
   * (`IDX_conversation_message_compaction`); a conversation never compacted is read whole.
   */
  override async findWithHistory(conversationId: string): Promise<ConversationWithMessages | null> {
    return this.conversationJoined(
      conversationId,
      `(SELECT "position" FROM "conversation_message" WHERE ${COMPACTION_SUMMARY_CONDITION} ORDER BY "position" DESC LIMIT 1)`,
      [],
    );
  }

  /**
   * The conversation and its messages from the position `firstPosition` (a scalar subquery;
   * null: the first) on. One statement, one snapshot: the count and the messages agree without a
   * transaction (its begin, isolation level and commit were four more round trips on every
   * turn's start). The conversation's row (and its count) is computed once, then joined to its
   * messages.
   */
  private async conversationJoined(
    conversationId: string,
    firstPosition: string,
    params: unknown[],
  ): Promise<ConversationWithMessages | null> {
    const id = conversationKey(conversationId);
    if (id === null) return null;
    const rows = (await this.ds.query(
      `WITH c AS MATERIALIZED (SELECT ${CONVERSATION_COLUMNS} FROM "conversation" c WHERE c."id" = $1)
       SELECT c.*, m."id" AS "m_id", m."position" AS "m_position", m."role" AS "m_role",
         m."content" AS "m_content", m."meta" AS "m_meta", m."created_at" AS "m_created_at"
       FROM c LEFT JOIN "conversation_message" m ON m."conversation_id" = c."id" AND m."position" >= COALESCE(${firstPosition}, 0)
       ORDER BY m."position"`,
      [id, ...params],
    )) as Array<ConversationRow & JoinedMessageColumns>;
    if (rows.length === 0) return null;
    const messages = rows
      .filter((r) => r.m_id !== null)
      .map((r) =>
        toMessage({
          id: r.m_id!,
          conversation_id: r.id,
          position: r.m_position!,
          role: r.m_role!,
          content: r.m_content!,
          meta: r.m_meta,
          created_at: r.m_created_at!,
        }),
      );
    return { conversation: toConversation(rows[0]!), messages };
  }

  async findRunMessages(conversationId: string, runId: string): Promise<Message[]> {
    const id = conversationKey(conversationId);
    if (id === null) return [];
    const rows = (await this.ds.query(
      `SELECT ${MESSAGE_COLUMNS} FROM "conversation_message" WHERE ${RUN_MESSAGES_CONDITION} ORDER BY "position"`,
      [id, runId],
    )) as MessageRow[];
    return rows.map(toMessage);
  }

  async update(conversationId: string, patch: ConversationPatch): Promise<Conversation | null> {
    const id = conversationKey(conversationId);
    if (id === null) return null;
    const set: Record<string, unknown> = { updatedAt: () => 'now()' };
    if (patch.title !== undefined) set.title = patch.title;
    if (patch.reasoningEffort !== undefined) set.reasoningEffort = patch.reasoningEffort;
    if (patch.pin !== undefined) {
      set.modelSourceId = patch.pin?.modelSourceId ?? null;
      set.modelId = patch.pin?.modelId ?? null;
    }
    const result = await this.repo.createQueryBuilder().update().set(set).where('id = :id', { id }).execute();
    return result.affected ? this.findById(id) : null;
  }

  async setStarred(conversationId: string, starred: boolean): Promise<boolean> {
    const id = conversationKey(conversationId);
    if (id === null) return false;
    const result = await this.repo.update({ id }, { starred });
    return (result.affected ?? 0) > 0;
  }

  async remove(conversationId: string): Promise<boolean> {
    const id = conversationKey(conversationId);
    if (id === null) return false;
    const result = await this.repo.delete({ id });
    return (result.affected ?? 0) > 0;
  }

  async removeAllInSpace(spaceId: string): Promise<number> {
    const result = await this.repo.delete({ spaceId });
    return result.affected ?? 0;
  }

  async removeAllOfApp(appId: string): Promise<string[]> {
    const rows = returningRows<{ id: string }>(
      await this.ds.query(`DELETE FROM "conversation" WHERE "app_id" = $1 RETURNING "id"`, [appId]),
    );
    return rows.map((r) => r.id);
  }

  async removeEphemeral(idleForMs: number | null): Promise<number> {
    const query = this.repo.createQueryBuilder().delete().where('ephemeral = true');
    if (idleForMs !== null) {
      query.andWhere(`updated_at < now() - (:ms::double precision * interval '1 millisecond')`, { ms: idleForMs });
    }
    const result = await query.execute();
    return result.affected ?? 0;
  }

  async appendMessage(id: string, message: NewMessage, thoughts?: readonly Thought[]): Promise<Message | null> {
    const conversationId = conversationKey(id);
    if (conversationId === null) return null;
    const withThoughts = thoughts !== undefined && thoughts.length > 0;
    // One statement: the function (migrations AppendMessage1766700000000 and, with thoughts,
    // AppendMessageThoughts1767000000000) locks the conversation, inserts at the end (and the
    // thoughts) and touches updated_at, as a transaction of five or six statements did.
    const rows = (await this.ds.query(
      withThoughts
        ? `SELECT ${MESSAGE_COLUMNS} FROM append_message($1::text, $2::text, $3::text, $4::jsonb, $5::jsonb)`
        : `SELECT ${MESSAGE_COLUMNS} FROM append_message($1::text, $2::text, $3::text, $4::jsonb)`,
      [
        conversationId,
        message.role,
        storableText(message.content),
        storableJson(message.meta ?? {}),
        ...(withThoughts ? [storableJson(thoughts)] : []),
      ],
    )) as MessageRow[];
    return rows[0] ? toMessage(rows[0]) : null;
  }

  async submitUserMessage(
    id: string,
    submission: UserSubmission,
  ): Promise<SubmittedMessage | 'first' | 'exists' | null> {
    const conversationId = conversationKey(id);
    if (conversationId === null) return null;
    // One statement: the function (migrations SubmitUserMessage1765300000000,
    // SubmitUserMessageChecks1765400000000, SubmitUserMessageFirstMeta1765500000000 and
    // SubmitUserMessageLiveInput1766400000200) locks, checks, inserts and hands live input over.
    const rows = (await this.ds
      .query(
        `SELECT "outcome", "message", "turn", "handed" FROM submit_user_message($1::text, $2::uuid, $3::text,
         $4::jsonb, $5::jsonb, $6::uuid, $7::text, $8::text, $9::text, $10::jsonb, $11::text, $12::boolean, $13::jsonb,
         $14::jsonb)`,
        [
          conversationId,
          submission.messageId,
          storableText(submission.content),
          storableJson(submission.meta),
          storableJson(submission.liveMeta),
          submission.turn.id,
          submission.turn.kind,
          submission.turn.conversationId,
          submission.turn.spaceId,
          storableJson(submission.turn.request),
          submission.inSpace ?? null,
          submission.unlessFirst === true,
          submission.firstMeta ? storableJson(submission.firstMeta) : null,
          submission.liveInput ? storableJson(submission.liveInput) : null,
        ],
      )
      // The message's id is taken: it was submitted before (the function's transaction wrote nothing).
      .catch((err: unknown) => {
        if (isMessageIdTaken(err)) return 'exists' as const;
        throw err;
      })) as
      | 'exists'
      | Array<{
          outcome: 'queued' | 'active' | 'first' | 'not-found';
          message: MessageRow | null;
          turn: TurnRow | null;
          handed: boolean;
        }>;
    if (rows === 'exists') return 'exists';
    const row = rows[0]!;
    if (row.outcome === 'first') return 'first';
    if (row.outcome === 'not-found' || !row.message) return null;
    const message = toMessage(row.message);
    return row.outcome === 'queued' && row.turn
      ? { message, turn: turnFromRow(row.turn) }
      : { message, turn: null, handed: row.handed === true };
  }

  async updateLastMessage(id: string, patch: LastMessagePatch, thoughts?: readonly Thought[]): Promise<Message | null> {
    const conversationId = conversationKey(id);
    if (conversationId === null) return null;
    return this.ds.transaction(async (m) => {
      if (!(await this.lockConversation(m, conversationId))) return null;
      const last = (await m.query(
        `SELECT ${MESSAGE_COLUMNS} FROM "conversation_message"
         WHERE "conversation_id" = $1 ORDER BY "position" DESC LIMIT 1`,
        [conversationId],
      )) as MessageRow[];
      if (!last[0]) return null;
      const current = toMessage(last[0]);
      const content = patch.content ?? current.content;
      const meta = patch.meta ? mergeMeta(current.meta, patch.meta) : current.meta;
      await m.query(`UPDATE "conversation_message" SET "content" = $2, "meta" = $3::jsonb WHERE "id" = $1`, [
        current.id,
        storableText(content),
        storableJson(meta),
      ]);
      if (thoughts) {
        await m.query(`DELETE FROM "conversation_thought" WHERE "message_id" = $1`, [current.id]);
        await this.insertThoughts(m, current.id, thoughts);
      }
      await this.touch(m, conversationId);
      return { ...current, content, meta };
    });
  }

  async saveThoughts(messageId: string, thoughts: readonly Thought[]): Promise<boolean> {
    if (!isUuid(messageId)) return false;
    return this.ds.transaction(async (m) => {
      // The message row's lock serializes concurrent saves of one message's thoughts.
      const found = (await m.query(`SELECT "id" FROM "conversation_message" WHERE "id" = $1 FOR UPDATE`, [
        messageId,
      ])) as unknown[];
      if (found.length === 0) return false;
      await m.query(`DELETE FROM "conversation_thought" WHERE "message_id" = $1`, [messageId]);
      await this.insertThoughts(m, messageId, thoughts);
      return true;
    });
  }

  async thoughtsOf(id: string, messageId: string): Promise<Thought[]> {
    const conversationId = conversationKey(id);
    if (conversationId === null || !isUuid(messageId)) return [];
    const rows = (await this.ds.query(
      `SELECT t."data" FROM "conversation_thought" t
       JOIN "conversation_message" m ON m."id" = t."message_id"
       WHERE t."message_id" = $2 AND m."conversation_id" = $1
       ORDER BY t."position"`,
      [conversationId, messageId],
    )) as Array<{ data: Thought }>;
    return rows.map((r) => r.data);
  }

  private async findIn(m: EntityManager, id: string): Promise<Conversation | null> {
    const rows = (await m.query(`SELECT ${CONVERSATION_COLUMNS} FROM "conversation" c WHERE c."id" = $1`, [
      id,
    ])) as ConversationRow[];
    return rows[0] ? toConversation(rows[0]) : null;
  }

  /** Takes the conversation row's lock until the transaction ends; false when it does not exist. */
  private async lockConversation(m: EntityManager, id: string): Promise<boolean> {
    const rows = (await m.query(`SELECT "id" FROM "conversation" WHERE "id" = $1 FOR UPDATE`, [id])) as unknown[];
    return rows.length > 0;
  }

  private async touch(m: EntityManager, id: string): Promise<void> {
    await m.query(`UPDATE "conversation" SET "updated_at" = now() WHERE "id" = $1`, [id]);
  }

  private async insertThoughts(m: EntityManager, messageId: string, thoughts: readonly Thought[]): Promise<void> {
    if (thoughts.length === 0) return;
    await m.query(
      `INSERT INTO "conversation_thought" ("message_id", "position", "data")
       SELECT $1::uuid, (t.ord - 1)::int, t.value FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(value, ord)`,
      [messageId, storableJson(thoughts)],
    );
  }
}

/** Postgres' unique_violation on a message's primary key. */
const isMessageIdTaken = (err: unknown): boolean => {
  const driverError = (err as { driverError?: { code?: string; constraint?: string } }).driverError;
  return driverError?.code === '23505' && driverError.constraint === 'PK_conversation_message';
};
