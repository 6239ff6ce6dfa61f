import { Column, CreateDateColumn, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { SpaceEntity } from './space.entity.js';

@Entity({ name: 'conversation' })
@Index('IDX_conversation_space_updated', ['spaceId', 'updatedAt'])
export class ConversationEntity {
  /** A UUID, `app-chat:<appId>` or a caller's thread id (conversation-rules: isConversationId). */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'PK_conversation' })
  id: string;

  @ForeignKey(() => SpaceEntity, { name: 'FK_conversation_space', onDelete: 'CASCADE' })
  @Column({ name: 'space_id', type: 'text' })
  spaceId: string;

  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'boolean', default: false })
  starred: boolean;

  @Column({ type: 'boolean', default: false })
  ephemeral: boolean;

  /** The digital human whose thread this is (chat thread or runs); null for the space's own conversations. */
  @Index('IDX_conversation_app')
  @Column({ name: 'app_id', type: 'text', nullable: true })
  appId: string | null;

  @Column({ name: 'reasoning_effort', type: 'text', nullable: true })
  reasoningEffort: string | null;

  @Column({ name: 'model_source_id', type: 'text', nullable: true })
  modelSourceId: string | null;

  @Column({ name: 'model_id', type: 'text', nullable: true })
  modelId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Set explicitly (appends, title, pin), not on every write: starring does not reorder. */
  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
