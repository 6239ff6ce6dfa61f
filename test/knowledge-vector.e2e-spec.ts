import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IngestStatusDto, KnowledgeBaseDto, RawFileDto, SearchHitDto } from '#contracts/knowledge.js';
import { AgentHarness } from '#testing/agent-harness.js';
import { minimalPdf } from '#testing/minimal-pdf.js';
import { testMode } from '#testing/test-env.js';
import { waitFor } from '#testing/wait.js';

/**
 * Knowledge bases past keyword search (docs/api/knowledge.md): PDF text with its page cited,
 * embeddings from an OpenAI-compatible model source (the scripted model server's deterministic
 * `/v1/embeddings`), hybrid search by reciprocal rank fusion, and the fall back to keyword search.
 */
describe(`knowledge bases: PDF, embeddings and hybrid search (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  /** An OpenAI-compatible model source on the scripted server (the harness's own source is Anthropic). */
  let embedderId: string;

  before(async () => {
    await h.start();
    h.model.embeddings({ synonyms: [['refund', 'reimbursement', 'repayment']] });
    const added = okData<{ sources: Array<{ id: string; name: string }> }>(
      await api.post('/api/ai-sources/sources', {
        name: 'Embedder',
        provider: 'openai',
        apiUrl: h.model.url,
        apiKey: 'sk-embed-secret',
        model: 'scripted-embed',
      }),
    );
    embedderId = added.sources.find((s) => s.name === 'Embedder')!.id;
  });
  after(() => h.stop());

  const upload = (kbId: string, name: string, body: Buffer | string) =>
    api
      .put(`/api/tlon/${kbId}/upload?name=${encodeURIComponent(name)}`, Buffer.from(body))
      .set('Content-Type', 'application/octet-stream');

  const settled = async (kbId: string): Promise<IngestStatusDto> => {
    let status: IngestStatusDto | undefined;
    await waitFor(
      async () => {
        status = okData<IngestStatusDto>(await api.get(`/api/tlon/${kbId}/ingest-status`));
        return status.phase === 'done';
      },
      30_000,
      'ingestion done',
    );
    return status!;
  };

  const search = async (kbId: string, query: string, mode?: string) =>
    okData<SearchHitDto[]>(await api.post(`/api/tlon/${kbId}/search`, { query, ...(mode ? { mode } : {}) }));

  it('a PDF is read page by page and found with its page cited; a broken one is failed with its reason', async () => {
    const kb = okData<KnowledgeBaseDto>(await api.post('/api/tlon', { name: 'Manuals' }));
    const pdf = minimalPdf([
      ['Kettle manual', 'Fill the kettle with fresh water.'],
      ['Maintenance', 'Descaling every month keeps the heating plate clean.'],
    ]);
    okData(await upload(kb.id, 'kettle-manual.pdf', pdf));
    okData(await upload(kb.id, 'broken.pdf', '%PDF-1.4\nthis is not a real document\n'));
    const status = await settled(kb.id);
    assert.deepEqual(
      status.errors.map((e) => e.file),
      ['broken.pdf'],
    );
    const raw = okData<RawFileDto[]>(await api.get(`/api/tlon/${kb.id}/raw`));
    const byPath = Object.fromEntries(raw.map((r) => [r.path, r]));
    assert.equal(byPath['kettle-manual.pdf']!.state, 'learned');
    assert.equal(byPath['broken.pdf']!.state, 'failed');
    assert.match(byPath['broken.pdf']!.error!, /PDF/);

    const hits = await search(kb.id, 'descaling heating plate');
    assert.equal(hits[0]?.sourceName, 'kettle-manual.pdf', JSON.stringify(hits));
    assert.equal(hits[0]!.heading, 'Page 2');
    assert.match(hits[0]!.text, /Descaling every month/);
    const first = await search(kb.id, 'fresh water');
    assert.equal(first[0]?.heading, 'Page 1');
  });

  it('with an embedding model, hybrid search finds a passage that shares no word with the query; keyword does not', async () => {
    const kb = okData<KnowledgeBaseDto>(await api.post('/api/tlon', { name: 'Policies' }));
    assert.equal(
      (await api.put(`/api/tlon/${kb.id}`, { embedding: { modelSourceId: 'nope', model: 'm', dimensions: 64 } })).body
        .error,
      'embedding.modelSourceId: no model source nope',
    );
    assert.equal(
      (await api.put(`/api/tlon/${kb.id}`, { embedding: { modelSourceId: embedderId, model: 'm', dimensions: 0 } }))
        .status,
      400,
    );
    const set = okData<KnowledgeBaseDto>(
      await api.put(`/api/tlon/${kb.id}`, {
        embedding: { modelSourceId: embedderId, model: 'scripted-embed', dimensions: 64 },
      }),
    );
    assert.equal(set.searchMode, 'hybrid');
    assert.equal(set.searchNote, undefined);

    const before = h.model.embeddingRequests.length;
    okData(await upload(kb.id, 'money.md', '# Returns\n\nA refund is paid within 30 days of the return.\n'));
    okData(await upload(kb.id, 'shipping.md', '# Delivery\n\nParcels leave the warehouse every morning.\n'));
    okData(await upload(kb.id, 'care.md', '# Care\n\nWipe the kettle with a soft cloth.\n'));
    await settled(kb.id);
    const sent = h.model.embeddingRequests.slice(before);
    assert.ok(sent.length >= 1, 'the chunks were embedded');
    assert.ok(sent.every((r) => r.model === 'scripted-embed' && r.authorization === 'Bearer sk-embed-secret'));
    assert.equal(sent.flatMap((r) => r.input).filter((t) => t.includes('refund is paid')).length, 1);

    // "reimbursement" is nowhere in the text; the scripted embedder holds it near "refund".
    assert.deepEqual(await search(kb.id, 'reimbursement', 'keyword'), []);
    const hybrid = await search(kb.id, 'reimbursement');
    assert.equal(hybrid[0]?.sourceName, 'money.md', JSON.stringify(hybrid));
    assert.equal(hybrid[0]!.heading, 'Returns');
    const semantic = await search(kb.id, 'repayment', 'semantic');
    assert.equal(semantic[0]?.sourceName, 'money.md');
    assert.ok(semantic[0]!.score > 0.3, `cosine similarity ${semantic[0]!.score}`);
    // A word in the text is still found first by both lists.
    assert.equal((await search(kb.id, 'warehouse parcels'))[0]?.sourceName, 'shipping.md');

    // An unchanged re-ingest embeds nothing; a changed source alone is embedded again.
    const mark = h.model.embeddingRequests.length;
    okData(await api.post(`/api/tlon/${kb.id}/ingest`, {}));
    await settled(kb.id);
    assert.equal(h.model.embeddingRequests.length, mark, 'nothing re-embedded');
    okData(await upload(kb.id, 'care.md', '# Care\n\nWipe the kettle with a damp cloth.\n'));
    await settled(kb.id);
    const again = h.model.embeddingRequests.slice(mark).flatMap((r) => r.input);
    assert.ok(again.some((t) => t.includes('damp cloth')));
    assert.ok(!again.some((t) => t.includes('refund is paid') || t.includes('warehouse')), JSON.stringify(again));

    // A source added after searches (the server's vector index was loaded) is found at once: each
    // chunk write bumps the base's version and the index is read again.
    okData(await upload(kb.id, 'tea.md', '# Tea\n\nBrew the oolong for three minutes.\n'));
    await settled(kb.id);
    assert.equal((await search(kb.id, 'oolong', 'semantic'))[0]?.sourceName, 'tea.md');

    // The key never reaches an answer.
    assert.ok(!JSON.stringify(okData(await api.get(`/api/tlon/${kb.id}`))).includes('sk-embed-secret'));
  });

  it('falls back to keyword search when the source has no embeddings endpoint, and says so', async () => {
    // The harness's own source is Anthropic: no OpenAI-compatible embeddings.
    const config = okData<{ aiSources: { sources: Array<{ id: string; provider: string }> } }>(
      await api.get('/api/config'),
    );
    const anthropic = config.aiSources.sources.find((s) => s.provider === 'anthropic')!;
    const kb = okData<KnowledgeBaseDto>(await api.post('/api/tlon', { name: 'No vectors' }));
    const set = okData<KnowledgeBaseDto>(
      await api.put(`/api/tlon/${kb.id}`, { embedding: { modelSourceId: anthropic.id, model: 'x', dimensions: 64 } }),
    );
    assert.equal(set.searchMode, 'keyword');
    assert.match(set.searchNote!, /no OpenAI-compatible embeddings endpoint: search is keyword-only/);

    // An OpenAI-compatible source whose server answers 404 to /embeddings.
    const other = okData<KnowledgeBaseDto>(await api.post('/api/tlon', { name: 'Endpoint missing' }));
    okData(
      await api.put(`/api/tlon/${other.id}`, {
        embedding: { modelSourceId: embedderId, model: 'scripted-embed', dimensions: 64 },
      }),
    );
    h.model.embeddings({ enabled: false });
    try {
      okData(await upload(other.id, 'money.md', '# Returns\n\nA refund is paid within 30 days of the return.\n'));
      const status = await settled(other.id);
      assert.deepEqual(status.errors, []);
      const after = okData<KnowledgeBaseDto>(await api.get(`/api/tlon/${other.id}`));
      assert.equal(after.searchMode, 'keyword');
      assert.match(after.searchNote!, /Embedder has no embeddings endpoint \(HTTP 404/);
      assert.equal(after.stats.chunkCount, 1);
      const hits = await search(other.id, 'refund', 'hybrid');
      assert.equal(hits[0]?.sourceName, 'money.md');
      assert.deepEqual(await search(other.id, 'reimbursement', 'semantic'), []);
    } finally {
      h.model.embeddings({ enabled: true });
    }
    // Setting the model again, now that the endpoint answers, embeds the source: hybrid.
    okData(
      await api.put(`/api/tlon/${other.id}`, {
        embedding: { modelSourceId: embedderId, model: 'scripted-embed', dimensions: 64 },
      }),
    );
    await settled(other.id);
    assert.equal(okData<KnowledgeBaseDto>(await api.get(`/api/tlon/${other.id}`)).searchMode, 'hybrid');
    assert.equal((await search(other.id, 'reimbursement'))[0]?.sourceName, 'money.md');
  });
});
