import { type DataSource, QueryFailedError } from 'typeorm';
import type {
  BoardFindingDto,
  BoardTaskDto,
  TeamActivityDto,
  TeamDto,
  TeamEdgeDto,
  TeamEpochDto,
  TeamMemberDto,
} from '#contracts/teams.js';
import {
  type EpochSeal,
  type MailboxMessage,
  type MailTranscript,
  type MemberChanges,
  type TaskChanges,
  type TeamChanges,
  TeamRepository,
  type TeamTriggerRecord,
} from '#core/ports/team.repository.port.js';
import { conversationKey } from '#core/conversations/conversation-rules.js';
import { storableJson, storableText } from '#core/errors/text-rules.js';
import { returningRows } from '../database/returning-rows.js';

type Row = Record<string, unknown>;

/** Postgres' unique_violation. */
const isUniqueViolation = (err: unknown): boolean =>
  err instanceof QueryFailedError && (err.driverError as { code?: string } | undefined)?.code === '23505';

const iso = (v: unknown): string => (v instanceof Date ? v : new Date(v as string)).toISOString();
const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));

const toTeam = (r: Row): TeamDto => ({
  id: r.id as string,
  name: r.name as string,
  owningSpaceId: r.owning_space_id as string,
  goal: r.goal as string,
  leadAppId: (r.lead_app_id as string | null) ?? null,
  memberSourcing: r.member_sourcing as TeamDto['memberSourcing'],
  collabMode: r.collab_mode as TeamDto['collabMode'],
  escalationRouting: r.escalation_routing as TeamDto['escalationRouting'],
  status: r.status as TeamDto['status'],
  currentEpochId: (r.current_epoch_id as string | null) ?? null,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const toMember = (r: Row): TeamMemberDto => ({
  teamId: r.team_id as string,
  appId: r.app_id as string,
  memberName: r.member_name as string,
  role: r.role as string,
  duty: (r.duty as string | null) ?? null,
  isLead: r.is_lead as boolean,
  aiProvisioned: r.ai_provisioned as boolean,
  addedAt: iso(r.added_at),
});

const toEpoch = (r: Row): TeamEpochDto => ({
  id: r.id as string,
  teamId: r.team_id as string,
  lifecycle: r.lifecycle as TeamEpochDto['lifecycle'],
  startedAt: iso(r.started_at),
  endedAt: isoOrNull(r.ended_at),
  endReason: (r.end_reason as TeamEpochDto['endReason']) ?? null,
  outcome: (r.outcome as TeamEpochDto['outcome']) ?? null,
  summary: (r.summary as string | null) ?? null,
  triggerType: (r.trigger_type as TeamEpochDto['triggerType']) ?? null,
  title: (r.title as string | null) ?? null,
});

const toTask = (r: Row): BoardTaskDto => ({
  id: r.id as string,
  epochId: r.epoch_id as string,
  title: r.title as string,
  assigneeAppId: r.assignee_app_id as string,
  status: r.status as BoardTaskDto['status'],
  resultRef: (r.result_ref as string | null) ?? null,
  note: (r.note as string | null) ?? null,
  parentId: (r.parent_id as string | null) ?? null,
  createdByAppId: (r.created_by_app_id as string | null) ?? null,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const toFinding = (r: Row): BoardFindingDto => ({
  id: r.id as string,
  epochId: r.epoch_id as string,
  authorAppId: r.author_app_id as string,
  body: r.body as string,
  ref: (r.ref as string | null) ?? null,
  createdAt: iso(r.created_at),
});

const toActivity = (r: Row): TeamActivityDto => ({
  id: r.id as string,
  epochId: r.epoch_id as string,
  kind: r.kind as TeamActivityDto['kind'],
  actorAppId: (r.actor_app_id as string | null) ?? null,
  targetAppId: (r.target_app_id as string | null) ?? null,
  subject: r.subject as string,
  body: (r.body as string | null) ?? null,
  createdAt: iso(r.created_at),
});

const toMail = (r: Row): MailboxMessage => ({
  id: r.id as string,
  epochId: r.epoch_id as string,
  toAppId: r.to_app_id as string,
  fromAppId: (r.from_app_id as string | null) ?? null,
  body: r.body as string,
  depth: Number(r.depth),
  createdAt: iso(r.created_at),
});

const toTrigger = (r: Row): TeamTriggerRecord => ({
  id: r.id as string,
  teamId: r.team_id as string,
  type: r.type as TeamTriggerRecord['type'],
  config: (r.config as Record<string, unknown>) ?? {},
  nextMs: r.next_ms === null || r.next_ms === undefined ? null : Number(r.next_ms),
  createdAt: iso(r.created_at),
});

const TEAM_COLUMNS: Record<keyof TeamChanges, string> = {
  name: 'name',
  goal: 'goal',
  leadAppId: 'lead_app_id',
  memberSourcing: 'member_sourcing',
  collabMode: 'collab_mode',
  escalationRouting: 'escalation_routing',
  status: 'status',
};
const MEMBER_COLUMNS: Record<keyof MemberChanges, string> = { memberName: 'member_name', role: 'role', duty: 'duty' };
const TASK_COLUMNS: Record<keyof TaskChanges, string> = { status: 'status', resultRef: 'result_ref', note: 'note' };

/** `"col" = $n, …` for the defined fields of `changes`, numbered from `first`. */
function assignments<K extends string>(
  changes: Partial<Record<K, unknown>>,
  columns: Record<K, string>,
  first: number,
): { sql: string[]; values: unknown[] } {
  const sql: string[] = [];
  const values: unknown[] = [];
  for (const [key, column] of Object.entries(columns) as Array<[K, string]>) {
    if (changes[key] === undefined) continue;
    values.push(changes[key]);
    sql.push(`"${column}" = $${first + values.length - 1}`);
  }
  return { sql, values };
}

/** TeamRepository on the server's Postgres (embedded or DATABASE_URL): atomic across replicas. */
export class TypeormTeamRepository extends TeamRepository {
  constructor(private readonly ds: DataSource) {
    super();
  }

  async create(team: TeamDto, members: TeamMemberDto[]): Promise<'created' | 'name-taken'> {
    try {
      await this.ds.transaction(async (m) => {
        await m.query(
          `INSERT INTO "team" ("id", "owning_space_id", "name", "goal", "lead_app_id", "member_sourcing", "collab_mode",
             "escalation_routing", "status", "current_epoch_id", "created_at", "updated_at")
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
          [
            team.id,
            team.owningSpaceId,
            team.name,
            team.goal,
            team.leadAppId,
            team.memberSourcing,
            team.collabMode,
            team.escalationRouting,
            team.status,
            team.currentEpochId,
            team.createdAt,
            team.updatedAt,
          ],
        );
        for (const member of members) await this.insertMember(m.query.bind(m), member);
      });
      return 'created';
    } catch (err) {
      if (isUniqueViolation(err)) return 'name-taken';
      throw err;
    }
  }

  private async insertMember(query: (sql: string, params: unknown[]) => Promise<unknown>, member: TeamMemberDto) {
    await query(
      `INSERT INTO "team_member" ("team_id", "app_id", "member_name", "role", "duty", "is_lead", "ai_provisioned", "added_at")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        member.teamId,
        member.appId,
        member.memberName,
        member.role,
        member.duty,
        member.isLead,
        member.aiProvisioned,
        member.addedAt,
      ],
    );
  }

  async findById(teamId: string): Promise<TeamDto | null> {
    const rows: Row[] = await this.ds.query(`SELECT * FROM "team" WHERE "id" = $1`, [teamId]);
    return rows[0] ? toTeam(rows[0]) : null;
  }

  async list(spaceId?: string): Promise<TeamDto[]> {
    const rows: Row[] =
      spaceId === undefined
        ? await this.ds.query(`SELECT * FROM "team" ORDER BY "created_at", "id"`)
        : await this.ds.query(`SELECT * FROM "team" WHERE "owning_space_id" = $1 ORDER BY "created_at", "id"`, [
            spaceId,
          ]);
    return rows.map(toTeam);
  }

  async update(teamId: string, changes: TeamChanges): Promise<TeamDto | null> {
    const { sql, values } = assignments(changes, TEAM_COLUMNS, 2);
    const rows = returningRows<Row>(
      await this.ds.query(
        `UPDATE "team" SET ${[...sql, `"updated_at" = now()`].join(', ')} WHERE "id" = $1 RETURNING *`,
        [teamId, ...values],
      ),
    );
    return rows[0] ? toTeam(rows[0]) : null;
  }

  async delete(teamId: string): Promise<boolean> {
    const rows = returningRows(await this.ds.query(`DELETE FROM "team" WHERE "id" = $1 RETURNING "id"`, [teamId]));
    return rows.length > 0;
  }

  async members(teamId: string): Promise<TeamMemberDto[]> {
    const rows: Row[] = await this.ds.query(
      `SELECT * FROM "team_member" WHERE "team_id" = $1 ORDER BY "is_lead" DESC, "added_at", "member_name"`,
      [teamId],
    );
    return rows.map(toMember);
  }

  async addMember(member: TeamMemberDto): Promise<'added' | 'name-taken' | 'already-member'> {
    const existing: Row[] = await this.ds.query(`SELECT 1 FROM "team_member" WHERE "team_id" = $1 AND "app_id" = $2`, [
      member.teamId,
      member.appId,
    ]);
    if (existing.length > 0) return 'already-member';
    try {
      await this.insertMember((sql, params) => this.ds.query(sql, params), member);
      return 'added';
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const again: Row[] = await this.ds.query(`SELECT 1 FROM "team_member" WHERE "team_id" = $1 AND "app_id" = $2`, [
        member.teamId,
        member.appId,
      ]);
      return again.length > 0 ? 'already-member' : 'name-taken';
    }
  }

  async updateMember(
    teamId: string,
    appId: string,
    changes: MemberChanges,
  ): Promise<TeamMemberDto | null | 'name-taken'> {
    const { sql, values } = assignments(changes, MEMBER_COLUMNS, 3);
    if (sql.length === 0) return (await this.members(teamId)).find((m) => m.appId === appId) ?? null;
    try {
      const rows = returningRows<Row>(
        await this.ds.query(
          `UPDATE "team_member" SET ${sql.join(', ')} WHERE "team_id" = $1 AND "app_id" = $2 RETURNING *`,
          [teamId, appId, ...values],
        ),
      );
      return rows[0] ? toMember(rows[0]) : null;
    } catch (err) {
      if (isUniqueViolation(err)) return 'name-taken';
      throw err;
    }
  }

  async removeMember(teamId: string, appId: string): Promise<boolean> {
    return this.ds.transaction(async (m) => {
      const rows = returningRows(
        await m.query(`DELETE FROM "team_member" WHERE "team_id" = $1 AND "app_id" = $2 RETURNING "app_id"`, [
          teamId,
          appId,
        ]),
      );
      await m.query(`DELETE FROM "team_edge" WHERE "team_id" = $1 AND ("from_app_id" = $2 OR "to_app_id" = $2)`, [
        teamId,
        appId,
      ]);
      await m.query(`UPDATE "team" SET "lead_app_id" = NULL WHERE "id" = $1 AND "lead_app_id" = $2`, [teamId, appId]);
      return rows.length > 0;
    });
  }

  async removeAppEverywhere(appId: string): Promise<string[]> {
    return this.ds.transaction(async (m) => {
      const rows = returningRows<{ team_id: string }>(
        await m.query(`DELETE FROM "team_member" WHERE "app_id" = $1 RETURNING "team_id"`, [appId]),
      );
      await m.query(`DELETE FROM "team_edge" WHERE "from_app_id" = $1 OR "to_app_id" = $1`, [appId]);
      await m.query(`UPDATE "team" SET "lead_app_id" = NULL WHERE "lead_app_id" = $1`, [appId]);
      return rows.map((r) => r.team_id);
    });
  }

  async edges(teamId: string): Promise<TeamEdgeDto[]> {
    const rows: Row[] = await this.ds.query(
      `SELECT * FROM "team_edge" WHERE "team_id" = $1 ORDER BY "from_app_id", "to_app_id"`,
      [teamId],
    );
    return rows.map((r) => ({ fromAppId: r.from_app_id as string, toAppId: r.to_app_id as string }));
  }

  async replaceEdges(teamId: string, edges: TeamEdgeDto[]): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query(`DELETE FROM "team_edge" WHERE "team_id" = $1`, [teamId]);
      for (const edge of edges) {
        await m.query(
          `INSERT INTO "team_edge" ("team_id", "from_app_id", "to_app_id") VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
          [teamId, edge.fromAppId, edge.toAppId],
        );
      }
      await m.query(`UPDATE "team" SET "updated_at" = now() WHERE "id" = $1`, [teamId]);
    });
  }

  async openRunEpoch(epoch: TeamEpochDto): Promise<boolean> {
    try {
      await this.ds.transaction(async (m) => {
        await m.query(
          `INSERT INTO "team_epoch" ("id", "team_id", "lifecycle", "started_at", "trigger_type", "title")
           VALUES ($1, $2, 'run', $3, $4, $5)`,
          [epoch.id, epoch.teamId, epoch.startedAt, epoch.triggerType, epoch.title],
        );
        await m.query(
          `UPDATE "team" SET "current_epoch_id" = $2, "status" = 'running', "updated_at" = now() WHERE "id" = $1`,
          [epoch.teamId, epoch.id],
        );
      });
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  async openConversationEpoch(epoch: TeamEpochDto): Promise<void> {
    await this.ds.query(
      `INSERT INTO "team_epoch" ("id", "team_id", "lifecycle", "started_at", "trigger_type", "title")
       VALUES ($1, $2, 'conversation', $3, $4, $5)`,
      [epoch.id, epoch.teamId, epoch.startedAt, epoch.triggerType, epoch.title],
    );
  }

  async renameEpoch(epochId: string, title: string | null): Promise<boolean> {
    const rows = returningRows(
      await this.ds.query(`UPDATE "team_epoch" SET "title" = $2 WHERE "id" = $1 RETURNING "id"`, [epochId, title]),
    );
    return rows.length > 0;
  }

  async findEpoch(epochId: string): Promise<TeamEpochDto | null> {
    const rows: Row[] = await this.ds.query(`SELECT * FROM "team_epoch" WHERE "id" = $1`, [epochId]);
    return rows[0] ? toEpoch(rows[0]) : null;
  }

  async listEpochs(teamId: string): Promise<TeamEpochDto[]> {
    const rows: Row[] = await this.ds.query(
      `SELECT * FROM "team_epoch" WHERE "team_id" = $1 ORDER BY "started_at" DESC, "id"`,
      [teamId],
    );
    return rows.map(toEpoch);
  }

  async latestEpoch(teamId: string): Promise<TeamEpochDto | null> {
    return (await this.listEpochs(teamId))[0] ?? null;
  }

  async openRunEpochs(): Promise<TeamEpochDto[]> {
    const rows: Row[] = await this.ds.query(
      `SELECT * FROM "team_epoch" WHERE "lifecycle" = 'run' AND "ended_at" IS NULL ORDER BY "started_at"`,
    );
    return rows.map(toEpoch);
  }

  async seal(epochId: string, seal: EpochSeal): Promise<TeamEpochDto | null> {
    return this.ds.transaction(async (m) => {
      const rows = returningRows<Row>(
        await m.query(
          `UPDATE "team_epoch" SET "ended_at" = now(), "end_reason" = $2, "outcome" = $3, "summary" = $4
           WHERE "id" = $1 AND "ended_at" IS NULL RETURNING *`,
          [epochId, seal.endReason, seal.outcome, seal.summary],
        ),
      );
      if (!rows[0]) return null;
      await m.query(
        `UPDATE "team" SET "current_epoch_id" = NULL, "status" = $2, "updated_at" = now()
         WHERE "id" = $1 AND "current_epoch_id" = $3`,
        [rows[0].team_id, seal.teamStatus, epochId],
      );
      return toEpoch(rows[0]);
    });
  }

  async countMessage(epochId: string): Promise<number> {
    const rows = returningRows<{ message_count: number }>(
      await this.ds.query(
        `UPDATE "team_epoch" SET "message_count" = "message_count" + 1 WHERE "id" = $1 RETURNING "message_count"`,
        [epochId],
      ),
    );
    return Number(rows[0]?.message_count ?? 0);
  }

  async addTask(task: BoardTaskDto): Promise<void> {
    await this.ds.query(
      `INSERT INTO "team_task" ("id", "epoch_id", "title", "assignee_app_id", "status", "result_ref", "note", "parent_id",
         "created_by_app_id", "created_at", "updated_at") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        task.id,
        task.epochId,
        task.title,
        task.assigneeAppId,
        task.status,
        task.resultRef,
        task.note,
        task.parentId,
        task.createdByAppId,
        task.createdAt,
        task.updatedAt,
      ],
    );
  }

  async updateTask(epochId: string, taskId: string, changes: TaskChanges): Promise<BoardTaskDto | null> {
    const { sql, values } = assignments(changes, TASK_COLUMNS, 3);
    const rows = returningRows<Row>(
      await this.ds.query(
        `UPDATE "team_task" SET ${[...sql, `"updated_at" = now()`].join(', ')}
         WHERE "epoch_id" = $1 AND "id" = $2 RETURNING *`,
        [epochId, taskId, ...values],
      ),
    );
    return rows[0] ? toTask(rows[0]) : null;
  }

  async tasks(epochId: string): Promise<BoardTaskDto[]> {
    const rows: Row[] = await this.ds.query(
      `SELECT * FROM "team_task" WHERE "epoch_id" = $1 ORDER BY "created_at", "id"`,
      [epochId],
    );
    return rows.map(toTask);
  }

  async addFinding(finding: BoardFindingDto): Promise<void> {
    await this.ds.query(
      `INSERT INTO "team_finding" ("id", "epoch_id", "author_app_id", "body", "ref", "created_at")
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [finding.id, finding.epochId, finding.authorAppId, finding.body, finding.ref, finding.createdAt],
    );
  }

  async findings(epochId: string): Promise<BoardFindingDto[]> {
    const rows: Row[] = await this.ds.query(
      `SELECT * FROM "team_finding" WHERE "epoch_id" = $1 ORDER BY "created_at", "id"`,
      [epochId],
    );
    return rows.map(toFinding);
  }

  async addActivity(activity: TeamActivityDto): Promise<void> {
    await this.ds.query(
      `INSERT INTO "team_activity" ("id", "epoch_id", "kind", "actor_app_id", "target_app_id", "subject", "body", "created_at")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        activity.id,
        activity.epochId,
        activity.kind,
        activity.actorAppId,
        activity.targetAppId,
        activity.subject,
        activity.body,
        activity.createdAt,
      ],
    );
  }

  async activities(epochId: string): Promise<TeamActivityDto[]> {
    const rows: Row[] = await this.ds.query(`SELECT * FROM "team_activity" WHERE "epoch_id" = $1 ORDER BY "seq"`, [
      epochId,
    ]);
    return rows.map(toActivity);
  }

  async enqueue(message: MailboxMessage): Promise<void> {
    await this.ds.query(
      `INSERT INTO "team_mailbox" ("id", "epoch_id", "to_app_id", "from_app_id", "body", "depth", "created_at")
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [message.id, message.epochId, message.toAppId, message.fromAppId, message.body, message.depth, message.createdAt],
    );
  }

  async takeWaiting(epochId: string, toAppId: string, into: MailTranscript): Promise<MailboxMessage[]> {
    const conversationId = conversationKey(into.conversationId);
    if (conversationId === null) return [];
    return this.ds.transaction(async (m) => {
      // The transcript's row first: takers of one member's mail queue up here, so what one takes
      // is in the transcript before the next one looks (order kept across replicas).
      const conversation: Row[] = await m.query(`SELECT "id" FROM "conversation" WHERE "id" = $1 FOR UPDATE`, [
        conversationId,
      ]);
      if (conversation.length === 0) return [];
      const rows: Row[] = await m.query(
        `SELECT * FROM "team_mailbox" WHERE "epoch_id" = $1 AND "to_app_id" = $2 AND "taken_at" IS NULL
         ORDER BY "seq" FOR UPDATE`,
        [epochId, toAppId],
      );
      if (rows.length === 0) return [];
      const mail = rows.map(toMail);
      const { content, meta } = into.render(mail);
      await m.query(
        `INSERT INTO "conversation_message" ("id", "conversation_id", "position", "role", "content", "meta")
         SELECT gen_random_uuid(), $1::text, COALESCE(MAX("position") + 1, 0), 'user', $2::text, $3::jsonb
         FROM "conversation_message" WHERE "conversation_id" = $1::text`,
        [conversationId, storableText(content), storableJson(meta)],
      );
      await m.query(`UPDATE "conversation" SET "updated_at" = now() WHERE "id" = $1`, [conversationId]);
      await m.query(`UPDATE "team_mailbox" SET "taken_at" = now() WHERE "seq" = ANY($1::bigint[])`, [
        rows.map((r) => String(r.seq)),
      ]);
      return mail;
    });
  }

  async hasWaiting(epochId: string, toAppId: string): Promise<boolean> {
    const rows: Row[] = await this.ds.query(
      `SELECT 1 FROM "team_mailbox" WHERE "epoch_id" = $1 AND "to_app_id" = $2 AND "taken_at" IS NULL LIMIT 1`,
      [epochId, toAppId],
    );
    return rows.length > 0;
  }

  async anyWaiting(epochId: string): Promise<boolean> {
    const rows: Row[] = await this.ds.query(
      `SELECT 1 FROM "team_mailbox" WHERE "epoch_id" = $1 AND "taken_at" IS NULL LIMIT 1`,
      [epochId],
    );
    return rows.length > 0;
  }

  async waitingRecipients(epochId: string): Promise<string[]> {
    const rows: Row[] = await this.ds.query(
      `SELECT DISTINCT "to_app_id" FROM "team_mailbox" WHERE "epoch_id" = $1 AND "taken_at" IS NULL`,
      [epochId],
    );
    return rows.map((r) => r.to_app_id as string);
  }

  async addTrigger(t: TeamTriggerRecord): Promise<void> {
    await this.ds.query(
      `INSERT INTO "team_trigger" ("id", "team_id", "type", "config", "next_ms", "created_at")
       VALUES ($1, $2, $3, $4::jsonb, $5, $6)`,
      [t.id, t.teamId, t.type, storableJson(t.config), t.nextMs, t.createdAt],
    );
  }

  async triggers(teamId: string): Promise<TeamTriggerRecord[]> {
    const rows: Row[] = await this.ds.query(
      `SELECT * FROM "team_trigger" WHERE "team_id" = $1 ORDER BY "created_at", "id"`,
      [teamId],
    );
    return rows.map(toTrigger);
  }

  async findTrigger(triggerId: string): Promise<TeamTriggerRecord | null> {
    const rows: Row[] = await this.ds.query(`SELECT * FROM "team_trigger" WHERE "id" = $1`, [triggerId]);
    return rows[0] ? toTrigger(rows[0]) : null;
  }

  async deleteTrigger(teamId: string, triggerId: string): Promise<boolean> {
    const rows = returningRows(
      await this.ds.query(`DELETE FROM "team_trigger" WHERE "team_id" = $1 AND "id" = $2 RETURNING "id"`, [
        teamId,
        triggerId,
      ]),
    );
    return rows.length > 0;
  }

  async triggersOfType(type: TeamTriggerRecord['type']): Promise<TeamTriggerRecord[]> {
    const rows: Row[] = await this.ds.query(`SELECT * FROM "team_trigger" WHERE "type" = $1 ORDER BY "created_at"`, [
      type,
    ]);
    return rows.map(toTrigger);
  }

  async advanceTrigger(triggerId: string, fromMs: number, toMs: number | null): Promise<boolean> {
    const rows = returningRows(
      await this.ds.query(
        `UPDATE "team_trigger" SET "next_ms" = $3 WHERE "id" = $1 AND "next_ms" = $2 RETURNING "id"`,
        [triggerId, fromMs, toMs],
      ),
    );
    return rows.length > 0;
  }
}
