import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Store sources, cached catalogs and install records (generated from the entities, reviewed). */
export class Store1764900000000 implements MigrationInterface {
  name = 'Store1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "store_source" ("id" text NOT NULL, "name" text NOT NULL, "url" text NOT NULL, "enabled" boolean NOT NULL, "is_default" boolean NOT NULL, "source_type" text, "adapter_config" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_store_source" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE UNIQUE INDEX "UQ_store_source_url" ON "store_source" ("url") `);
    await q.query(
      `CREATE TABLE "store_index" ("registry_id" text NOT NULL, "revision" integer NOT NULL, "layout" text, "validators" jsonb NOT NULL, "entries" jsonb NOT NULL, "skipped" integer NOT NULL, "error" text, "checked_at_ms" bigint, CONSTRAINT "PK_store_index" PRIMARY KEY ("registry_id"))`,
    );
    await q.query(
      `CREATE TABLE "store_install" ("app_id" uuid NOT NULL, "registry_id" text, "slug" text, "author_spec" jsonb NOT NULL, "skills" jsonb NOT NULL, "ignored_versions" jsonb NOT NULL, CONSTRAINT "PK_store_install" PRIMARY KEY ("app_id"))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "store_install"`);
    await q.query(`DROP TABLE "store_index"`);
    await q.query(`DROP TABLE "store_source"`);
  }
}
