import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Linked folders of knowledge bases (docs/api/knowledge.md, "Linked folders"): a folder of a
 * workspace whose accepted files are the base's sources (origin `linked`), re-read when the
 * watcher reports a change under it. Reached with SQL only, like the other knowledge tables.
 */
export class KnowledgeLinks1766131415926 implements MigrationInterface {
  name = 'KnowledgeLinks1766131415926';
  /** A new table only: a release without it runs unchanged on this schema (its links are not followed). */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "knowledge_link" ("id" uuid NOT NULL, "kb_id" uuid NOT NULL, "space_id" text NOT NULL, "path" text NOT NULL, "label" text, "state" text NOT NULL DEFAULT 'active', "error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_knowledge_link" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "IDX_knowledge_link_kb" ON "knowledge_link" ("kb_id")`);
    await q.query(`CREATE INDEX "IDX_knowledge_link_space" ON "knowledge_link" ("space_id")`);
    await q.query(
      `ALTER TABLE "knowledge_link" ADD CONSTRAINT "FK_knowledge_link_kb" FOREIGN KEY ("kb_id") REFERENCES "knowledge_base"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "knowledge_link"`);
  }
}
