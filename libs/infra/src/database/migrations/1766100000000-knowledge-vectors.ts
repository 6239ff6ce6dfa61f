import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Knowledge bases get vectors (docs/api/knowledge.md, "Embeddings and hybrid search"): each chunk's
 * embedding as a portable `real[]` (unit length; the same column in the embedded database and on
 * any Postgres, with or without pgvector, so `migrate-to-postgres` copies it as it is), the
 * embedding model each source's chunks were embedded with (a changed model re-embeds, an unchanged
 * source is not embedded again), and why a base's embedding model cannot be used.
 */
export class KnowledgeVectors1766100000000 implements MigrationInterface {
  name = 'KnowledgeVectors1766100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "knowledge_chunk" ADD "embedding" real[]`);
    await q.query(`ALTER TABLE "knowledge_source" ADD "embedding_key" text`);
    await q.query(`ALTER TABLE "knowledge_base" ADD "embedding_error" text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "knowledge_base" DROP COLUMN "embedding_error"`);
    await q.query(`ALTER TABLE "knowledge_source" DROP COLUMN "embedding_key"`);
    await q.query(`ALTER TABLE "knowledge_chunk" DROP COLUMN "embedding"`);
  }
}
