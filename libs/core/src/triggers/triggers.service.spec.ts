import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeAppRepository } from '#testing/fake-apps.js';
import { MemoryTriggerStore, RecordingJobQueue } from '#testing/fake-triggers.js';
import { FakeClock } from '#testing/fakes.js';
import type { AppRunsService, RunTrigger } from '../apps/agent/app-runs.service.js';
import { type App, IDLE_AUTOMATION } from '../apps/app.js';
import type { AppsService } from '../apps/apps.service.js';
import { validateSpec } from '../apps/spec/validate-spec.js';
import { TriggerScheduler } from './trigger-scheduler.js';
import { TriggersService } from './triggers.service.js';

const T0 = Date.UTC(2026, 5, 1, 8, 0, 0);

describe('TriggerScheduler and TriggersService (schedules)', () => {
  let clock: FakeClock;
  let repo: FakeAppRepository;
  let store: MemoryTriggerStore;
  let queue: RecordingJobQueue;
  let scheduler: TriggerScheduler;
  let service: TriggersService;
  let started: RunTrigger[];
  let skipped: string[];
  let paused: string[];
  let app: App;

  beforeEach(async () => {
    clock = new FakeClock(T0);
    repo = new FakeAppRepository(() => clock.now());
    store = new MemoryTriggerStore();
    queue = new RecordingJobQueue();
    const bus = new RecordingEventBus();
    scheduler = new TriggerScheduler(store, queue, repo, bus, clock);
    started = [];
    skipped = [];
    paused = [];
    const runs = {
      startRun: async (_id: string, trigger: RunTrigger) => {
        started.push(trigger);
        return { outcome: 'started', runId: 'r', conversationId: 'c' };
      },
      skipRun: async (_id: string, reason: string) => {
        skipped.push(reason);
        return { outcome: 'skipped', runId: null, reason };
      },
    } as unknown as AppRunsService;
    const apps = {
      pause: async (id: string) => {
        paused.push(id);
        const updated = await repo.update(id, { status: 'paused' });
        await scheduler.sync(updated as App);
        return updated;
      },
    } as unknown as AppsService;
    service = new TriggersService(repo, apps, runs, store, scheduler, queue, bus, clock);
    const spec = validateSpec(
      {
        name: 'Ticker',
        version: '1.0.0',
        author: 'a',
        description: 'd',
        type: 'automation',
        system_prompt: 'p',
        subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '5s' } } }],
      },
      T0,
    );
    app = (await repo.install({
      id: '00000000-0000-4000-8000-000000000001',
      spaceId: null,
      spec,
      status: 'active',
      userConfig: {},
      userOverrides: {},
      permissions: { granted: [], denied: [] },
      upgradeStrategy: 'notify',
      builtIn: false,
      automation: { ...IDLE_AUTOMATION },
    })) as App;
  });

  const due = () => queue.named('trigger.schedule').at(-1)!.data;

  it('sync stores the next occurrence and queues its job once, however often it runs', async () => {
    await scheduler.sync(app);
    await scheduler.sync(app);
    await scheduler.reconcile();
    const jobs = queue.named('trigger.schedule');
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.data.scheduledMs, app.installedAt.getTime() + 5000);
    assert.equal(jobs[0]!.options.delayMs, app.installedAt.getTime() + 5000 - T0);
  });

  it('two replicas processing one occurrence start one run; the next is queued and shown', async () => {
    await scheduler.sync(app);
    const job = due();
    clock.set(job.scheduledMs + 3);
    await Promise.all([service.fireSchedule(job), service.fireSchedule(job)]);
    assert.equal(started.length, 1);
    assert.equal(started[0]!.type, 'schedule');
    const next = due();
    assert.equal(next.scheduledMs, job.scheduledMs + 5000);
    assert.equal((await repo.findById(app.id))!.automation.nextRunAtMs, next.scheduledMs);
    await service.fireSchedule(job); // a late duplicate (say re-added after a lost job store)
    assert.equal(started.length, 1);
  });

  it('after downtime one catch-up fires, then the schedule continues from now', async () => {
    await scheduler.sync(app);
    const missed = due();
    clock.set(missed.scheduledMs + 60_000); // 12 ticks missed
    await scheduler.reconcile(); // same id: nothing new
    await service.fireSchedule(missed);
    assert.equal(started.length, 1);
    const next = due();
    assert.ok(next.scheduledMs > clock.now() && next.scheduledMs <= clock.now() + 5000);
    assert.equal((next.scheduledMs - app.installedAt.getTime()) % 5000, 0);
  });

  it('a paused app drops its schedule; resuming starts from now with no backlog', async () => {
    await scheduler.sync(app);
    const old = due();
    await scheduler.sync((await repo.update(app.id, { status: 'paused' })) as App);
    assert.equal((await store.schedules(app.id)).length, 0);
    await service.fireSchedule(old);
    assert.equal(started.length, 0, 'a stale job starts nothing');
    clock.set(T0 + 3_600_000);
    await scheduler.sync((await repo.update(app.id, { status: 'active' })) as App);
    assert.ok(due().scheduledMs > clock.now());
  });

  it('backs off after failed runs and pauses the app after five in a row', async () => {
    await scheduler.sync(app);
    const fail = (n: number) =>
      repo.addActivity({
        id: `e${n}`,
        appId: app.id,
        runId: `r${n}`,
        type: 'run_error',
        ts: T0 + n,
        content: { error: 'model down' },
      });
    await fail(1);
    await repo.update(app.id, { automation: { lastRunAtMs: T0, lastError: 'model down' } });
    let job = due();
    clock.set(job.scheduledMs);
    await service.fireSchedule(job);
    assert.equal(started.length, 0);
    assert.match(skipped[0]!, /Backing off after 1 failed run/);
    for (let n = 2; n <= 5; n++) await fail(n);
    job = due();
    clock.set(job.scheduledMs + 10 ** 7);
    await service.fireSchedule(job);
    assert.deepEqual(paused, [app.id]);
    const after = (await repo.findById(app.id))!;
    assert.equal(after.status, 'paused');
    assert.match(after.automation.lastError!, /Paused after 5 failed runs in a row: model down/);
    assert.equal((await store.schedules(app.id)).length, 0);
  });
});
