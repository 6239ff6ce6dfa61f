import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import type { JobMap } from '#contracts/jobs.js';
import { DEFAULT_MEMORY_PREFERENCES, type MemoryPreferences } from '#contracts/spaces.js';
import type { AppConfig } from '#core/config/app-config.js';
import { DomainError } from '#core/errors/domain-error.js';
import { MemoryConsolidationService } from '#core/memory/memory-consolidation.service.js';
import type { ModelSourcesService, ResolvedModel } from '#core/models/model-sources.service.js';
import type { JobOptions, JobQueue } from '#core/ports/job-queue.port.js';
import {
  type ModelEndpoint,
  type ModelInfo,
  ModelProvider,
  type ModelProviderKind,
  type ModelRequest,
  type ModelStreamEvent,
} from '#core/ports/model-provider.port.js';
import type { Space } from '#core/kernel/space.js';
import type { SpacesService } from '#core/spaces/spaces.service.js';
import { FakeClock } from '#testing/fakes.js';
import { NodeFileStore } from '../files/node-file-store.js';
import { LocalConsolidationLock } from './consolidation-locks.js';
import { NodeMemoryFiles } from './node-memory-files.js';

/** Plays text replies; `before` runs when a request arrives (to change files meanwhile). */
class ScriptedProvider extends ModelProvider {
  readonly requests: ModelRequest[] = [];
  replies: string[] = [];
  before: (() => void) | null = null;

  async *stream(_endpoint: ModelEndpoint, request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    this.requests.push(request);
    this.before?.();
    const text = this.replies.shift() ?? '';
    yield { type: 'text_start', index: 0 };
    yield { type: 'text_delta', index: 0, delta: text };
    yield { type: 'text_end', index: 0, text };
    yield { type: 'end', stopReason: 'end_turn' };
  }

  info(_provider: ModelProviderKind, _model: string): ModelInfo {
    return { contextWindow: 200_000, maxOutputTokens: 8_192 };
  }
}

class RecordingQueue {
  readonly added: Array<{ name: string; data: JobMap['memory.consolidate']; options?: JobOptions }> = [];
  async add(name: string, data: JobMap['memory.consolidate'], options?: JobOptions): Promise<string> {
    this.added.push({ name, data, options });
    return options?.jobId ?? String(this.added.length);
  }
}

const MODEL: ResolvedModel = {
  source: {} as ResolvedModel['source'],
  model: 'm',
  endpoint: { provider: 'anthropic', apiUrl: 'http://127.0.0.1:9', apiKey: 'k' },
};

describe('MemoryConsolidationService on real files', () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-memory-'));
  const clock = new FakeClock(Date.UTC(2025, 5, 1, 12, 0, 0));
  let space: Space;
  let provider: ScriptedProvider;
  let queue: RecordingQueue;
  let lock: LocalConsolidationLock;
  let service: MemoryConsolidationService;
  let model: ResolvedModel | null;
  let n = 0;

  const svc = (...parts: string[]) => join(space.path, '.svc', ...parts);
  const read = (...parts: string[]) => readFileSync(svc(...parts), 'utf8');
  const state = () =>
    JSON.parse(read('memory', '.state.json')) as {
      lastConsolidatedAt?: string;
      lastAttempt?: { outcome: string; reason?: string };
    };
  const setPreferences = (memory: Partial<MemoryPreferences>) => (space.preferences = { memory });
  /** Runs the job the last start enqueued. */
  async function runQueued() {
    const job = queue.added[queue.added.length - 1]!;
    return service.run(job.data, job.options!.jobId!);
  }

  before(() => Logger.overrideLogger(false));
  beforeEach(() => {
    n++;
    const path = join(root, `space-${n}`);
    mkdirSync(join(path, '.svc'), { recursive: true });
    space = {
      id: `space-${n}`,
      name: 's',
      path,
      icon: 'x',
      color: null,
      isTemp: false,
      ownsFolder: true,
      sortOrder: 0,
      preferences: {},
      createdAt: new Date(),
      updatedAt: new Date(),
    };
    const spaces = {
      get: async (id: string) => {
        if (id !== space.id) throw DomainError.notFound('Space not found');
        return space;
      },
      preferencesOf: (s: Space) => ({ memory: { ...DEFAULT_MEMORY_PREFERENCES, ...(s.preferences.memory ?? {}) } }),
    } as unknown as SpacesService;
    provider = new ScriptedProvider();
    queue = new RecordingQueue();
    lock = new LocalConsolidationLock();
    model = MODEL;
    const models = { current: async () => model } as unknown as ModelSourcesService;
    const config = { agent: { maxRetries: 2, retryBaseMs: 1, maxOutputTokens: 16_000 } } as AppConfig;
    service = new MemoryConsolidationService(
      spaces,
      new NodeFileStore({ trashDir: join(root, 'trash') }),
      new NodeMemoryFiles(),
      lock,
      queue as unknown as JobQueue,
      models,
      provider,
      clock,
      config,
    );
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('starts once per space, runs, rewrites the files and releases the lease', async () => {
    assert.deepEqual(await service.start(space.id, 'manual'), { started: false, reason: 'empty' });
    await assert.rejects(
      service.start('missing', 'manual'),
      (err: unknown) => err instanceof DomainError && err.kind === 'not_found',
    );
    writeFileSync(svc('memory.md'), '# now\nold state\n');
    assert.deepEqual(await service.start(space.id, 'manual'), { started: true });
    assert.deepEqual(await service.start(space.id, 'manual'), { started: false, reason: 'already-running' });
    assert.equal(queue.added.length, 1);
    const [job] = queue.added;
    assert.equal(job!.name, 'memory.consolidate');
    assert.deepEqual(job!.data, { spaceId: space.id, trigger: 'manual' });
    assert.match(job!.options!.jobId!, new RegExp(`^memory-consolidate-${space.id}-[0-9a-f-]{36}$`));
    assert.equal(await lock.isConsolidating(space.id), true);

    provider.replies.push(
      '=== FILE: memory.md ===\n# now\nnew state\n=== FILE: topics/History.md ===\nold state, moved\n=== END ===',
    );
    assert.deepEqual(await runQueued(), { outcome: 'committed', snapshot: 'initial' });
    assert.equal(await lock.isConsolidating(space.id), false);
    assert.equal(read('memory.md'), '# now\nnew state\n');
    assert.equal(read('memory', 'topics', 'history.md'), 'old state, moved\n');
    assert.equal(read('memory', '.snapshots', 'initial', 'memory.md'), '# now\nold state\n');
    assert.deepEqual(state().lastAttempt, { at: new Date(clock.now()).toISOString(), outcome: 'committed' });
    assert.equal(state().lastConsolidatedAt, new Date(clock.now()).toISOString());
    assert.equal(provider.requests[0]!.model, 'm');
    assert.match(provider.requests[0]!.system, /=== FILE: memory\.md ===/);
  });

  it('keeps "initial" and the three newest snapshots on disk', async () => {
    writeFileSync(svc('memory.md'), '# now\nversion 0\n');
    for (let i = 1; i <= 6; i++) {
      clock.advance(60_000);
      provider.replies.push(`=== FILE: memory.md ===\n# now\nversion ${i}\n`);
      assert.equal((await service.start(space.id, 'manual')).started, true);
      assert.equal((await runQueued())?.outcome, 'committed');
    }
    const names = readdirSync(svc('memory', '.snapshots')).sort();
    assert.equal(names.length, 4);
    assert.equal(names[3], 'initial');
    assert.equal(read('memory', '.snapshots', 'initial', 'memory.md'), '# now\nversion 0\n');
    assert.deepEqual(
      names.slice(0, 3).map((name) => read('memory', '.snapshots', name, 'memory.md')),
      ['# now\nversion 3\n', '# now\nversion 4\n', '# now\nversion 5\n'],
    );
  });

  it('carries over text appended meanwhile, refuses other concurrent edits', async () => {
    writeFileSync(svc('memory.md'), '# now\nA\n');
    provider.before = () => appendFileSync(svc('memory.md'), '\n## 2025-06-01-1200 | noted meanwhile\n');
    provider.replies.push('=== FILE: memory.md ===\n# now\nB\n');
    await service.start(space.id, 'manual');
    assert.equal((await runQueued())?.outcome, 'committed');
    assert.equal(read('memory.md'), '# now\nB\n\n## 2025-06-01-1200 | noted meanwhile\n');

    provider.before = () => writeFileSync(svc('memory.md'), '# now\nrewritten by hand\n');
    provider.replies.push('=== FILE: memory.md ===\n# now\nC\n\n## 2025-06-01-1200 | noted meanwhile\n');
    await service.start(space.id, 'manual');
    assert.deepEqual(await runQueued(), { outcome: 'failed', reason: 'changed' });
    assert.equal(read('memory.md'), '# now\nrewritten by hand\n');
    assert.equal(state().lastAttempt?.reason, 'changed');
  });

  it('records no-model without calling anything, and skips a run whose lease another run holds', async () => {
    writeFileSync(svc('memory.md'), '# now\nA\n');
    model = null;
    await service.start(space.id, 'manual');
    assert.deepEqual(await runQueued(), { outcome: 'failed', reason: 'no-model' });
    assert.equal(provider.requests.length, 0);
    assert.equal(read('memory.md'), '# now\nA\n');
    assert.equal(await lock.isConsolidating(space.id), false);

    model = MODEL;
    assert.equal(await lock.acquire(space.id, 'someone-else', 60_000), true);
    assert.equal(await service.run({ spaceId: space.id, trigger: 'manual' }, 'memory-consolidate-stale'), null);
    assert.equal(provider.requests.length, 0);
    assert.equal(await lock.isConsolidating(space.id), true, "another run's lease is left alone");
  });

  it('afterTurn enqueues an automatic run only when preferences and the cadence say so', async () => {
    const big = `# now\n${'x'.repeat(9 * 1024)}\n`; // over diligent's 8 KB, under balanced's 16 KB
    writeFileSync(svc('memory.md'), '# now\nsmall\n');
    assert.equal(await service.afterTurn(space.id), null);
    writeFileSync(svc('memory.md'), big);
    setPreferences({ autoConsolidate: false });
    assert.equal(await service.afterTurn(space.id), null);
    setPreferences({ enabled: false });
    assert.equal(await service.afterTurn(space.id), null);
    setPreferences({ cadence: 'balanced' });
    assert.equal(await service.afterTurn(space.id), null);
    assert.equal(queue.added.length, 0);
    setPreferences({});
    assert.deepEqual(await service.afterTurn(space.id), { started: true });
    assert.deepEqual(queue.added[0]!.data, { spaceId: space.id, trigger: 'auto' });
    assert.deepEqual(await service.afterTurn(space.id), { started: false, reason: 'already-running' });
    provider.replies.push(
      `=== FILE: memory.md ===\n# now\nshort\n=== FILE: topics/detail.md ===\n${'x'.repeat(9 * 1024)}\n`,
    );
    assert.equal((await runQueued())?.outcome, 'committed');
    // Consolidated just now: nothing for an hour, even when memory.md grows again.
    writeFileSync(svc('memory.md'), big);
    assert.equal(await service.afterTurn(space.id), null);
    clock.advance(3_600_000);
    assert.deepEqual(await service.afterTurn(space.id), { started: true });
    // Never throws: an unknown space is just nothing to do.
    assert.equal(await service.afterTurn('missing'), null);
  });
});
