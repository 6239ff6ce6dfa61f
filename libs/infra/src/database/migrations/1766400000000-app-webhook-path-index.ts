import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A GIN index on each app's `spec -> 'subscriptions'`: a webhook delivery finds the app of its
 * path by containment (`TypeormAppRepository.list` with `webhookPath`), which without it reads
 * every installed app's spec.
 */
export class AppWebhookPathIndex1766400000000 implements MigrationInterface {
  name = 'AppWebhookPathIndex1766400000000';
  /** An index only: code without it answers the same, more slowly. */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "IDX_app_spec_subscriptions" ON "app" USING GIN (("spec" -> 'subscriptions') jsonb_path_ops)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_app_spec_subscriptions"`);
  }
}
