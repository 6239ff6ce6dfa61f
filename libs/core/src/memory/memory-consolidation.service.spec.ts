import assert from 'node:assert/strict';
import { join } from 'node:path';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeConsolidationLock, FakeFileStore, FakeMemoryFiles, FakeStoreFolders } from '#testing/fake-files.js';
import { FakeModelProvider, textResponse } from '#testing/fake-model-provider.js';
import { FakeSettingsRepository } from '#testing/fake-settings.js';
import { RecordingJobQueue } from '#testing/fake-triggers.js';
import { FakeClock } from '#testing/fakes.js';
import { spacesOn } from '#testing/service-worlds.js';
import type { AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { consolidationJobId } from '../kernel/job-ids.js';
import type { Space } from '../kernel/space.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import { SpacesService } from '../spaces/spaces.service.js';
import { CONSOLIDATE_JOB, MemoryConsolidationService } from './memory-consolidation.service.js';

Logger.overrideLogger(false);

const MEMORY = '# now\n- the user likes tea\n';

describe('MemoryConsolidationService', () => {
  let clock: FakeClock;
  let store: FakeFileStore;
  let lock: FakeConsolidationLock;
  let queue: RecordingJobQueue;
  let models: ModelSourcesService;
  let provider: FakeModelProvider;
  let spaces: SpacesService;
  let service: MemoryConsolidationService;
  let space: Space;

  const memoryPath = () => join(space.path, '.svc', 'memory.md');
  const statePath = () => join(space.path, '.svc', 'memory', '.state.json');
  const state = () => JSON.parse(store.text(statePath()) ?? '{}') as Record<string, unknown>;

  beforeEach(async () => {
    clock = new FakeClock();
    store = new FakeFileStore();
    lock = new FakeConsolidationLock(() => clock.now());
    queue = new RecordingJobQueue();
    provider = new FakeModelProvider();
    const bus = new RecordingEventBus();
    const config = {
      dataDir: '/data',
      spaceRoots: null,
      modelSeed: null,
      agent: { maxRetries: 2, retryBaseMs: 1 },
    } as unknown as AppConfig;
    models = new ModelSourcesService(new FakeSettingsRepository(), bus, clock, config);
    spaces = spacesOn(new FakeStoreFolders(store), { config, bus });
    service = new MemoryConsolidationService(
      spaces,
      store,
      new FakeMemoryFiles(),
      lock,
      queue,
      models,
      provider,
      clock,
      config,
    );
    space = await spaces.create({ name: 'Notes' });
  });

  describe('start', () => {
    it('refuses an unknown space as not found, enqueueing nothing', async () => {
      await assert.rejects(
        service.start('00000000-0000-4000-8000-000000000000', 'manual'),
        (err: unknown) => err instanceof DomainError && err.kind === 'not_found',
      );
      assert.equal(queue.jobs.size, 0);
    });

    it('answers "empty" for a space without memory, taking no lease', async () => {
      assert.deepEqual(await service.start(space.id, 'manual'), { started: false, reason: 'empty' });
      store.addFile(memoryPath(), '   \n');
      assert.deepEqual(await service.start(space.id, 'manual'), { started: false, reason: 'empty' }, 'blank is empty');
      assert.equal(queue.jobs.size, 0);
      assert.equal(await lock.isConsolidating(space.id), false);
    });

    it('enqueues one job under the lease, then answers "already-running" while it is held', async () => {
      store.addFile(memoryPath(), MEMORY);
      assert.deepEqual(await service.start(space.id, 'manual'), { started: true });
      const jobs = queue.named(CONSOLIDATE_JOB);
      assert.equal(jobs.length, 1);
      assert.deepEqual(jobs[0]!.data, { spaceId: space.id, trigger: 'manual' });
      const prefix = consolidationJobId(space.id).slice(0, -36);
      assert.ok(jobs[0]!.id.startsWith(prefix) && jobs[0]!.id !== prefix, `a job id of the space: ${jobs[0]!.id}`);
      assert.equal(lock.leases.get(space.id)?.token, jobs[0]!.id, 'the lease is held by the job');
      assert.ok(
        lock.leases.get(space.id)!.expiresAt - clock.now() > 60_000,
        'the lease covers the wait in the queue, not only the enqueue',
      );

      assert.deepEqual(await service.start(space.id, 'manual'), { started: false, reason: 'already-running' });
      assert.equal(queue.named(CONSOLIDATE_JOB).length, 1);
    });

    it('releases the lease when the job cannot be enqueued', async () => {
      store.addFile(memoryPath(), MEMORY);
      queue.add = async () => {
        throw new Error('queue down');
      };
      await assert.rejects(service.start(space.id, 'manual'), /queue down/);
      assert.equal(await lock.isConsolidating(space.id), false);
    });
  });

  describe('afterTurn', () => {
    it('starts nothing while automatic consolidation is off, and never throws', async () => {
      store.addFile(memoryPath(), MEMORY.repeat(2_000));
      await spaces.updatePreferences(space.id, { memory: { autoConsolidate: false } });
      assert.equal(await service.afterTurn(space.id), null);
      assert.equal(await service.afterTurn('00000000-0000-4000-8000-000000000000'), null, 'an unknown space');
      assert.equal(queue.jobs.size, 0);
    });
  });

  describe('run', () => {
    it('skips a space that no longer exists and frees its lease', async () => {
      await lock.acquire('gone', 'job-1', 60_000);
      assert.equal(await service.run({ spaceId: 'gone', trigger: 'manual' }, 'job-1'), null);
      assert.equal(await lock.isConsolidating('gone'), false);
    });

    it('skips when another run holds the space, leaving that lease alone', async () => {
      store.addFile(memoryPath(), MEMORY);
      await lock.acquire(space.id, 'other-job', 60_000);
      assert.equal(await service.run({ spaceId: space.id, trigger: 'manual' }, 'job-1'), null);
      assert.equal(lock.leases.get(space.id)?.token, 'other-job');
      assert.equal(store.text(statePath()), undefined, 'no attempt recorded');
    });

    it('without a model: records a failed attempt (no-model), keeps the memory and releases the lease', async () => {
      store.addFile(memoryPath(), MEMORY);
      const outcome = await service.run({ spaceId: space.id, trigger: 'manual' }, 'job-1');
      assert.deepEqual(outcome, { outcome: 'failed', reason: 'no-model' });
      assert.deepEqual(state().lastAttempt, {
        at: new Date(clock.now()).toISOString(),
        outcome: 'failed',
        reason: 'no-model',
      });
      assert.equal(state().lastConsolidatedAt, undefined);
      assert.equal(store.text(memoryPath()), MEMORY);
      assert.equal(await lock.isConsolidating(space.id), false);
      assert.equal(provider.requests.length, 0);
    });

    it('an empty memory fails as "empty" without asking the model', async () => {
      await models.addSource({ name: 'Main', provider: 'anthropic', apiUrl: 'https://api.example.com', model: 'm' });
      const outcome = await service.run({ spaceId: space.id, trigger: 'auto' }, 'job-1');
      assert.deepEqual(outcome, { outcome: 'failed', reason: 'empty' });
      assert.equal(provider.requests.length, 0);
    });

    it('a reply that is not the expected format changes nothing and is recorded as invalid', async () => {
      await models.addSource({ name: 'Main', provider: 'anthropic', apiUrl: 'https://api.example.com', model: 'm' });
      store.addFile(memoryPath(), MEMORY);
      provider.respond(textResponse('I would rather not.'));
      const outcome = await service.run({ spaceId: space.id, trigger: 'manual' }, 'job-1');
      assert.equal(outcome?.outcome, 'failed');
      assert.equal(outcome?.outcome === 'failed' && outcome.reason, 'invalid-response');
      assert.equal(provider.requests.length, 1, 'one model call');
      assert.equal(provider.requests[0]!.tools.length, 0, 'the consolidation offers no tools');
      assert.match(JSON.stringify(provider.requests[0]!.messages), /the user likes tea/, 'the memory is sent');
      assert.equal(store.text(memoryPath()), MEMORY);
      assert.equal((state().lastAttempt as { reason: string }).reason, 'invalid-response');
      assert.equal(await lock.isConsolidating(space.id), false);
    });

    it('a model that is too small for the memory fails as "too-large" without a call', async () => {
      provider = new FakeModelProvider({ contextWindow: 100, maxOutputTokens: 100, pricing: { input: 0, output: 0 } });
      const config = { agent: { maxRetries: 0, retryBaseMs: 1 } } as unknown as AppConfig;
      service = new MemoryConsolidationService(
        spaces,
        store,
        new FakeMemoryFiles(),
        lock,
        queue,
        models,
        provider,
        clock,
        config,
      );
      await models.addSource({ name: 'Main', provider: 'anthropic', apiUrl: 'https://api.example.com', model: 'm' });
      store.addFile(memoryPath(), MEMORY.repeat(50));
      const outcome = await service.run({ spaceId: space.id, trigger: 'manual' }, 'job-1');
      assert.deepEqual(outcome, { outcome: 'failed', reason: 'too-large' });
      assert.equal(provider.requests.length, 0);
    });
  });
});
