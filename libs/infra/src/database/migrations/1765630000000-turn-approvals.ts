import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A turn can hold a tool call for a person's answer (tool approvals): the call, then the decision. */
export class TurnApprovals1765630000000 implements MigrationInterface {
  name = 'TurnApprovals1765630000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "agent_turn" ADD "pending_approval" jsonb`);
    await q.query(`ALTER TABLE "agent_turn" ADD "approval_decision" jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "agent_turn" DROP COLUMN "approval_decision"`);
    await q.query(`ALTER TABLE "agent_turn" DROP COLUMN "pending_approval"`);
  }
}
