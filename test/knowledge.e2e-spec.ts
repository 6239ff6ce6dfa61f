import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yazl from 'yazl';
import type { IngestStatusDto, KnowledgeBaseDto, RawFileDto, SearchHitDto } from '#contracts/knowledge.js';
import { AgentHarness, toolResults } from '#testing/agent-harness.js';
import { textReply, toolCallReply } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

/** A DOCX document (the parts the parser reads) with a heading and two paragraphs. */
async function docx(): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const p = (text: string, style?: string) =>
    `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t>${text}</w:t></w:r></w:p>`;
  zip.addBuffer(
    Buffer.from(
      `<?xml version="1.0"?><w:document xmlns:w="x"><w:body>${p('Warranty terms', 'Heading1')}${p(
        'Every kettle carries a two year warranty against defects.',
      )}${p('Claims need the receipt &amp; serial number.')}</w:body></w:document>`,
    ),
    'word/document.xml',
  );
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe(`knowledge bases (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let importRoot: string;

  before(async () => {
    importRoot = join(process.env.TMPDIR ?? '/tmp', `kb-import-${process.pid}-${Date.now()}`);
    mkdirSync(importRoot, { recursive: true });
    writeFileSync(join(importRoot, 'faq.txt'), 'Shipping takes five working days to Lisbon.\n');
    await h.start({ SVC_KB_IMPORT_ROOTS: importRoot });
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

  it('an unknown knowledge base is 404 Knowledge base not found, on every route', async () => {
    for (const res of [
      await api.get('/api/tlon/6b1f6c1e-0000-4000-8000-000000000000'),
      await api.get('/api/tlon/not-an-id/raw'),
      await api.post('/api/tlon/6b1f6c1e-0000-4000-8000-000000000000/search', { query: 'x' }),
    ]) {
      assert.equal(res.status, 404, JSON.stringify(res.body));
      assert.deepEqual(res.body, { success: false, error: 'Knowledge base not found' });
    }
    assert.equal((await api.post('/api/tlon', {})).status, 400);
  });

  it('create, list, update, default, bindings and delete', async () => {
    const kb = okData<KnowledgeBaseDto>(await api.post('/api/tlon', { name: 'Handbook', icon: '📘' }));
    assert.equal(kb.name, 'Handbook');
    assert.equal(kb.isDefault, false);
    assert.deepEqual(kb.stats, { rawFileCount: 0, indexedCount: 0, chunkCount: 0, rawSizeBytes: 0 });
    assert.equal(kb.embedding, null);
    assert.equal(kb.searchMode, 'keyword');
    const space = okData<{ id: string }>(await api.post('/api/spaces', { name: 'KB space' }));
    const bound = okData<KnowledgeBaseDto>(await api.post(`/api/tlon/${kb.id}/bind-space`, { spaceId: space.id }));
    assert.deepEqual(bound.spaceIds, [space.id]);
    assert.equal((await api.post(`/api/tlon/${kb.id}/bind-space`, {})).body.error, 'Missing spaceId');
    assert.deepEqual(
      okData<KnowledgeBaseDto[]>(await api.get(`/api/tlon/for-space/${space.id}`)).map((k) => k.id),
      [kb.id],
    );
    const withApp = okData<KnowledgeBaseDto>(await api.post(`/api/tlon/${kb.id}/bind-app`, { appId: 'app-1' }));
    assert.deepEqual(withApp.appIds, ['app-1']);
    okData(await api.post(`/api/tlon/${kb.id}/unbind-app`, { appId: 'app-1' }));
    okData(await api.post(`/api/tlon/${kb.id}/unbind-space`, { spaceId: space.id }));
    assert.deepEqual(okData<KnowledgeBaseDto[]>(await api.get(`/api/tlon/for-space/${space.id}`)), []);
    const def = okData<KnowledgeBaseDto>(await api.post('/api/tlon/set-default', { kbId: kb.id }));
    assert.equal(def.isDefault, true);
    const other = okData<KnowledgeBaseDto>(await api.post('/api/tlon', { name: 'Other' }));
    okData(await api.post('/api/tlon/set-default', { kbId: other.id }));
    const all = okData<KnowledgeBaseDto[]>(await api.get('/api/tlon'));
    assert.deepEqual(
      all.filter((k) => k.isDefault).map((k) => k.id),
      [other.id],
      'one default',
    );
    assert.equal(okData(await api.post('/api/tlon/set-default', { kbId: null })), null);
    const renamed = okData<KnowledgeBaseDto>(
      await api.put(`/api/tlon/${kb.id}`, { name: 'Staff handbook', status: 'paused', description: 'd' }),
    );
    assert.equal(renamed.name, 'Staff handbook');
    assert.equal(renamed.status, 'paused');
    assert.equal((await api.put(`/api/tlon/${kb.id}`, { status: 'sleepy' })).status, 400);
    assert.equal(okData(await api.delete(`/api/tlon/${other.id}`)), true);
    assert.equal((await api.get(`/api/tlon/${other.id}`)).status, 404);
  });

  it('sources from a workspace, an allowed server folder and uploads are ingested with progress, searched and removed', async () => {
    const kb = okData<KnowledgeBaseDto>(await api.post('/api/tlon', { name: 'Shop' }));
    const space = okData<{ id: string; path: string }>(await api.post('/api/spaces', { name: 'Shop space' }));
    mkdirSync(join(space.path, 'docs', 'node_modules'), { recursive: true });
    writeFileSync(
      join(space.path, 'docs', 'returns.md'),
      '# Returns\n\nOur refund policy allows returns within thirty days.\n\n## Exceptions\n\nOpened cosmetics cannot be returned.\n',
    );
    writeFileSync(join(space.path, 'docs', 'prices.csv'), 'item,price\nkettle,30\ntoaster,45\n');
    writeFileSync(join(space.path, 'docs', 'main.ts'), 'export {}');
    writeFileSync(join(space.path, 'docs', 'node_modules', 'x.md'), '# ignored');
    writeFileSync(join(space.path, 'zh.md'), '# 退货政策\n\n我们的退货政策允许三十天内退货。\n');

    const ws = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    try {
      // Outside the space and outside SVC_KB_IMPORT_ROOTS: 403 naming the path.
      const outside = await api.post(`/api/tlon/${kb.id}/files`, {
        spaceId: space.id,
        filePaths: ['../../etc/passwd'],
      });
      assert.equal(outside.status, 403, JSON.stringify(outside.body));
      assert.match(outside.body.error, /\.\.\/\.\.\/etc\/passwd/);
      const server = await api.post(`/api/tlon/${kb.id}/files`, { filePaths: ['/etc/hostname'] });
      assert.equal(server.status, 403);
      assert.match(server.body.error, /\/etc\/hostname.*SVC_KB_IMPORT_ROOTS/);

      const added = okData<{ added: string[]; rejected: Array<{ path: string; reason: string }> }>(
        await api.post(`/api/tlon/${kb.id}/files`, { spaceId: space.id, filePaths: ['docs', 'zh.md', 'docs/main.ts'] }),
      );
      assert.deepEqual(added.added.sort(), ['docs/prices.csv', 'docs/returns.md', 'zh.md']);
      assert.equal(added.rejected.length, 1);
      assert.equal(added.rejected[0]!.path, 'docs/main.ts');
      assert.match(added.rejected[0]!.reason, /Unsupported file type \.ts/);

      const fromRoot = okData<{ added: string[] }>(
        await api.post(`/api/tlon/${kb.id}/files`, { filePaths: [join(importRoot, 'faq.txt')] }),
      );
      assert.deepEqual(fromRoot.added, ['faq.txt']);
      const uploaded = okData<RawFileDto>(await upload(kb.id, 'warranty.docx', await docx()));
      assert.equal(uploaded.state, 'pending');
      assert.equal((await upload(kb.id, 'tool.exe', 'MZ')).status, 400);
      // A broken DOCX fails alone; the batch goes on.
      okData(await upload(kb.id, 'broken.docx', 'PK\u0003\u0004 not really a zip'));

      const status = await settled(kb.id);
      assert.equal(status.completed, status.total);
      assert.deepEqual(
        status.errors.map((e) => e.file),
        ['broken.docx'],
      );
      const stats = await ws.event('tlon:stats-updated', 30_000);
      assert.equal(stats.data!.kbId, kb.id);

      const progress = ws.frames.filter(
        (f: Frame) => f.type === 'event' && f.channel === 'tlon:ingest-progress' && f.data!.kbId === kb.id,
      );
      assert.ok(progress.length > 0);

      const raw = okData<RawFileDto[]>(await api.get(`/api/tlon/${kb.id}/raw`));
      const byPath = Object.fromEntries(raw.map((r) => [r.path, r]));
      assert.equal(byPath['docs/returns.md']!.state, 'learned');
      assert.equal(byPath['warranty.docx']!.state, 'learned');
      assert.equal(byPath['broken.docx']!.state, 'failed');
      assert.match(byPath['broken.docx']!.error!, /zip/i);
      assert.equal(byPath['faq.txt']!.source, 'raw');

      const hits = okData<SearchHitDto[]>(await api.post(`/api/tlon/${kb.id}/search`, { query: 'refund policy' }));
      assert.equal(hits[0]!.sourceName, 'returns.md');
      assert.equal(hits[0]!.sourcePath, 'docs/returns.md');
      assert.equal(hits[0]!.heading, 'Returns');
      assert.match(hits[0]!.text, /thirty days/);
      assert.ok(hits[0]!.chunkId);
      const zh = okData<SearchHitDto[]>(await api.post(`/api/tlon/${kb.id}/search`, { query: '退货政策是什么' }));
      assert.equal(zh[0]!.sourceName, 'zh.md');
      const word = okData<SearchHitDto[]>(
        await api.post(`/api/tlon/${kb.id}/search`, { query: 'kettle warranty', topK: 1, mode: 'hybrid' }),
      );
      assert.equal(word.length, 1);
      assert.equal(word[0]!.sourceName, 'warranty.docx');
      assert.equal(word[0]!.heading, 'Warranty terms');
      assert.equal((await api.post(`/api/tlon/${kb.id}/search`, { query: 'x', topK: 51 })).status, 400);

      const map = okData<string>(await api.get(`/api/tlon/${kb.id}/index`));
      assert.match(map, /\*\*returns\.md\*\* \(`docs\/returns\.md`\) — Our refund policy/);
      assert.match(map, /broken\.docx.*\[failed/);
      assert.deepEqual(
        okData(
          await api.post(`/api/tlon/${kb.id}/resolve-sources`, {
            readPaths: ['/somewhere/raw/docs/returns.md', 'warranty.docx', 'nothing.md'],
          }),
        ),
        [
          { name: 'returns.md', path: 'docs/returns.md' },
          { name: 'warranty.docx', path: 'warranty.docx' },
        ],
      );

      // An unchanged re-ingest does nothing; a changed source is ingested again.
      const before = okData<KnowledgeBaseDto>(await api.get(`/api/tlon/${kb.id}`)).stats;
      assert.equal(before.rawFileCount, 6);
      assert.equal(before.indexedCount, 5);
      okData(await api.post(`/api/tlon/${kb.id}/ingest`));
      const again = await settled(kb.id);
      assert.equal(again.total, 1, 'only the failed source is tried again');
      assert.equal(okData<KnowledgeBaseDto>(await api.get(`/api/tlon/${kb.id}`)).stats.chunkCount, before.chunkCount);

      // clear-relearn re-does everything, without doubling a chunk.
      assert.equal(okData(await api.post(`/api/tlon/${kb.id}/clear-relearn`)), true);
      const relearned = await settled(kb.id);
      assert.equal(relearned.total, 6);
      assert.equal(okData<KnowledgeBaseDto>(await api.get(`/api/tlon/${kb.id}`)).stats.chunkCount, before.chunkCount);

      // Removing a source removes its chunks.
      assert.equal(okData(await api.post(`/api/tlon/${kb.id}/remove-raw`, { relativePath: 'docs/returns.md' })), true);
      assert.deepEqual(okData(await api.post(`/api/tlon/${kb.id}/search`, { query: 'refund' })), []);
      assert.equal((await api.post(`/api/tlon/${kb.id}/remove-raw`, { relativePath: 'docs/returns.md' })).status, 404);
      const after = okData<KnowledgeBaseDto>(await api.get(`/api/tlon/${kb.id}`)).stats;
      assert.equal(after.rawFileCount, 5);
      assert.ok(after.chunkCount < before.chunkCount);
    } finally {
      ws.close();
    }
  });

  it('ingest-progress events count up, never down, within a batch', async () => {
    const kb = okData<KnowledgeBaseDto>(await api.post('/api/tlon', { name: 'Many' }));
    const ws = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    try {
      for (let i = 0; i < 8; i++) okData(await upload(kb.id, `note-${i}.md`, `# Note ${i}\n\nThe number ${i} note.\n`));
      await settled(kb.id);
      await ws.roundTrip();
      const seen = ws.frames
        .filter((f) => f.type === 'event' && f.channel === 'tlon:ingest-progress' && f.data!.kbId === kb.id)
        .map((f) => f.data as unknown as IngestStatusDto);
      let last = -1;
      let batch = 0;
      for (const s of seen) {
        if (s.completed < last) assert.equal(s.completed, 0, `went down: ${JSON.stringify(seen)}`);
        if (s.completed === 0) batch++;
        last = s.completed;
      }
      assert.ok(batch >= 1);
      assert.equal(seen[seen.length - 1]!.phase, 'done');
    } finally {
      ws.close();
    }
  });

  it('a chat turn in a bound space calls kb_search and cites; knowledgeBaseId gives an unbound one; the map is in the prompt', async () => {
    const kb = okData<KnowledgeBaseDto>(await api.post('/api/tlon', { name: 'Policies' }));
    okData(await upload(kb.id, 'returns.md', '# Refunds\n\nRefunds are paid within 14 days of the return.\n'));
    await settled(kb.id);
    const space = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Support' }));

    // Not bound, not named: no tool.
    h.model.reset();
    await h.chat(space.id, 'hello');
    assert.ok(!h.toolsOf(0).some((t) => t.name === 'kb_search'));

    okData(await api.post(`/api/tlon/${kb.id}/bind-space`, { spaceId: space.id }));
    h.model.reset();
    h.model.enqueue(
      toolCallReply({ name: 'kb_search', input: { query: 'when are refunds paid', topK: 3 } }),
      textReply('Within 14 days [returns.md › Refunds].'),
    );
    const frames = await h.chat(space.id, 'When do I get my refund?');
    const tool = h.toolsOf(0).find((t) => t.name === 'kb_search');
    assert.ok(tool, 'kb_search offered');
    assert.match(h.systemOf(0), /knowledge base/);
    assert.match(h.systemOf(0), /returns\.md/);
    const [result] = toolResults(frames);
    assert.equal(result!.isError, false, result!.result);
    const hits = JSON.parse(result!.result) as SearchHitDto[];
    assert.equal(hits[0]!.sourceName, 'returns.md');
    assert.equal(hits[0]!.heading, 'Refunds');
    assert.match(hits[0]!.text, /14 days/);
    assert.ok(hits[0]!.chunkId);
    const final = frames.filter((f) => f.channel === 'agent:message' && f.data!.isComplete === true).pop();
    assert.match(String(final!.data!.content), /returns\.md/);

    // A knowledge base named by the message, in a space it is not bound to.
    const other = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Elsewhere' }));
    const conv = okData<{ id: string }>(await api.post(`/api/spaces/${other.id}/conversations`, { title: 't' }));
    h.model.reset();
    h.model.enqueue(
      toolCallReply({ name: 'kb_search', input: { query: 'refunds', kbIds: ['someone-else'] } }),
      textReply('ok'),
    );
    const named = await h.turn(conv.id, () =>
      api.post('/api/agent/message', {
        spaceId: other.id,
        conversationId: conv.id,
        message: 'refunds?',
        knowledgeBaseId: kb.id,
      }),
    );
    assert.ok(h.toolsOf(0).some((t) => t.name === 'kb_search'));
    const [refused] = toolResults(named);
    assert.equal(refused!.isError, true);
    assert.match(refused!.result, /Not available to you: someone-else/);
  });
});
