import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Keyword search's word counts kept at write time (docs/api/knowledge.md, "Search"):
 * `knowledge_lexeme` holds, per knowledge base and lexeme, how many of the base's chunks hold it,
 * and `knowledge_base.chunk_count` the base's chunks, so a query's word weights (BM25's inverse
 * document frequency) are one indexed read instead of counting matches in the chunk index on every
 * search. Every transaction that inserts or deletes chunks adds or subtracts exactly the chunks it
 * wrote (TypeormKnowledgeRepository), under the base's row lock; a deleted base takes its rows
 * along (cascade).
 *
 * `knowledge_recount(kb)` recounts one base from its chunks (the back-fill below; the bench after
 * seeding chunks straight into the database; tests comparing it with the kept counts). It takes the
 * base's row lock first, like every writer of the counts, so a recount and an ingestion in progress
 * never miss or double each other's chunks.
 *
 * Not backward compatible: older code would write chunks without keeping the counts.
 */
export class KnowledgeLexemeCounts1766500000000 implements MigrationInterface {
  name = 'KnowledgeLexemeCounts1766500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "knowledge_base" ADD "chunk_count" bigint NOT NULL DEFAULT 0`);
    await q.query(
      `CREATE TABLE "knowledge_lexeme" ("kb_id" uuid NOT NULL, "lexeme" text NOT NULL, "chunks" integer NOT NULL, CONSTRAINT "PK_knowledge_lexeme" PRIMARY KEY ("kb_id", "lexeme"))`,
    );
    await q.query(
      `ALTER TABLE "knowledge_lexeme" ADD CONSTRAINT "FK_knowledge_lexeme_kb" FOREIGN KEY ("kb_id") REFERENCES "knowledge_base"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await q.query(`
CREATE FUNCTION "knowledge_recount"(p_kb uuid) RETURNS void
LANGUAGE sql AS $fn$
  UPDATE "knowledge_base" SET "chunk_count" = (SELECT count(*) FROM "knowledge_chunk" WHERE "kb_id" = p_kb)
   WHERE "id" = p_kb;
  DELETE FROM "knowledge_lexeme" WHERE "kb_id" = p_kb;
  INSERT INTO "knowledge_lexeme" ("kb_id", "lexeme", "chunks")
  SELECT p_kb, l.lexeme, count(*)
    FROM "knowledge_chunk" c CROSS JOIN LATERAL unnest(tsvector_to_array(c."tsv")) AS l(lexeme)
   WHERE c."kb_id" = p_kb
   GROUP BY l.lexeme;
$fn$`);
    await q.query(`SELECT "knowledge_recount"("id") FROM "knowledge_base"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "knowledge_recount"(uuid)`);
    await q.query(`DROP TABLE "knowledge_lexeme"`);
    await q.query(`ALTER TABLE "knowledge_base" DROP COLUMN "chunk_count"`);
  }
}
