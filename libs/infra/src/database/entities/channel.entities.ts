import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';

/**
 * A message channel instance (docs/api/channels.md): one platform account bound to one digital
 * human. `config` holds the credentials (never answered unmasked). Not tied to the app's row: a
 * message for a deleted app is ignored and logged, the instance stays until it is deleted.
 */
@Entity({ name: 'channel_instance' })
@Index('IDX_channel_instance_app', ['appId'])
export class ChannelInstanceEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_channel_instance' })
  id: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  @Column({ name: 'app_id', type: 'uuid' })
  appId: string;

  @Column({ name: 'team_id', type: 'uuid', nullable: true })
  teamId: string | null;

  @Column({ type: 'jsonb', default: () => `'{}'` })
  config: Record<string, unknown>;

  @Column({ name: 'reply_scope', type: 'text' })
  replyScope: string;

  @Column({ type: 'jsonb', default: () => `'[]'` })
  owners: string[];

  @Column({ name: 'guest_policy', type: 'text' })
  guestPolicy: string;

  @Column({ type: 'boolean', default: false })
  streaming: boolean;

  @Column({ type: 'text' })
  state: string;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  /** A connection-style transport's position (Telegram's update offset), kept by the lease holder. */
  @Column({ type: 'text', nullable: true })
  cursor: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}

/** A chat of an instance: its thread (a conversation) and how the person set it up. */
@Entity({ name: 'channel_thread' })
@Index('IDX_channel_thread_app', ['appId'])
export class ChannelThreadEntity {
  @ForeignKey(() => ChannelInstanceEntity, { name: 'FK_channel_thread_instance', onDelete: 'CASCADE' })
  @PrimaryColumn({ name: 'instance_id', type: 'uuid', primaryKeyConstraintName: 'PK_channel_thread' })
  instanceId: string;

  @PrimaryColumn({ name: 'chat_id', type: 'text', primaryKeyConstraintName: 'PK_channel_thread' })
  chatId: string;

  @Column({ name: 'app_id', type: 'uuid' })
  appId: string;

  @Column({ type: 'text' })
  channel: string;

  @Column({ name: 'chat_type', type: 'text' })
  chatType: string;

  @Column({ name: 'conversation_id', type: 'text' })
  conversationId: string;

  @Column({ name: 'display_name', type: 'text' })
  displayName: string;

  @Column({ name: 'custom_name', type: 'text', nullable: true })
  customName: string | null;

  @Column({ type: 'boolean', default: false })
  proactive: boolean;

  @Column({ name: 'last_message_at', type: 'timestamptz', nullable: true })
  lastMessageAt: Date | null;

  /** A direct chat's other party (platform user id): escalations go to the owners' chats. */
  @Column({ name: 'peer_id', type: 'text', nullable: true })
  peerId: string | null;
}

/**
 * Work that happens once across replicas: a platform message starting a turn
 * (`msg:<instance>:<message id>`), a run's result pushed to a thread (`push:<run>:<instance>:<chat>`).
 */
@Entity({ name: 'channel_claim' })
export class ChannelClaimEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'PK_channel_claim' })
  key: string;

  @Column({ name: 'claimed_at', type: 'timestamptz', default: () => 'now()' })
  claimedAt: Date;
}
