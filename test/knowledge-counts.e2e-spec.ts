import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { DataSource } from 'typeorm';
import { type ChunkRow, KnowledgeRepository } from '#core/knowledge/knowledge.ports.js';
import { tsqueryLiteral, tsvectorLiteral } from '#core/knowledge/lexemes.js';
import { createDataSource, migrateUnderLock } from '#infra/database/database.js';
import { MIGRATIONS } from '#infra/database/schema.js';
import { TypeormKnowledgeRepository } from '#infra/knowledge/typeorm-knowledge.repository.js';
import { type FreshDatabase, freshDatabase } from '#testing/fresh-database.js';
import { testMode } from '#testing/test-env.js';

type Row = Record<string, unknown>;

const chunks = (...texts: string[]): ChunkRow[] =>
  texts.map((text) => ({ heading: null, text, tsv: tsvectorLiteral(text), embedding: null }));

/** A base's kept counts (knowledge_lexeme, chunk_count) and the same counted from its chunks now. */
async function keptAndCounted(ds: DataSource, kbId: string): Promise<{ kept: Row; counted: Row }> {
  const [kept] = (await ds.query(
    `SELECT (SELECT chunk_count::int FROM knowledge_base WHERE id = $1) AS chunks,
            (SELECT coalesce(json_object_agg(lexeme, chunks ORDER BY lexeme), '{}') FROM knowledge_lexeme WHERE kb_id = $1) AS lexemes`,
    [kbId],
  )) as Row[];
  const [counted] = (await ds.query(
    `SELECT (SELECT count(*)::int FROM knowledge_chunk WHERE kb_id = $1) AS chunks,
            (SELECT coalesce(json_object_agg(lexeme, n ORDER BY lexeme), '{}')
               FROM (SELECT l.lexeme, count(*)::int AS n
                       FROM knowledge_chunk c CROSS JOIN LATERAL unnest(tsvector_to_array(c.tsv)) AS l(lexeme)
                      WHERE c.kb_id = $1 GROUP BY l.lexeme) x) AS lexemes`,
    [kbId],
  )) as Row[];
  return { kept: kept!, counted: counted! };
}

async function assertCountsTrue(ds: DataSource, kbId: string, what: string): Promise<Row> {
  const { kept, counted } = await keptAndCounted(ds, kbId);
  assert.deepEqual(kept, counted, `${what}: the kept counts are those of the chunks`);
  // A base's `stats` (in each answer and `tlon:stats-updated`) reads the kept total.
  const stats = await new TypeormKnowledgeRepository(ds, 0).stats(kbId);
  assert.equal(stats.chunkCount, counted.chunks, `${what}: the stats' chunkCount`);
  return kept;
}

/**
 * The word counts keyword search weighs its words by (knowledge_lexeme, knowledge_base.chunk_count;
 * docs/api/knowledge.md, "Search") on a real database: kept in step with the chunks through
 * ingestion, re-ingestion, source removal, clear-relearn and base removal, also when sources of one
 * base are written at once (on Postgres, on several connections), and back-filled by the migration.
 */
describe(`knowledge keyword counts (${testMode()})`, () => {
  let db: FreshDatabase | undefined;
  let ds: DataSource | undefined;
  let repo: TypeormKnowledgeRepository;

  before(async () => {
    db = await freshDatabase();
    ds = createDataSource(db.url, 6);
    await ds.initialize();
    await migrateUnderLock(ds);
    repo = new TypeormKnowledgeRepository(ds, 0);
  });

  after(async () => {
    if (ds?.isInitialized) await ds.destroy().catch(() => undefined);
    await db?.dispose();
  });

  async function source(kbId: string, name: string, hash = 'h1') {
    return repo.upsertSource({ kbId, relPath: name, name, origin: 'raw', size: 10, contentHash: hash });
  }

  it('follow every write to the chunks: ingest, re-ingest, source removal, clear-relearn, base removal', async () => {
    const kb = await repo.create({ id: randomUUID(), name: 'Counts', icon: null, description: null });
    const other = await repo.create({ id: randomUUID(), name: 'Other', icon: null, description: null });
    const a = await source(kb.id, 'a.md');
    const b = await source(kb.id, 'b.md');
    const o = await source(other.id, 'o.md');
    const learned = (rows: ChunkRow[]) => ({ state: 'learned' as const, chunks: rows, embeddingKey: null });
    assert.ok(await repo.indexSource(a.id, 'h1', learned(chunks('The finch sings.', 'The finch and the crow.'))));
    assert.ok(await repo.indexSource(b.id, 'h1', learned(chunks("It's the crow's year: 年假 rules."))));
    assert.ok(await repo.indexSource(o.id, 'h1', learned(chunks('The finch elsewhere.'))));
    const first = await assertCountsTrue(ds!, kb.id, 'ingested');
    assert.equal(first.chunks, 3);
    assert.equal((first.lexemes as Record<string, number>).finch, 2);
    assert.equal((first.lexemes as Record<string, number>).the, 3);

    // The search weighs by them: the rare word's chunk first, and the other base's chunk is not counted.
    const hits = await repo.keywordSearch([kb.id], tsqueryLiteral('the year finch')!, 8);
    assert.deepEqual(
      hits.map((h) => h.sourceName),
      ['b.md', 'a.md', 'a.md'],
    );

    // Re-ingested with other text: the old chunks' words are taken away, the new ones added.
    await source(kb.id, 'a.md', 'h2');
    assert.ok(await repo.indexSource(a.id, 'h2', learned(chunks('A heron.'))));
    const second = await assertCountsTrue(ds!, kb.id, 're-ingested');
    assert.equal((second.lexemes as Record<string, number>).finch, undefined, 'a word no chunk holds has no row');
    assert.ok(await repo.indexSource(a.id, 'h2', { state: 'failed', error: 'broken' }));
    await assertCountsTrue(ds!, kb.id, 'failed on re-ingest');
    assert.ok(await repo.indexSource(a.id, 'h2', learned(chunks('A heron again.', 'Two herons.'))));
    await assertCountsTrue(ds!, kb.id, 'learned again');

    // A source removed (its chunks with it), then clear-relearn.
    assert.ok(await repo.deleteSource(kb.id, 'b.md'));
    const third = await assertCountsTrue(ds!, kb.id, 'source removed');
    assert.equal(third.chunks, 2);
    assert.equal(await repo.deleteSource(kb.id, 'b.md'), null);
    await repo.resetSources(kb.id);
    assert.deepEqual(await assertCountsTrue(ds!, kb.id, 'cleared'), { chunks: 0, lexemes: {} });
    assert.ok(await repo.indexSource(a.id, 'h2', learned(chunks('Relearned heron.'))));
    await assertCountsTrue(ds!, kb.id, 'relearned');

    // The other base was never touched; a base removed takes its counts along.
    assert.equal((await assertCountsTrue(ds!, other.id, 'other base')).chunks, 1);
    assert.ok(await repo.delete(kb.id));
    const [left] = (await ds!.query(`SELECT count(*)::int AS n FROM knowledge_lexeme WHERE kb_id = $1`, [
      kb.id,
    ])) as Row[];
    assert.equal(left!.n, 0);
  });

  it('lose nothing when sources of one base are ingested and removed at once', async () => {
    const kb = await repo.create({ id: randomUUID(), name: 'Busy', icon: null, description: null });
    const sources = await Promise.all(Array.from({ length: 12 }, (_, i) => source(kb.id, `s${i}.md`)));
    const text = (i: number, round: number) =>
      Array.from({ length: 40 }, (_, k) => `shared word${(i * 7 + k + round) % 30} own${i}r${round}`).join(' ');
    for (const round of [0, 1]) {
      const results = await Promise.all(
        // The second round replaces each source's chunks.
        sources.map((s, i) =>
          repo.indexSource(s.id, 'h1', {
            state: 'learned',
            chunks: chunks(text(i, round), `${text(i, round)} more`, 'shared tail'),
            embeddingKey: null,
          }),
        ),
      );
      assert.ok(results.every(Boolean));
      await assertCountsTrue(ds!, kb.id, `round ${round}`);
    }
    await Promise.all([
      ...sources.slice(0, 4).map((s) => repo.deleteSource(kb.id, s.relPath)),
      ...sources
        .slice(4, 8)
        .map((s, i) =>
          repo.indexSource(s.id, 'h1', { state: 'learned', chunks: chunks(text(i, 5)), embeddingKey: null }),
        ),
    ]);
    const kept = await assertCountsTrue(ds!, kb.id, 'removed and re-ingested at once');
    assert.equal(kept.chunks, 4 + 4 * 3);
    await repo.delete(kb.id);
  });

  it('tell a batch end when to analyse the chunk table (embedded: no autovacuum)', async () => {
    const analysing = new TypeormKnowledgeRepository(ds!, 0, true);
    const kb = await repo.create({ id: randomUUID(), name: 'Analysed', icon: null, description: null });
    const s = await source(kb.id, 'big.md');
    const reltuples = async () =>
      Number(
        ((await ds!.query(`SELECT reltuples FROM pg_class WHERE oid = 'knowledge_chunk'::regclass`)) as Row[])[0]!
          .reltuples,
      );
    const many = chunks(...Array.from({ length: 700 }, (_, i) => `chunk ${i} of the big one`));
    assert.ok(await repo.indexSource(s.id, 'h1', { state: 'learned', chunks: many, embeddingKey: null }));
    await repo.markIngested(kb.id);
    const before = await reltuples();
    await analysing.markIngested(kb.id);
    const after = await reltuples();
    assert.ok(after >= 700, `reltuples ${before} → ${after}: analysed`);
    await repo.delete(kb.id);
  });

  it('are back-filled from the chunks a base had before the migration', async () => {
    const old = await freshDatabase();
    const index = MIGRATIONS.findIndex((m) => m.name === 'KnowledgeLexemeCounts1766500000000');
    assert.ok(index > 0);
    const before = createDataSource(old.url, 2, MIGRATIONS.slice(0, index));
    let after: DataSource | undefined;
    try {
      await before.initialize();
      await migrateUnderLock(before);
      const kbId = randomUUID();
      const sourceId = randomUUID();
      await before.query(`INSERT INTO knowledge_base (id, name) VALUES ($1, 'Old')`, [kbId]);
      await before.query(
        `INSERT INTO knowledge_source (id, kb_id, rel_path, name, size, content_hash) VALUES ($1, $2, 'x.md', 'x.md', 1, 'h')`,
        [sourceId, kbId],
      );
      for (const [ord, row] of chunks('The finch sings.', 'The crow.', '年假 rules').entries())
        await before.query(
          `INSERT INTO knowledge_chunk (id, kb_id, source_id, ord, text, tsv) VALUES ($1, $2, $3, $4, $5, $6::tsvector)`,
          [randomUUID(), kbId, sourceId, ord, row.text, row.tsv],
        );
      await before.destroy();
      after = createDataSource(old.url, 2);
      await after.initialize();
      assert.deepEqual(
        await migrateUnderLock(after),
        MIGRATIONS.slice(index).map((m) => m.name),
      );
      const kept = await assertCountsTrue(after, kbId, 'back-filled');
      assert.equal(kept.chunks, 3);
      assert.equal((kept.lexemes as Record<string, number>).the, 2);
    } finally {
      if (before.isInitialized) await before.destroy();
      if (after?.isInitialized) await after.destroy();
      await old.dispose();
    }
  });

  it("answer a turn's candidate bases in one query, as the parts would: space-bound, app-bound, then the default, each once", async () => {
    const make = (name: string) => repo.create({ id: randomUUID(), name, icon: null, description: null });
    const spaceId = randomUUID();
    const appId = randomUUID();
    const [both, ofSpace, ofApp, byDefault, elsewhere] = [
      await make('Both'),
      await make('Space'),
      await make('App'),
      await make('Default'),
      await make('Elsewhere'),
    ];
    await repo.bind(ofApp.id, 'app', appId);
    await repo.bind(both.id, 'app', appId);
    await repo.bind(both.id, 'space', spaceId);
    await repo.bind(ofSpace.id, 'space', spaceId);
    await repo.bind(elsewhere.id, 'space', randomUUID());
    await repo.setDefault(byDefault.id);
    const names = (bases: Array<{ name: string }>) => bases.map((b) => b.name);
    const fromParts = (appOf: string | null, withDefault: boolean) =>
      KnowledgeRepository.prototype.turnCandidates.call(repo, spaceId, appOf, withDefault);
    for (const [appOf, withDefault] of [
      [appId, true],
      [appId, false],
      [null, true],
      [null, false],
    ] as const) {
      const found = await repo.turnCandidates(spaceId, appOf, withDefault);
      assert.deepEqual(found, await fromParts(appOf, withDefault), `app ${appOf !== null}, default ${withDefault}`);
    }
    assert.deepEqual(names(await repo.turnCandidates(spaceId, appId, true)), ['Both', 'Space', 'App', 'Default']);
    assert.deepEqual(names(await repo.turnCandidates(spaceId, null, false)), ['Both', 'Space']);
    assert.deepEqual(
      (await repo.turnCandidates(spaceId, appId, false)).find((b) => b.name === 'Both')?.spaceIds,
      [spaceId],
      'with its bindings',
    );
  });
});
