import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A schedule subscription's next occurrence (the source its delayed job is rebuilt from). */
@Entity({ name: 'trigger_schedule' })
export class TriggerScheduleEntity {
  @PrimaryColumn({ name: 'app_id', type: 'uuid', primaryKeyConstraintName: 'PK_trigger_schedule' })
  appId: string;

  @PrimaryColumn({ name: 'subscription_id', type: 'text', primaryKeyConstraintName: 'PK_trigger_schedule' })
  subscriptionId: string;

  @Column({ type: 'text' })
  signature: string;

  /** Epoch milliseconds. */
  @Column({ name: 'next_ms', type: 'bigint' })
  nextMs: string;
}

/** A claimed trigger occurrence (webhook delivery, file burst): one run each, whichever replica. */
@Entity({ name: 'trigger_claim' })
@Index('IDX_trigger_claim_claimed_at', ['claimedAtMs'])
export class TriggerClaimEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'PK_trigger_claim' })
  key: string;

  @Column({ name: 'app_id', type: 'uuid' })
  appId: string;

  /** Epoch milliseconds. */
  @Column({ name: 'claimed_at_ms', type: 'bigint' })
  claimedAtMs: string;
}
