import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IngestStatusDto, KnowledgeBaseDto, RawFileDto, SearchHitDto } from '#contracts/knowledge.js';
import { apiClient, okData } from '#testing/api-client.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import { testMode } from '#testing/test-env.js';
import { waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

const SOURCES = 12;

describe('knowledge ingestion across two replicas', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let r: Replicas;
  before(async () => {
    r = await startReplicas();
  });
  after(() => r?.stop());

  it('both replicas ingest one batch: every source once, no chunk doubled, progress never going down', async () => {
    const kb = okData<KnowledgeBaseDto>(await apiClient(r.a).post('/api/tlon', { name: 'Shared' }));
    const ws = await WsTestClient.signedIn(r.b.wsUrl, r.b.password);
    try {
      // Uploads through both replicas, each of which queues an ingestion; then both ask again at once.
      for (let i = 0; i < SOURCES; i++) {
        const s = i % 2 === 0 ? r.a : r.b;
        okData(
          await apiClient(s)
            .put(
              `/api/tlon/${kb.id}/upload?name=note-${i}.md`,
              Buffer.from(`# Note ${i}\n\nThe shared note number ${i} mentions zebra${i}.\n`),
            )
            .set('Content-Type', 'application/octet-stream'),
        );
      }
      await Promise.all([
        apiClient(r.a).post(`/api/tlon/${kb.id}/ingest`),
        apiClient(r.b).post(`/api/tlon/${kb.id}/ingest`),
      ]);
      await waitFor(
        async () => {
          const status = okData<IngestStatusDto>(await apiClient(r.b).get(`/api/tlon/${kb.id}/ingest-status`));
          const raw = okData<RawFileDto[]>(await apiClient(r.a).get(`/api/tlon/${kb.id}/raw`));
          return status.phase === 'done' && raw.every((s) => s.state === 'learned');
        },
        60_000,
        'every source learned',
      );
      const stats = okData<KnowledgeBaseDto>(await apiClient(r.a).get(`/api/tlon/${kb.id}`)).stats;
      assert.equal(stats.rawFileCount, SOURCES);
      assert.equal(stats.indexedCount, SOURCES);
      assert.equal(stats.chunkCount, SOURCES, 'one chunk per note, none doubled');
      for (const i of [0, 7]) {
        const hits = okData<SearchHitDto[]>(
          await apiClient(r.b).post(`/api/tlon/${kb.id}/search`, { query: `zebra${i}` }),
        );
        assert.deepEqual(
          hits.map((h) => h.sourceName),
          [`note-${i}.md`],
        );
      }
      await ws.roundTrip();
      const seen = ws.frames
        .filter((f) => f.type === 'event' && f.channel === 'tlon:ingest-progress' && f.data!.kbId === kb.id)
        .map((f) => f.data as unknown as IngestStatusDto);
      assert.ok(seen.length > 0);
      let last = -1;
      for (const s of seen) {
        if (s.completed < last)
          assert.equal(s.completed, 0, `went down: ${JSON.stringify(seen.map((x) => x.completed))}`);
        assert.ok(s.completed <= s.total);
        last = s.completed;
      }
    } finally {
      ws.close();
    }
  });
});
