import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each knowledge base gets a `chunk_version`, bumped in the transaction of every write to its
 * chunks, so a server's in-memory vector index of the base (docs/api/knowledge.md, "Design note
 * (vectors without pgvector)") sees with one indexed read whether another replica changed them.
 */
export class KnowledgeChunkVersion1766200000000 implements MigrationInterface {
  name = 'KnowledgeChunkVersion1766200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "knowledge_base" ADD "chunk_version" bigint NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "knowledge_base" DROP COLUMN "chunk_version"`);
  }
}
