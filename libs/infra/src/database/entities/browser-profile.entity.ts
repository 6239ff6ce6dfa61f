import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A browser profile (a space's cookie jar): Playwright storage state, encrypted (libs/infra/src/browser/profile-state.ts). */
@Entity({ name: 'browser_profile' })
export class BrowserProfileEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'PK_browser_profile' })
  profile: string;

  /** AES-256-GCM of the stored profile; never readable without SVC_SECRETS_KEY. */
  @Column({ type: 'bytea' })
  state: Buffer;

  /** Epoch milliseconds of the last save. */
  @Column({ name: 'updated_ms', type: 'bigint' })
  updatedMs: string;
}
