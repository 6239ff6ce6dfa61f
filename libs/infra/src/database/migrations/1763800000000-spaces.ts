import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Spaces1763800000000 implements MigrationInterface {
  name = 'Spaces1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "space" ("id" text NOT NULL, "name" text NOT NULL, "icon" text NOT NULL, "color" text, "path" text NOT NULL, "is_temp" boolean NOT NULL DEFAULT false, "sort_order" integer NOT NULL, "preferences" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_space" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "IDX_space_sort_order" ON "space" ("sort_order")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "space"`);
  }
}
