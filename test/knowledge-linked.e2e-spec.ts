import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type {
  IngestStatusDto,
  KnowledgeBaseDto,
  LinkedDirDto,
  RawFileDto,
  SearchHitDto,
} from '#contracts/knowledge.js';
import { AgentHarness } from '#testing/agent-harness.js';
import { testMode } from '#testing/test-env.js';
import { printServerLines } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

/**
 * Linked folders (docs/api/knowledge.md): a folder of a workspace whose accepted files are a
 * knowledge base's sources, kept in step through the file watcher — a changed file re-ingested,
 * a new one added, a removed one dropped with its chunks — plus the routes' bad input.
 */
describe(`knowledge bases: linked folders (${testMode()})`, () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let space: { id: string; path: string };
  let kbId: string;

  before(async () => {
    await h.start();
    space = okData(await api.post('/api/spaces', { name: 'Linked docs' }));
    mkdirSync(join(space.path, 'docs', 'sub'), { recursive: true });
    mkdirSync(join(space.path, 'docs', 'node_modules'), { recursive: true });
    writeFileSync(join(space.path, 'docs', 'a.md'), '# Alpha\n\nThe wombat lives in the first note.\n');
    writeFileSync(join(space.path, 'docs', 'sub', 'b.md'), '# Beta\n\nThe quokka lives in the second note.\n');
    writeFileSync(join(space.path, 'docs', 'skip.bin'), 'not a document');
    writeFileSync(join(space.path, 'docs', 'node_modules', 'x.md'), '# Pruned\n\nNever linked.\n');
    writeFileSync(join(space.path, 'outside.md'), '# Outside\n\nNot in the linked folder.\n');
    kbId = okData<KnowledgeBaseDto>(await api.post('/api/tlon', { name: 'Linked' })).id;
  });
  after(() => h.stop());

  const raw = async () => okData<RawFileDto[]>(await api.get(`/api/tlon/${kbId}/raw`));
  const search = async (query: string) =>
    okData<SearchHitDto[]>(await api.post(`/api/tlon/${kbId}/search`, { query, mode: 'keyword' }));
  const settled = async () =>
    okData<IngestStatusDto>(await api.get(`/api/tlon/${kbId}/ingest-status`)).phase !== 'running' &&
    (await raw()).every((s) => s.state !== 'pending');

  it('links a folder: its accepted files become linked sources, ingested and searchable', async () => {
    const link = okData<LinkedDirDto>(
      await api.post(`/api/tlon/${kbId}/linked-dirs`, { spaceId: space.id, path: 'docs', label: 'Docs' }),
    );
    assert.equal(link.kbId, kbId);
    assert.equal(link.path, 'docs');
    assert.equal(link.label, 'Docs');
    assert.equal(link.state, 'active');
    assert.equal(link.fileCount, 2, 'a.md and sub/b.md (not skip.bin, not node_modules)');
    await waitFor(settled, 60_000, 'linked sources ingested');
    const sources = await raw();
    assert.deepEqual(sources.map((s) => s.path).sort(), [`${link.prefix}/a.md`, `${link.prefix}/sub/b.md`]);
    assert.ok(sources.every((s) => s.source === 'linked' && s.state === 'learned'));
    assert.equal((await search('wombat'))[0]?.sourceName, 'a.md');
    assert.equal((await search('outside')).length, 0);
    // The list route answers the same link (the web app's Knowledge page reads it).
    const listed = okData<LinkedDirDto[]>(await api.get(`/api/tlon/${kbId}/linked-dirs`));
    assert.deepEqual(
      listed.map((l) => [l.id, l.path, l.label, l.fileCount, l.prefix]),
      [[link.id, 'docs', 'Docs', 2, link.prefix]],
    );
  });

  it('follows the folder: a changed file re-ingested, a new one added, a removed one dropped with its chunks', async () => {
    writeFileSync(join(space.path, 'docs', 'a.md'), '# Alpha\n\nThe numbat replaced the wombat here.\n');
    writeFileSync(join(space.path, 'docs', 'c.md'), '# Gamma\n\nA platypus arrives later.\n');
    unlinkSync(join(space.path, 'docs', 'sub', 'b.md'));
    await waitFor(
      async () =>
        (await search('numbat')).length === 1 &&
        (await search('platypus')).length === 1 &&
        (await search('quokka')).length === 0 &&
        (await settled()),
      90_000,
      'the change seen through the watcher',
    ).catch(async (err: Error) => {
      // What the sources and the server said, to tell a missed change from a stuck ingestion.
      process.stdout.write(`sources: ${JSON.stringify((await raw()).map((s) => [s.path, s.state]))}\n`);
      printServerLines(h.server, 40, /watch|lease|link|knowledge|ingest/i);
      throw err;
    });
    const sources = await raw();
    assert.deepEqual(sources.map((s) => s.name).sort(), ['a.md', 'c.md']);
    const kb = okData<KnowledgeBaseDto>(await api.get(`/api/tlon/${kbId}`));
    assert.equal(kb.stats.rawFileCount, 2);
    assert.equal(kb.stats.chunkCount, 2, 'the old chunks of a.md and those of b.md gone');
  });

  it('refuses bad input: outside the space 403, not a folder or missing fields 400, unknown ids 404', async () => {
    const post = (body: object, id = kbId) => api.post(`/api/tlon/${id}/linked-dirs`, body);
    assert.equal((await post({ spaceId: space.id, path: '../..' })).status, 403);
    assert.equal((await post({ spaceId: space.id, path: '/etc' })).status, 403);
    const notFolder = await post({ spaceId: space.id, path: 'docs/a.md' });
    assert.equal(notFolder.status, 400);
    assert.match(JSON.stringify(notFolder.body), /path/);
    const noSpace = await post({ path: 'docs' });
    assert.equal(noSpace.status, 400);
    assert.match(JSON.stringify(noSpace.body), /spaceId/);
    assert.equal((await post({ spaceId: space.id, path: 42 })).status, 400);
    assert.equal((await post({ spaceId: randomUUID(), path: 'docs' })).status, 404);
    assert.equal((await post({ spaceId: space.id, path: 'docs' }, randomUUID())).status, 404);
    assert.equal((await api.delete(`/api/tlon/${kbId}/linked-dirs/${randomUUID()}`)).status, 404);
    assert.equal((await api.post(`/api/tlon/${kbId}/linked-dirs/not-an-id/retry`)).status, 404);
    assert.equal((await api.get(`/api/tlon/${randomUUID()}/linked-dirs`)).status, 404);
  });

  it('a folder gone marks the link error on retry; unlinking drops its sources and chunks', async () => {
    mkdirSync(join(space.path, 'tmp-link'));
    writeFileSync(join(space.path, 'tmp-link', 'd.md'), '# Delta\n\nA dugong.\n');
    const link = okData<LinkedDirDto>(
      await api.post(`/api/tlon/${kbId}/linked-dirs`, { spaceId: space.id, path: 'tmp-link' }),
    );
    assert.equal(link.fileCount, 1);
    await waitFor(
      async () => (await search('dugong')).length === 1 && (await settled()),
      60_000,
      'second link ingested',
    );
    rmSync(join(space.path, 'tmp-link'), { recursive: true });
    const retried = okData<LinkedDirDto>(await api.post(`/api/tlon/${kbId}/linked-dirs/${link.id}/retry`));
    assert.equal(retried.state, 'error');
    assert.match(retried.error ?? '', /cannot be read/);
    assert.equal(okData<boolean>(await api.delete(`/api/tlon/${kbId}/linked-dirs/${link.id}`)), true);
    assert.equal((await search('dugong')).length, 0);
    assert.ok((await raw()).every((s) => !s.path.startsWith(`${link.prefix}/`)));
    assert.equal((await api.post(`/api/tlon/${kbId}/linked-dirs/${link.id}/retry`)).status, 404);
  });
});
