import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'space' })
export class SpaceEntity {
  /** A UUID, or the fixed id of the temporary space. */
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  icon: string;

  @Column({ type: 'text', nullable: true })
  color: string | null;

  /** Working folder: relative to the data folder when inside it (`spaces/<id>`, `temp`), else absolute. */
  @Column({ type: 'text' })
  path: string;

  @Column({ name: 'is_temp', type: 'boolean', default: false })
  isTemp: boolean;

  /** Whether the server created the folder (only then does deleting the space remove it). */
  @Column({ name: 'owns_folder', type: 'boolean', default: false })
  ownsFolder: boolean;

  @Index('IDX_space_sort_order')
  @Column({ name: 'sort_order', type: 'integer' })
  sortOrder: number;

  @Column({ type: 'jsonb' })
  preferences: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
