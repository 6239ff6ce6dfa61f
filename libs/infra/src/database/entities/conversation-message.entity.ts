import { Column, CreateDateColumn, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { ConversationEntity } from './conversation.entity.js';

@Entity({ name: 'conversation_message' })
/** Orders the messages of a conversation and makes concurrent appends collide rather than interleave. */
@Index('UQ_conversation_message_position', ['conversationId', 'position'], { unique: true })
// The partial indexes on the run id (ConversationMessageRunIndex1766800000000) and on compaction
// summaries (ConversationMessageCompactionIndex1766900000000): made by their migrations, beyond
// what the decorators can say, so the schema comparison leaves them alone.
@Index('IDX_conversation_message_run', { synchronize: false })
@Index('IDX_conversation_message_compaction', { synchronize: false })
export class ConversationMessageEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_conversation_message' })
  id: string;

  @ForeignKey(() => ConversationEntity, { name: 'FK_conversation_message_conversation', onDelete: 'CASCADE' })
  @Column({ name: 'conversation_id', type: 'text' })
  conversationId: string;

  @Column({ type: 'integer' })
  position: number;

  @Column({ type: 'text' })
  role: string;

  @Column({ type: 'text' })
  content: string;

  /** images, tokenUsage, error and later facts about the message. */
  @Column({ type: 'jsonb' })
  meta: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
