import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** An installed digital human. */
@Entity({ name: 'app' })
@Index('IDX_app_space_id', ['spaceId'])
@Index('IDX_app_status', ['status'])
export class AppEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  /** null: global (every workspace). Not a foreign key: deleting a space deletes its apps in code. */
  @Column({ name: 'space_id', type: 'text', nullable: true })
  spaceId: string | null;

  /**
   * `<space or *>:<author>/<name>` while installed, null once uninstalled: one install of a
   * digital human per place, settled by the unique index even when two installs race.
   */
  @Index('UQ_app_install_key', { unique: true })
  @Column({ name: 'install_key', type: 'text', nullable: true })
  installKey: string | null;

  @Column({ type: 'jsonb' })
  spec: Record<string, unknown>;

  /** active | paused | waiting_user | needs_login | error | uninstalled */
  @Column({ type: 'text' })
  status: string;

  @Column({ name: 'user_config', type: 'jsonb' })
  userConfig: Record<string, unknown>;

  @Column({ name: 'user_overrides', type: 'jsonb' })
  userOverrides: Record<string, unknown>;

  /** `{granted: [], denied: []}` */
  @Column({ type: 'jsonb' })
  permissions: { granted: string[]; denied: string[] };

  /** auto | notify | manual */
  @Column({ name: 'upgrade_strategy', type: 'text' })
  upgradeStrategy: string;

  @Column({ name: 'built_in', type: 'boolean', default: false })
  builtIn: boolean;

  @Column({ name: 'running_count', type: 'integer', default: 0 })
  runningCount: number;

  @Column({ name: 'next_run_at_ms', type: 'bigint', nullable: true })
  nextRunAtMs: string | null;

  @Column({ name: 'last_run_at_ms', type: 'bigint', nullable: true })
  lastRunAtMs: string | null;

  /** ok | error | skipped */
  @Column({ name: 'last_status', type: 'text', nullable: true })
  lastStatus: string | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ name: 'pending_escalation_id', type: 'text', nullable: true })
  pendingEscalationId: string | null;

  @CreateDateColumn({ name: 'installed_at', type: 'timestamptz' })
  installedAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'uninstalled_at', type: 'timestamptz', nullable: true })
  uninstalledAt: Date | null;
}
