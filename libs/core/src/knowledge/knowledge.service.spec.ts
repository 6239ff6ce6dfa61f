import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { FakeFileStore } from '#testing/fake-files.js';
import { FakeEmbeddings, FakeKnowledgeFiles, FakeKnowledgeRepository } from '#testing/fake-knowledge.js';
import { RecordingJobQueue } from '#testing/fake-triggers.js';
import { refusal, spacesWorld } from '#testing/service-worlds.js';
import { DomainError } from '../errors/domain-error.js';
import type { DocumentParser, KeywordHit } from './knowledge.ports.js';
import { KnowledgeErrors, KnowledgeService, MAX_EMBEDDING_DIMENSIONS, MAX_TOP_K } from './knowledge.service.js';

Logger.overrideLogger(false);

const hit = (kbId: string, chunkId: string): KeywordHit => ({
  chunkId,
  kbId,
  sourceName: `${chunkId}.md`,
  sourcePath: `${chunkId}.md`,
  heading: null,
  text: `text of ${chunkId}`,
  score: 1,
});

/** The knowledge service on in-memory ports, with real spaces and model sources. */
function world() {
  const { config, bus, spaces, models, space } = spacesWorld();
  const repo = new FakeKnowledgeRepository();
  const files = new FakeKnowledgeFiles();
  const embeddings = new FakeEmbeddings();
  const knowledge = new KnowledgeService(
    repo,
    files,
    // Parsing is not reached by these tests (no source is ingested).
    {} as DocumentParser,
    new FakeFileStore(),
    spaces,
    new RecordingJobQueue(),
    bus,
    embeddings,
    models,
    config,
  );
  /** Adds a model source; answers its id. */
  const source = async (name: string, provider: 'openai' | 'anthropic') => {
    const all = await models.addSource({
      name,
      provider,
      apiUrl: 'https://models.example/v1',
      apiKey: 'k',
      model: 'm',
    });
    return all.sources.find((s) => s.name === name)!.id;
  };
  return { knowledge, repo, files, embeddings, space, source };
}

type World = ReturnType<typeof world>;

describe('KnowledgeService', () => {
  let w: World;

  beforeEach(() => {
    w = world();
  });

  describe('knowledge bases', () => {
    it('creates a base with a trimmed name, keyword search and empty stats; a blank name is refused', async () => {
      await assert.rejects(w.knowledge.create({ name: '  ' }), refusal('invalid', KnowledgeErrors.missingName));
      await assert.rejects(w.knowledge.create({}), refusal('invalid', KnowledgeErrors.missingName));
      const kb = await w.knowledge.create({ name: ' Handbook ', icon: 5, description: 'Team rules' });
      assert.equal(kb.name, 'Handbook');
      assert.equal('icon' in kb, false, 'an icon that is not a string is left out');
      assert.equal(kb.description, 'Team rules');
      assert.equal(kb.status, 'active');
      assert.equal(kb.searchMode, 'keyword');
      assert.deepEqual(kb.stats, { rawFileCount: 0, indexedCount: 0, chunkCount: 0, rawSizeBytes: 0 });
      assert.deepEqual(
        (await w.knowledge.list()).map((k) => k.id),
        [kb.id],
      );
    });

    it('changes only what the body names, and refuses a bad name or status', async () => {
      const kb = await w.knowledge.create({ name: 'Handbook', description: 'old' });
      await assert.rejects(w.knowledge.update(kb.id, { name: '' }), refusal('invalid', KnowledgeErrors.missingName));
      await assert.rejects(
        w.knowledge.update(kb.id, { status: 'archived' }),
        refusal('invalid', 'status must be one of active, paused, error'),
      );
      const paused = await w.knowledge.update(kb.id, { status: 'paused' });
      assert.equal(paused.status, 'paused');
      assert.equal(paused.description, 'old');
      await assert.rejects(w.knowledge.update('nope', { name: 'x' }), refusal('not_found', KnowledgeErrors.notFound));
    });

    it('keeps one default base at most', async () => {
      const a = await w.knowledge.create({ name: 'A' });
      const b = await w.knowledge.create({ name: 'B' });
      assert.equal((await w.knowledge.setDefault(a.id))?.isDefault, true);
      assert.equal((await w.knowledge.setDefault(b.id))?.isDefault, true);
      assert.equal((await w.knowledge.get(a.id)).isDefault, false);
      assert.equal(await w.knowledge.setDefault(null), null);
      assert.deepEqual(
        (await w.knowledge.list()).filter((k) => k.isDefault),
        [],
      );
      await assert.rejects(w.knowledge.setDefault('nope'), refusal('not_found', KnowledgeErrors.notFound));
    });

    it('binds to an existing space only, and unbinds', async () => {
      const kb = await w.knowledge.create({ name: 'A' });
      await w.space('s1');
      await assert.rejects(w.knowledge.bindSpace(kb.id, '', true), refusal('invalid', KnowledgeErrors.missingSpaceId));
      await assert.rejects(w.knowledge.bindSpace(kb.id, 'nowhere', true), (err: unknown) => {
        assert.ok(err instanceof DomainError && err.kind === 'not_found');
        return true;
      });
      assert.deepEqual((await w.knowledge.bindSpace(kb.id, 's1', true)).spaceIds, ['s1']);
      assert.deepEqual(
        (await w.knowledge.forSpace('s1')).map((k) => k.id),
        [kb.id],
      );
      assert.deepEqual((await w.knowledge.bindSpace(kb.id, 's1', false)).spaceIds, []);
      await assert.rejects(w.knowledge.bindApp(kb.id, null, true), refusal('invalid', KnowledgeErrors.missingAppId));
    });

    it('deletes a base with its files; an unknown one is not found', async () => {
      const kb = await w.knowledge.create({ name: 'A' });
      await w.knowledge.delete(kb.id);
      assert.deepEqual(w.files.removedBases, [kb.id]);
      await assert.rejects(w.knowledge.get(kb.id), refusal('not_found', KnowledgeErrors.notFound));
      await assert.rejects(w.knowledge.delete(kb.id), refusal('not_found', KnowledgeErrors.notFound));
    });
  });

  describe('embedding setting', () => {
    it('refuses a setting that is not {modelSourceId, model, dimensions} naming a stored source', async () => {
      const kb = await w.knowledge.create({ name: 'A' });
      const set = (embedding: unknown) => w.knowledge.update(kb.id, { embedding });
      const openai = await w.source('OpenAI', 'openai');
      await assert.rejects(
        set('x'),
        refusal('invalid', 'embedding must be {modelSourceId, model, dimensions} or null'),
      );
      await assert.rejects(
        set({ model: 'e', dimensions: 8 }),
        refusal('invalid', 'embedding.modelSourceId must be the id of a model source'),
      );
      await assert.rejects(
        set({ modelSourceId: openai, model: ' ', dimensions: 8 }),
        refusal('invalid', 'embedding.model must be the name of an embedding model'),
      );
      for (const dimensions of [0, 1.5, MAX_EMBEDDING_DIMENSIONS + 1, '8']) {
        await assert.rejects(
          set({ modelSourceId: openai, model: 'e', dimensions }),
          refusal('invalid', `embedding.dimensions must be an integer from 1 to ${MAX_EMBEDDING_DIMENSIONS}`),
        );
      }
      await assert.rejects(
        set({ modelSourceId: 'gone', model: 'e', dimensions: 8 }),
        refusal('invalid', 'embedding.modelSourceId: no model source gone'),
      );
    });

    it('searches hybrid with an OpenAI-compatible source, keyword-only (saying why) with another', async () => {
      const kb = await w.knowledge.create({ name: 'A' });
      const openai = await w.source('OpenAI', 'openai');
      const claude = await w.source('Claude', 'anthropic');
      const hybrid = await w.knowledge.update(kb.id, {
        embedding: { modelSourceId: openai, model: ' e ', dimensions: 2 },
      });
      assert.equal(hybrid.searchMode, 'hybrid');
      assert.deepEqual(hybrid.embedding, { modelSourceId: openai, model: 'e', dimensions: 2 });
      assert.equal(hybrid.searchNote, undefined);

      const keyword = await w.knowledge.update(kb.id, {
        embedding: { modelSourceId: claude, model: 'e', dimensions: 2 },
      });
      assert.equal(keyword.searchMode, 'keyword');
      assert.equal(
        keyword.searchNote,
        'The model source Claude (anthropic) has no OpenAI-compatible embeddings endpoint: search is keyword-only',
      );
      const none = await w.knowledge.update(kb.id, { embedding: null });
      assert.equal(none.embedding, null);
      assert.equal(none.searchNote, undefined);
    });
  });

  describe('search', () => {
    it('refuses a bad query, topK or mode with the texts of docs/api/knowledge.md', async () => {
      const kb = await w.knowledge.create({ name: 'A' });
      const search = (input: Record<string, unknown>) => w.knowledge.search(kb.id, input);
      await assert.rejects(search({}), refusal('invalid', 'Missing query'));
      await assert.rejects(search({ query: ' ' }), refusal('invalid', 'Missing query'));
      for (const topK of [0, MAX_TOP_K + 1, 2.5, 'many']) {
        await assert.rejects(
          search({ query: 'tea', topK }),
          refusal('invalid', `topK must be an integer from 1 to ${MAX_TOP_K}`),
        );
      }
      await assert.rejects(
        search({ query: 'tea', mode: 'fuzzy' }),
        refusal('invalid', 'mode must be hybrid, keyword or semantic'),
      );
      await assert.rejects(
        w.knowledge.search('nope', { query: 'tea' }),
        refusal('not_found', KnowledgeErrors.notFound),
      );
    });

    it('answers keyword hits alone for a base without an embedding model, whatever the mode', async () => {
      const kb = await w.knowledge.create({ name: 'A' });
      w.repo.keywordHits = [hit(kb.id, 'k1'), hit(kb.id, 'k2')];
      const hits = await w.knowledge.search(kb.id, { query: 'green tea', mode: 'semantic', topK: 1 });
      assert.deepEqual(
        hits.map((h) => h.chunkId),
        ['k1'],
      );
      assert.deepEqual(w.repo.searches, [{ kind: 'keyword', kbIds: [kb.id], limit: 1 }]);
      assert.equal(w.embeddings.calls.length, 0);
    });

    it('fuses keyword and vector ranks in hybrid mode: a chunk both find comes first', async () => {
      const kb = await w.knowledge.create({ name: 'A' });
      const openai = await w.source('OpenAI', 'openai');
      await w.knowledge.update(kb.id, { embedding: { modelSourceId: openai, model: 'e', dimensions: 2 } });
      w.repo.keywordHits = [hit(kb.id, 'k-only'), hit(kb.id, 'both')];
      w.repo.vectorHits = [hit(kb.id, 'v-only'), hit(kb.id, 'both')];
      const hits = await w.knowledge.search(kb.id, { query: 'tea' });
      assert.deepEqual(
        hits.map((h) => h.chunkId),
        ['both', 'k-only', 'v-only'],
      );
      assert.deepEqual(w.embeddings.calls, [{ model: 'e', dimensions: 2, texts: ['tea'] }]);
    });

    it('falls back to keyword search and marks the base when the provider cannot embed', async () => {
      const kb = await w.knowledge.create({ name: 'A' });
      const openai = await w.source('OpenAI', 'openai');
      await w.knowledge.update(kb.id, { embedding: { modelSourceId: openai, model: 'e', dimensions: 2 } });
      w.embeddings.unavailable = 'No embeddings endpoint';
      w.repo.keywordHits = [hit(kb.id, 'k1')];
      const hits = await w.knowledge.search(kb.id, { query: 'tea', mode: 'hybrid' });
      assert.deepEqual(
        hits.map((h) => h.chunkId),
        ['k1'],
      );
      const after = await w.knowledge.get(kb.id);
      assert.equal(after.searchMode, 'keyword');
      assert.equal(after.searchNote, 'No embeddings endpoint: search is keyword-only');
      await w.knowledge.search(kb.id, { query: 'tea' });
      assert.equal(w.embeddings.calls.length, 1, 'a marked base stops trying until its embedding is set again');
    });
  });

  describe('forTurn', () => {
    it('gives a turn the active bases of its space and app, the default one when asked, and the one its message named', async () => {
      const bound = await w.knowledge.create({ name: 'bound' });
      const ofApp = await w.knowledge.create({ name: 'app' });
      const paused = await w.knowledge.create({ name: 'paused' });
      const byDefault = await w.knowledge.create({ name: 'default' });
      const named = await w.knowledge.create({ name: 'named' });
      await w.repo.bind(bound.id, 'space', 's1');
      await w.repo.bind(paused.id, 'space', 's1');
      await w.repo.bind(ofApp.id, 'app', 'app-1');
      await w.repo.update(paused.id, { status: 'paused' });
      await w.repo.update(named.id, { status: 'paused' });
      await w.repo.setDefault(byDefault.id);

      const ids = async (scope: Parameters<typeof w.knowledge.forTurn>[0]) =>
        (await w.knowledge.forTurn(scope)).map((kb) => kb.name).sort();
      assert.deepEqual(await ids({ spaceId: 's1' }), ['bound']);
      assert.deepEqual(await ids({ spaceId: 's1', appId: 'app-1', withDefault: true }), ['app', 'bound', 'default']);
      assert.deepEqual(await ids({ spaceId: 's2', kbId: named.id }), ['named'], 'a named base counts even if paused');
    });
  });
});
