import type { DataSource } from 'typeorm';
import type { ChannelState, ChatType, GuestPolicy, ReplyScope } from '#contracts/channels.js';
import {
  type ChannelInstanceRecord,
  ChannelRepository,
  type ChannelThreadRecord,
  type InstanceChanges,
} from '#core/ports/channel.repository.port.js';
import { returningRows } from '../database/returning-rows.js';

type Row = Record<string, unknown>;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(v as string));
const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

const toInstance = (r: Row): ChannelInstanceRecord => ({
  id: r.id as string,
  type: r.type as string,
  name: r.name as string,
  enabled: r.enabled as boolean,
  appId: r.app_id as string,
  teamId: (r.team_id as string | null) ?? null,
  config: json<Record<string, unknown>>(r.config) ?? {},
  replyScope: r.reply_scope as ReplyScope,
  owners: json<string[]>(r.owners) ?? [],
  guestPolicy: r.guest_policy as GuestPolicy,
  streaming: r.streaming as boolean,
  state: r.state as ChannelState,
  reason: (r.reason as string | null) ?? null,
  cursor: (r.cursor as string | null) ?? null,
  createdAt: date(r.created_at),
  updatedAt: date(r.updated_at),
});

const toThread = (r: Row): ChannelThreadRecord => ({
  instanceId: r.instance_id as string,
  chatId: r.chat_id as string,
  appId: r.app_id as string,
  channel: r.channel as string,
  chatType: r.chat_type as ChatType,
  conversationId: r.conversation_id as string,
  displayName: r.display_name as string,
  customName: (r.custom_name as string | null) ?? null,
  proactive: r.proactive as boolean,
  lastMessageAt: r.last_message_at === null || r.last_message_at === undefined ? null : date(r.last_message_at),
  peerId: (r.peer_id as string | null) ?? null,
});

const INSTANCE_COLUMNS: Record<keyof InstanceChanges, string> = {
  name: 'name',
  enabled: 'enabled',
  appId: 'app_id',
  teamId: 'team_id',
  config: 'config',
  replyScope: 'reply_scope',
  owners: 'owners',
  guestPolicy: 'guest_policy',
  streaming: 'streaming',
};

/** Message channels in Postgres (embedded or not): the tables of migration Channels1765800000000. */
export class TypeormChannelRepository extends ChannelRepository {
  constructor(private readonly ds: DataSource) {
    super();
  }

  async listInstances(): Promise<ChannelInstanceRecord[]> {
    const rows = (await this.ds.query(`SELECT * FROM channel_instance ORDER BY created_at, id`)) as Row[];
    return rows.map(toInstance);
  }

  async findInstance(id: string): Promise<ChannelInstanceRecord | null> {
    const rows = (await this.ds.query(`SELECT * FROM channel_instance WHERE id = $1`, [id])) as Row[];
    return rows[0] ? toInstance(rows[0]) : null;
  }

  async createInstance(
    r: Omit<ChannelInstanceRecord, 'createdAt' | 'updatedAt' | 'cursor'>,
  ): Promise<ChannelInstanceRecord> {
    const rows = (await this.ds.query(
      `INSERT INTO channel_instance (id, type, name, enabled, app_id, team_id, config, reply_scope, owners, guest_policy, streaming, state, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9::jsonb, $10, $11, $12, $13) RETURNING *`,
      [
        r.id,
        r.type,
        r.name,
        r.enabled,
        r.appId,
        r.teamId,
        JSON.stringify(r.config),
        r.replyScope,
        JSON.stringify(r.owners),
        r.guestPolicy,
        r.streaming,
        r.state,
        r.reason,
      ],
    )) as Row[];
    return toInstance(rows[0]!);
  }

  async updateInstance(id: string, changes: InstanceChanges): Promise<ChannelInstanceRecord | null> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [key, value] of Object.entries(changes) as Array<[keyof InstanceChanges, unknown]>) {
      if (value === undefined) continue;
      const column = INSTANCE_COLUMNS[key];
      const isJson = key === 'config' || key === 'owners';
      params.push(isJson ? JSON.stringify(value) : value);
      sets.push(`${column} = $${params.length}${isJson ? '::jsonb' : ''}`);
    }
    sets.push('updated_at = now()');
    const result = await this.ds.query(
      `UPDATE channel_instance SET ${sets.join(', ')} WHERE id = $1 RETURNING *`,
      params,
    );
    const rows = returningRows<Row>(result);
    return rows[0] ? toInstance(rows[0]) : null;
  }

  async deleteInstance(id: string): Promise<boolean> {
    const result = await this.ds.query(`DELETE FROM channel_instance WHERE id = $1 RETURNING id`, [id]);
    return returningRows(result).length > 0;
  }

  async setState(id: string, state: ChannelState, reason: string | null): Promise<ChannelInstanceRecord | null> {
    const result = await this.ds.query(
      `UPDATE channel_instance SET state = $2, reason = $3, updated_at = now()
       WHERE id = $1 AND (state IS DISTINCT FROM $2 OR reason IS DISTINCT FROM $3) RETURNING *`,
      [id, state, reason],
    );
    const rows = returningRows<Row>(result);
    return rows[0] ? toInstance(rows[0]) : null;
  }

  async claimOwner(id: string, userId: string): Promise<boolean> {
    const result = await this.ds.query(
      `UPDATE channel_instance SET owners = $2::jsonb, updated_at = now()
       WHERE id = $1 AND owners = '[]'::jsonb RETURNING id`,
      [id, JSON.stringify([userId])],
    );
    return returningRows(result).length > 0;
  }

  async setCursor(id: string, cursor: string): Promise<void> {
    await this.ds.query(`UPDATE channel_instance SET cursor = $2 WHERE id = $1`, [id, cursor]);
  }

  async claim(key: string): Promise<boolean> {
    const rows = (await this.ds.query(
      `INSERT INTO channel_claim (key) VALUES ($1) ON CONFLICT (key) DO NOTHING RETURNING key`,
      [key],
    )) as Row[];
    return rows.length > 0;
  }

  async claimMany(keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = (await this.ds.query(
      `INSERT INTO channel_claim (key) SELECT unnest($1::text[]) ON CONFLICT (key) DO NOTHING RETURNING key`,
      [keys],
    )) as { key: string }[];
    return new Set(rows.map((r) => r.key));
  }

  async claimed(key: string): Promise<boolean> {
    const rows = (await this.ds.query(`SELECT 1 FROM channel_claim WHERE key = $1`, [key])) as Row[];
    return rows.length > 0;
  }

  async release(key: string): Promise<void> {
    await this.ds.query(`DELETE FROM channel_claim WHERE key = $1`, [key]);
  }

  async touchThread(t: Omit<ChannelThreadRecord, 'customName' | 'proactive'>): Promise<ChannelThreadRecord> {
    const rows = (await this.ds.query(
      `INSERT INTO channel_thread (instance_id, chat_id, app_id, channel, chat_type, conversation_id, display_name, last_message_at, peer_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (instance_id, chat_id) DO UPDATE SET app_id = EXCLUDED.app_id, channel = EXCLUDED.channel,
         chat_type = EXCLUDED.chat_type, conversation_id = EXCLUDED.conversation_id,
         display_name = EXCLUDED.display_name, last_message_at = EXCLUDED.last_message_at,
         peer_id = COALESCE(EXCLUDED.peer_id, channel_thread.peer_id)
       RETURNING *`,
      [
        t.instanceId,
        t.chatId,
        t.appId,
        t.channel,
        t.chatType,
        t.conversationId,
        t.displayName,
        t.lastMessageAt,
        t.peerId,
      ],
    )) as Row[];
    return toThread(rows[0]!);
  }

  async listThreads(appId?: string): Promise<ChannelThreadRecord[]> {
    const rows = (
      appId === undefined
        ? await this.ds.query(`SELECT * FROM channel_thread ORDER BY last_message_at DESC NULLS LAST, chat_id`)
        : await this.ds.query(
            `SELECT * FROM channel_thread WHERE app_id = $1 ORDER BY last_message_at DESC NULLS LAST, chat_id`,
            [appId],
          )
    ) as Row[];
    return rows.map(toThread);
  }

  async findThread(instanceId: string, chatId: string): Promise<ChannelThreadRecord | null> {
    const rows = (await this.ds.query(`SELECT * FROM channel_thread WHERE instance_id = $1 AND chat_id = $2`, [
      instanceId,
      chatId,
    ])) as Row[];
    return rows[0] ? toThread(rows[0]) : null;
  }

  async updateThread(
    instanceId: string,
    chatId: string,
    changes: Partial<Pick<ChannelThreadRecord, 'proactive' | 'customName'>>,
  ): Promise<ChannelThreadRecord | null> {
    const sets: string[] = [];
    const params: unknown[] = [instanceId, chatId];
    if (changes.proactive !== undefined) {
      params.push(changes.proactive);
      sets.push(`proactive = $${params.length}`);
    }
    if (changes.customName !== undefined) {
      params.push(changes.customName);
      sets.push(`custom_name = $${params.length}`);
    }
    if (sets.length === 0) return this.findThread(instanceId, chatId);
    const result = await this.ds.query(
      `UPDATE channel_thread SET ${sets.join(', ')} WHERE instance_id = $1 AND chat_id = $2 RETURNING *`,
      params,
    );
    const rows = returningRows<Row>(result);
    return rows[0] ? toThread(rows[0]) : null;
  }

  async removeThread(instanceId: string, chatId: string): Promise<boolean> {
    const result = await this.ds.query(
      `DELETE FROM channel_thread WHERE instance_id = $1 AND chat_id = $2 RETURNING chat_id`,
      [instanceId, chatId],
    );
    return returningRows(result).length > 0;
  }
}
