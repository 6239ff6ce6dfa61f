import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** A Store registry source: the built-ins of SVC_STORE_SOURCES and the user's own. */
@Entity({ name: 'store_source' })
@Index('UQ_store_source_url', ['url'], { unique: true })
export class StoreSourceEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ name: 'is_default', type: 'boolean' })
  isDefault: boolean;

  @Column({ name: 'source_type', type: 'text', nullable: true })
  sourceType: string | null;

  @Column({ name: 'adapter_config', type: 'jsonb', nullable: true })
  adapterConfig: Record<string, unknown> | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** A source's catalog as last read, so every replica serves the same and a restart needs no network. */
@Entity({ name: 'store_index' })
export class StoreIndexEntity {
  @PrimaryColumn({ name: 'registry_id', type: 'text' })
  registryId: string;

  @Column({ type: 'integer' })
  revision: number;

  @Column({ type: 'text', nullable: true })
  layout: string | null;

  @Column({ type: 'jsonb' })
  validators: Record<string, { etag?: string; lastModified?: string }>;

  @Column({ type: 'jsonb' })
  entries: unknown[];

  @Column({ type: 'integer' })
  skipped: number;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** Epoch milliseconds of the last good read or revalidation. */
  @Column({ name: 'checked_at_ms', type: 'bigint', nullable: true })
  checkedAtMs: string | null;
}

/** Where an installed app came from, the author's spec as installed, and its skill files. */
@Entity({ name: 'store_install' })
export class StoreInstallEntity {
  @PrimaryColumn({ name: 'app_id', type: 'uuid' })
  appId: string;

  @Column({ name: 'registry_id', type: 'text', nullable: true })
  registryId: string | null;

  @Column({ type: 'text', nullable: true })
  slug: string | null;

  @Column({ name: 'author_spec', type: 'jsonb' })
  authorSpec: Record<string, unknown>;

  @Column({ type: 'jsonb' })
  skills: unknown[];

  @Column({ name: 'ignored_versions', type: 'jsonb' })
  ignoredVersions: string[];
}
