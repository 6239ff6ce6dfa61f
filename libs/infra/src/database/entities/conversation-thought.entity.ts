import { Column, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { ConversationMessageEntity } from './conversation-message.entity.js';

/** The reasoning records of a message, in order; the thought itself is kept as JSON. */
@Entity({ name: 'conversation_thought' })
export class ConversationThoughtEntity {
  @ForeignKey(() => ConversationMessageEntity, { name: 'FK_conversation_thought_message', onDelete: 'CASCADE' })
  @PrimaryColumn({ name: 'message_id', type: 'uuid', primaryKeyConstraintName: 'PK_conversation_thought' })
  messageId: string;

  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'PK_conversation_thought' })
  position: number;

  @Column({ type: 'jsonb' })
  data: Record<string, unknown>;
}
