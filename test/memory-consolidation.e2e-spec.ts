import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { apiClient, okData } from '#testing/api-client.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

interface MemoryState {
  exists: boolean;
  totalBytes: number;
  topicCount: number;
  lastConsolidatedAt: string | null;
  lastAttempt: { at: string; outcome: string; reason?: string } | null;
  consolidating: boolean;
}

const OLD_MEMORY = [
  '# now',
  '## State | migrating the billing service to Postgres 16',
  '',
  '# History',
  ...Array.from(
    { length: 12 },
    (_, i) =>
      `## 2025-03-${String(10 + i).padStart(2, '0')}-0900 | step ${i}  [by: chat#ab${i}c]\nDid part ${i} of the migration; the runbook is docs/migrate.md.`,
  ),
].join('\n');
const OLD_TOPIC = '# Deploy\nDeploys go through `make release`; staging first, then prod after a smoke test.\n';

const NEW_MEMORY =
  '# now\n## State | billing migration: 12 steps done, cut-over next\nSee topics/migration.md and topics/deploy.md.\n';
const NEW_MIGRATION = [
  '# Billing migration to Postgres 16',
  ...Array.from(
    { length: 12 },
    (_, i) => `- 2025-03-${String(10 + i).padStart(2, '0')}: step ${i} done (runbook docs/migrate.md)`,
  ),
].join('\n');

describe('memory consolidation', () => {
  let model: ScriptedModelServer;
  let server: TestServer;
  const post = (path: string, body: object = {}) => apiClient(server).post(path, body);
  const get = (path: string) => apiClient(server).get(path);

  async function space(name: string): Promise<{ id: string; path: string }> {
    return okData<{ id: string; path: string }>(await post('/api/spaces', { name }));
  }
  function writeMemory(path: string, memory: string | null, topics: Record<string, string> = {}): void {
    mkdirSync(join(path, '.svc', 'memory', 'topics'), { recursive: true });
    if (memory !== null) writeFileSync(join(path, '.svc', 'memory.md'), memory);
    for (const [name, text] of Object.entries(topics))
      writeFileSync(join(path, '.svc', 'memory', 'topics', `${name}.md`), text);
  }
  const memoryOf = (path: string): string => readFileSync(join(path, '.svc', 'memory.md'), 'utf8');
  const topicsOf = (path: string): string[] => readdirSync(join(path, '.svc', 'memory', 'topics')).sort();
  async function state(spaceId: string): Promise<MemoryState> {
    return okData<MemoryState>(await get(`/api/spaces/${spaceId}/memory`));
  }
  const consolidate = (spaceId: string) => post(`/api/spaces/${spaceId}/memory/consolidate`);
  async function finished(spaceId: string): Promise<MemoryState> {
    // Embedded mode's queue can take a few seconds to pick a job up.
    await waitFor(async () => !(await state(spaceId)).consolidating, 15_000, 'consolidation finished');
    return state(spaceId);
  }

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({
      env: {
        SVC_AI_PROVIDER: 'anthropic',
        SVC_AI_API_URL: model.url,
        SVC_AI_API_KEY: 'x',
        SVC_AI_MODEL: 'scripted-model',
        SVC_AGENT_RETRY_BASE_MS: '20',
      },
    });
  });
  after(async () => {
    await server?.stop();
    await model?.close();
  });
  beforeEach(() => model.reset());
  let consolidated: { id: string; path: string } | null = null;

  it('refuses an unknown space (404) and empty memory (started:false, reason empty)', async () => {
    const missing = await consolidate('3f1e0e52-0000-4000-8000-000000000000');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.success, false);

    const { id, path } = await space('empty memory');
    assert.deepEqual((await consolidate(id)).body, { success: true, data: { started: false, reason: 'empty' } });
    writeMemory(path, '  \n\n');
    const blank = await consolidate(id);
    assert.equal(blank.status, 200);
    assert.deepEqual(blank.body, { success: true, data: { started: false, reason: 'empty' } });
    assert.equal((await state(id)).consolidating, false);
    assert.equal(model.requests.length, 0);
  });

  it('consolidates in the background: consolidating while it runs, one run at a time, files rewritten, snapshot kept', async () => {
    const { id, path } = await space('consolidate');
    writeMemory(path, OLD_MEMORY, { deploy: OLD_TOPIC, 'Scratch Notes': 'temporary: try pg_upgrade --link\n' });
    const before = await state(id);
    assert.equal(before.topicCount, 2);
    model.enqueue({
      steps: [
        { delayMs: 1500 },
        { text: 'Here it is.\n=== FILE: memory.md ===\n' },
        { text: NEW_MEMORY },
        { text: `=== FILE: topics/Migration.md ===\n${NEW_MIGRATION}\n- tried: pg_upgrade --link\n` },
        { text: '=== KEEP: topics/deploy.md ===\n=== END ===\n' },
      ],
    });

    // Two clicks at once start one run.
    const answers = await Promise.all([consolidate(id), consolidate(id)]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200],
    );
    const data = answers.map((a) => a.body.data as { started: boolean; reason?: string });
    assert.deepEqual(data.map((d) => d.started).sort(), [false, true], JSON.stringify(data));
    assert.equal(data.find((d) => !d.started)!.reason, 'already-running');

    assert.equal((await state(id)).consolidating, true);
    const [sent] = await model.waitForRequests(1, 15_000);
    assert.equal((await state(id)).consolidating, true, 'still consolidating while the model replies');
    assert.deepEqual((await consolidate(id)).body, {
      success: true,
      data: { started: false, reason: 'already-running' },
    });
    // The model saw every file, in the reply format.
    const body = JSON.stringify(sent!.body);
    assert.ok(body.includes('=== FILE: memory.md ==='));
    assert.ok(body.includes('=== FILE: topics/deploy.md ==='));
    assert.ok(body.includes('step 11'));
    assert.equal(sent!.body.model, 'scripted-model');

    const after = await finished(id);
    assert.equal(memoryOf(path), NEW_MEMORY);
    assert.deepEqual(topicsOf(path), ['deploy.md', 'migration.md']);
    assert.equal(readFileSync(join(path, '.svc', 'memory', 'topics', 'deploy.md'), 'utf8'), OLD_TOPIC);
    assert.match(readFileSync(join(path, '.svc', 'memory', 'topics', 'migration.md'), 'utf8'), /step 11 done/);
    assert.equal(after.exists, true);
    assert.equal(after.topicCount, 2);
    assert.equal(after.lastAttempt?.outcome, 'committed');
    assert.equal(after.lastAttempt?.reason, undefined);
    assert.ok(after.lastConsolidatedAt && !Number.isNaN(Date.parse(after.lastConsolidatedAt)));
    assert.equal(after.lastConsolidatedAt, after.lastAttempt?.at);
    // The memory as it was can be restored from the snapshot.
    const snapshots = join(path, '.svc', 'memory', '.snapshots');
    assert.deepEqual(readdirSync(snapshots), ['initial']);
    assert.equal(readFileSync(join(snapshots, 'initial', 'memory.md'), 'utf8'), OLD_MEMORY);
    assert.deepEqual(readdirSync(join(snapshots, 'initial', 'topics')).sort(), ['Scratch Notes.md', 'deploy.md']);
    assert.equal(readFileSync(join(snapshots, 'initial', 'topics', 'deploy.md'), 'utf8'), OLD_TOPIC);
    const record = JSON.parse(readFileSync(join(path, '.svc', 'memory', '.state.json'), 'utf8'));
    assert.equal(record.lastAttempt.outcome, 'committed');
    consolidated = { id, path };
  });

  it('snapshots again before the next run, under a timestamp, keeping "initial"', async () => {
    const { id, path } = consolidated!;
    model.enqueue({
      steps: [
        {
          text: `=== FILE: memory.md ===\n${NEW_MEMORY}=== KEEP: topics/deploy.md ===\n=== KEEP: topics/migration.md ===\n`,
        },
      ],
    });
    assert.equal((await consolidate(id)).body.data.started, true);
    const again = await finished(id);
    assert.equal(again.lastAttempt?.outcome, 'committed');
    assert.deepEqual(topicsOf(path), ['deploy.md', 'migration.md']);
    const snapshots = join(path, '.svc', 'memory', '.snapshots');
    const names = readdirSync(snapshots).sort();
    assert.equal(names.length, 2);
    assert.equal(names[1], 'initial');
    assert.match(names[0]!, /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/);
    assert.equal(readFileSync(join(snapshots, names[0]!, 'memory.md'), 'utf8'), NEW_MEMORY);
    assert.equal(readFileSync(join(snapshots, 'initial', 'memory.md'), 'utf8'), OLD_MEMORY);
  });

  it('leaves memory as it was and records the failure when the reply is unusable', async () => {
    // One space per kind of bad reply, consolidated side by side; the reply is picked by the space's memory.
    const cases = {
      'no-memory-section': {
        steps: [{ delayMs: 200 }, { text: `=== FILE: topics/migration.md ===\n${NEW_MIGRATION}\n=== END ===` }],
      },
      'drops-most': { steps: [{ text: '=== FILE: memory.md ===\n# now\nall good\n=== END ===' }] },
      escapes: { steps: [{ text: `=== FILE: memory.md ===\n${OLD_MEMORY}\n=== FILE: ../../escape.md ===\nx\n` }] },
      'provider-fails': { status: 400, error: 'bad request' },
      'cut-off': { steps: [{ text: `=== FILE: memory.md ===\n${OLD_MEMORY}` }, { stop: 'max_tokens' as const }] },
    };
    const expected: Record<keyof typeof cases, string> = {
      'no-memory-section': 'invalid-response',
      'drops-most': 'shrunk',
      escapes: 'invalid-path',
      'provider-fails': 'model-error',
      'cut-off': 'truncated',
    };
    model.respond((req) => {
      const body = JSON.stringify(req.body);
      const name = (Object.keys(cases) as Array<keyof typeof cases>).find((c) => body.includes(`case ${c};`));
      return name ? cases[name] : undefined;
    });
    const spaces = await Promise.all(
      (Object.keys(cases) as Array<keyof typeof cases>).map(async (name) => {
        const created = await space(`bad reply ${name}`);
        const memory = `${OLD_MEMORY}\n(case ${name};)\n`;
        writeMemory(created.path, memory, { deploy: OLD_TOPIC });
        return { ...created, name, memory };
      }),
    );
    for (const s of spaces)
      assert.deepEqual((await consolidate(s.id)).body, { success: true, data: { started: true } }, s.name);
    for (const s of spaces) {
      const after = await finished(s.id);
      assert.deepEqual([after.lastAttempt?.outcome, after.lastAttempt?.reason], ['failed', expected[s.name]], s.name);
      assert.equal(after.lastConsolidatedAt, null, s.name);
      assert.equal(memoryOf(s.path), s.memory, s.name);
      assert.deepEqual(topicsOf(s.path), ['deploy.md'], s.name);
      assert.equal(readFileSync(join(s.path, '.svc', 'memory', 'topics', 'deploy.md'), 'utf8'), OLD_TOPIC, s.name);
      assert.equal(
        existsSync(join(s.path, '.svc', 'memory', '.snapshots')),
        false,
        `${s.name}: nothing replaced, nothing snapshotted`,
      );
      assert.equal(existsSync(join(s.path, 'escape.md')), false);
      assert.equal(existsSync(join(s.path, '.svc', 'escape.md')), false);
    }
    assert.equal(model.requests.length, spaces.length);
  });

  it('records failed/no-model when no model source is configured', async () => {
    const { id, path } = await space('no model');
    writeMemory(path, OLD_MEMORY);
    const config = await get('/api/config');
    for (const source of config.body.data.aiSources.sources as Array<{ id: string }>) {
      assert.equal((await apiClient(server).del(`/api/ai-sources/sources/${source.id}`)).status, 200);
    }
    assert.equal((await consolidate(id)).body.data.started, true);
    const after = await finished(id);
    assert.deepEqual(after.lastAttempt && { outcome: after.lastAttempt.outcome, reason: after.lastAttempt.reason }, {
      outcome: 'failed',
      reason: 'no-model',
    });
    assert.equal(after.lastConsolidatedAt, null);
    assert.equal(memoryOf(path), OLD_MEMORY);
    assert.equal(model.requests.length, 0);
  });
});

describe(
  'memory consolidation across two replicas',
  { skip: testMode() === 'services' ? false : 'needs Redis' },
  () => {
    let replicas: Replicas;
    let model: ScriptedModelServer;
    let a: TestServer;
    let b: TestServer;
    const post = (s: TestServer, p: string, body: object = {}) => apiClient(s).post(p, body);
    const get = (s: TestServer, p: string) => apiClient(s).get(p);
    before(async () => {
      replicas = await startReplicas();
      ({ model, a, b } = replicas);
    });
    after(async () => {
      await replicas?.stop();
    });

    it('a run started on A is reported and refused on B, and runs once', async () => {
      const created = (await post(a, '/api/spaces', { name: 'replicated memory' })).body.data as {
        id: string;
        path: string;
      };
      mkdirSync(join(created.path, '.svc'), { recursive: true });
      writeFileSync(join(created.path, '.svc', 'memory.md'), OLD_MEMORY);
      model.enqueue({ steps: [{ delayMs: 1500 }, { text: `=== FILE: memory.md ===\n${OLD_MEMORY}\n=== END ===` }] });
      assert.deepEqual((await post(a, `/api/spaces/${created.id}/memory/consolidate`)).body.data, { started: true });
      assert.equal((await get(b, `/api/spaces/${created.id}/memory`)).body.data.consolidating, true);
      assert.deepEqual((await post(b, `/api/spaces/${created.id}/memory/consolidate`)).body.data, {
        started: false,
        reason: 'already-running',
      });
      await waitFor(
        async () => !(await get(b, `/api/spaces/${created.id}/memory`)).body.data.consolidating,
        15_000,
        'consolidation finished',
      );
      const state = (await get(a, `/api/spaces/${created.id}/memory`)).body.data;
      assert.equal(state.lastAttempt.outcome, 'committed');
      assert.equal(model.requests.length, 1);
    });
  },
);
