import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Turns record their kind (chat, app-chat, app-run); every turn before this was a chat. */
export class TurnKind1764000000000 implements MigrationInterface {
  name = 'TurnKind1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "agent_turn" ADD "kind" text NOT NULL DEFAULT 'chat'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "agent_turn" DROP COLUMN "kind"`);
  }
}
