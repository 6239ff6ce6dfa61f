import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Knowledge bases (docs/api/knowledge.md): the bases, their bindings to spaces and digital
 * humans, their sources, each source's chunks with a keyword index (`tsvector` + GIN, lexemes
 * made by the server, so every language and both database modes index alike), and the ingestion
 * status of each base. No TypeORM entities: the tables are reached with SQL only
 * (libs/infra/src/knowledge/typeorm-knowledge.repository.ts); the vector column is added by
 * KnowledgeVectors1766100000000.
 */
export class Knowledge1765900000000 implements MigrationInterface {
  name = 'Knowledge1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "knowledge_base" ("id" uuid NOT NULL, "name" text NOT NULL, "icon" text, "description" text, "status" text NOT NULL DEFAULT 'active', "is_default" boolean NOT NULL DEFAULT false, "embedding" jsonb, "generation" integer NOT NULL DEFAULT 0, "last_ingest_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_knowledge_base" PRIMARY KEY ("id"))`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "UQ_knowledge_base_default" ON "knowledge_base" ("is_default") WHERE "is_default"`,
    );
    await q.query(
      `CREATE TABLE "knowledge_binding" ("kb_id" uuid NOT NULL, "kind" text NOT NULL, "target_id" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_knowledge_binding" PRIMARY KEY ("kb_id", "kind", "target_id"))`,
    );
    await q.query(`CREATE INDEX "IDX_knowledge_binding_target" ON "knowledge_binding" ("kind", "target_id")`);
    await q.query(
      `CREATE TABLE "knowledge_source" ("id" uuid NOT NULL, "kb_id" uuid NOT NULL, "rel_path" text NOT NULL, "name" text NOT NULL, "origin" text NOT NULL DEFAULT 'raw', "size" bigint NOT NULL, "content_hash" text NOT NULL, "indexed_hash" text, "state" text NOT NULL DEFAULT 'pending', "error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_knowledge_source" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE UNIQUE INDEX "UQ_knowledge_source_path" ON "knowledge_source" ("kb_id", "rel_path")`);
    await q.query(
      `CREATE TABLE "knowledge_chunk" ("id" uuid NOT NULL, "kb_id" uuid NOT NULL, "source_id" uuid NOT NULL, "ord" integer NOT NULL, "heading" text, "text" text NOT NULL, "tsv" tsvector NOT NULL, CONSTRAINT "PK_knowledge_chunk" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "IDX_knowledge_chunk_source" ON "knowledge_chunk" ("source_id", "ord")`);
    await q.query(`CREATE INDEX "IDX_knowledge_chunk_kb" ON "knowledge_chunk" ("kb_id")`);
    await q.query(`CREATE INDEX "IDX_knowledge_chunk_tsv" ON "knowledge_chunk" USING GIN ("tsv")`);
    await q.query(
      `CREATE TABLE "knowledge_ingest" ("kb_id" uuid NOT NULL, "batch_id" text NOT NULL, "total" integer NOT NULL DEFAULT 0, "completed" integer NOT NULL DEFAULT 0, "waiting" text[] NOT NULL DEFAULT '{}', "current" text, "phase" text NOT NULL DEFAULT 'idle', "errors" jsonb NOT NULL DEFAULT '[]', "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_knowledge_ingest" PRIMARY KEY ("kb_id"))`,
    );
    await q.query(
      `ALTER TABLE "knowledge_binding" ADD CONSTRAINT "FK_knowledge_binding_kb" FOREIGN KEY ("kb_id") REFERENCES "knowledge_base"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "knowledge_source" ADD CONSTRAINT "FK_knowledge_source_kb" FOREIGN KEY ("kb_id") REFERENCES "knowledge_base"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "knowledge_chunk" ADD CONSTRAINT "FK_knowledge_chunk_source" FOREIGN KEY ("source_id") REFERENCES "knowledge_source"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "knowledge_ingest" ADD CONSTRAINT "FK_knowledge_ingest_kb" FOREIGN KEY ("kb_id") REFERENCES "knowledge_base"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "knowledge_ingest"`);
    await q.query(`DROP TABLE "knowledge_chunk"`);
    await q.query(`DROP TABLE "knowledge_source"`);
    await q.query(`DROP TABLE "knowledge_binding"`);
    await q.query(`DROP TABLE "knowledge_base"`);
  }
}
