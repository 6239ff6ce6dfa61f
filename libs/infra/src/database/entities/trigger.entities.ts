import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

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

/**
 * A claimed schedule occurrence until its run started (`settled_at_ms`): a claim whose holder
 * died first is taken over (`attempt` + 1) once its lease (`claimed_at_ms`) ran out.
 */
@Entity({ name: 'trigger_occurrence' })
@Index('IDX_trigger_occurrence_claimed_at', ['claimedAtMs'])
export class TriggerOccurrenceEntity {
  /** `occurrenceJobId(app, subscription, scheduled time)`. */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'PK_trigger_occurrence' })
  key: string;

  @Column({ name: 'app_id', type: 'uuid' })
  appId: string;

  @Column({ name: 'subscription_id', type: 'text' })
  subscriptionId: string;

  /** Epoch milliseconds. */
  @Column({ name: 'scheduled_ms', type: 'bigint' })
  scheduledMs: string;

  @Column({ type: 'integer' })
  attempt: number;

  /** Epoch milliseconds: the current holder's lease began. */
  @Column({ name: 'claimed_at_ms', type: 'bigint' })
  claimedAtMs: string;

  /** Epoch milliseconds: a holder passed the fence and began starting the run. */
  @Column({ name: 'started_at_ms', type: 'bigint', nullable: true })
  startedAtMs: string | null;

  /** Epoch milliseconds: the run started or the tick was skipped. */
  @Column({ name: 'settled_at_ms', type: 'bigint', nullable: true })
  settledAtMs: string | null;
}

/**
 * An accepted delivery (webhook, file batch) waiting for its app's next run; they start one
 * run each, one at a time per app, in `seq` order. The row goes once its run started.
 */
@Entity({ name: 'trigger_delivery' })
@Index('IDX_trigger_delivery_app_seq', ['appId', 'seq'])
export class TriggerDeliveryEntity {
  @PrimaryGeneratedColumn('increment', { type: 'bigint', primaryKeyConstraintName: 'PK_trigger_delivery' })
  seq: string;

  @Column({ name: 'app_id', type: 'uuid' })
  appId: string;

  @Column({ name: 'subscription_id', type: 'text' })
  subscriptionId: string;

  /** `webhook` or `file`. */
  @Column({ type: 'text' })
  kind: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId: string;

  /** The run's trigger data. */
  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  /** Epoch milliseconds. */
  @Column({ name: 'received_ms', type: 'bigint' })
  receivedMs: string;

  /** Epoch milliseconds: a dispatcher began starting its run. */
  @Column({ name: 'started_ms', type: 'bigint', nullable: true })
  startedMs: string | null;
}

/** Deliveries refused while an app's queue was full, until one `run_skipped` entry reports them. */
@Entity({ name: 'trigger_delivery_refusal' })
export class TriggerDeliveryRefusalEntity {
  @PrimaryColumn({ name: 'app_id', type: 'uuid', primaryKeyConstraintName: 'PK_trigger_delivery_refusal' })
  appId: string;

  @Column({ type: 'integer' })
  refused: number;

  /** Epoch milliseconds. */
  @Column({ name: 'first_ms', type: 'bigint' })
  firstMs: string;

  /** Epoch milliseconds. */
  @Column({ name: 'last_ms', type: 'bigint' })
  lastMs: string;
}
