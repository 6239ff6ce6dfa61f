import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A direct chat's other party on its thread (docs/api/channels.md, "Escalations"): a digital
 * human's question goes to its owners' direct chats, which are found by it. Existing threads
 * learn it from their next message.
 */
export class ChannelThreadPeer1766100000100 implements MigrationInterface {
  name = 'ChannelThreadPeer1766100000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "channel_thread" ADD "peer_id" text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "channel_thread" DROP COLUMN "peer_id"`);
  }
}
