import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** One entry of a digital human's activity feed; deleted with its app. */
@Entity({ name: 'app_activity' })
@Index('IDX_app_activity_app_ts', ['appId', 'ts'])
export class AppActivityEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'app_id', type: 'uuid' })
  appId: string;

  @Column({ name: 'run_id', type: 'text', nullable: true })
  runId: string | null;

  /** run_complete | run_error | run_skipped | milestone | output | escalation */
  @Column({ type: 'text' })
  type: string;

  /** Epoch milliseconds. */
  @Column({ type: 'bigint' })
  ts: string;

  @Column({ type: 'jsonb' })
  content: Record<string, unknown>;
}
