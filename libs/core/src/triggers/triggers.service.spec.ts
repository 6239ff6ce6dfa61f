import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeAppRepository } from '#testing/fake-apps.js';
import { MemoryTriggerStore, RecordingJobQueue } from '#testing/fake-triggers.js';
import { FakeClock } from '#testing/fakes.js';
import type { AppRunsService, RunTrigger } from '../apps/agent/app-runs.service.js';
import { type App, IDLE_AUTOMATION } from '../kernel/app.js';
import type { AppsService } from '../apps/apps.service.js';
import type { RunStarter } from '../ports/run-starter.port.js';
import { validateSpec } from '../kernel/app-spec/validate-spec.js';
import { occurrenceJobId, occurrenceRunId } from './schedule-timing.js';
import { TriggerScheduler } from './trigger-scheduler.js';
import { DEFAULT_TRIGGER_POLICY, TriggersService } from './triggers.service.js';

const T0 = Date.UTC(2026, 5, 1, 8, 0, 0);

/** What the apps context registers with the scheduler, over the fakes. */
const starterOf = (runs: AppRunsService, apps: AppsService): RunStarter => ({
  startRun: (appId, trigger, options) => runs.startRun(appId, trigger, options),
  startQueuedRun: (appId, trigger, runId) => runs.startQueuedRun(appId, trigger, runId),
  runInProgress: (appId) => runs.runInProgress(appId),
  skipRun: (appId, reason, details) => runs.skipRun(appId, reason, details),
  runMessages: (app, runId) => runs.runMessages(app, runId),
  pause: (appId) => apps.pause(appId),
});

describe('TriggerScheduler and TriggersService (schedules)', () => {
  let clock: FakeClock;
  let repo: FakeAppRepository;
  let store: MemoryTriggerStore;
  let queue: RecordingJobQueue;
  let scheduler: TriggerScheduler;
  let service: TriggersService;
  let started: RunTrigger[];
  let startedRunIds: Array<string | undefined>;
  let runsWithMessages: Set<string>;
  let runs: AppRunsService;
  let apps: AppsService;
  let skipped: string[];
  let skippedDetails: Array<Record<string, unknown>>;
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
    startedRunIds = [];
    runsWithMessages = new Set();
    skipped = [];
    skippedDetails = [];
    paused = [];
    runs = {
      startRun: async (_id: string, trigger: RunTrigger, options: { runId?: string } = {}) => {
        started.push(trigger);
        startedRunIds.push(options.runId);
        if (options.runId) runsWithMessages.add(options.runId);
        return { outcome: 'started', runId: options.runId ?? 'r', conversationId: 'c' };
      },
      runMessages: async (_app: App, runId: string) => (runsWithMessages.has(runId) ? [{ meta: { runId } }] : []),
      skipRun: async (_id: string, reason: string, details: Record<string, unknown> = {}) => {
        skipped.push(reason);
        skippedDetails.push(details);
        return { outcome: 'skipped', runId: null, reason };
      },
    } as unknown as AppRunsService;
    apps = {
      pause: async (id: string) => {
        paused.push(id);
        const updated = await repo.update(id, { status: 'paused' });
        await scheduler.sync(updated as App);
        return updated;
      },
    } as unknown as AppsService;
    scheduler.useRunStarter(starterOf(runs, apps));
    service = new TriggersService(repo, store, scheduler, queue, bus, clock);
    // Ticks every 5 s here; the operator's floor has its own test.
    service.configure({ minIntervalMs: 0 });
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

  /** Counts the store's calls by method (rows read for one app or for all). */
  const countCalls = () => {
    const calls: Record<string, number> = {};
    for (const method of ['schedules', 'putSchedule', 'addSchedules', 'dropSchedules', 'advanceSchedule'] as const) {
      const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
      (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        const name = method === 'schedules' && args[0] === undefined ? 'schedules(all)' : method;
        calls[name] = (calls[name] ?? 0) + 1;
        return original(...args);
      };
    }
    return calls;
  };

  it('a reconcile pass reads the rows once and writes none when nothing changed; lost jobs come back', async () => {
    await scheduler.sync(app);
    const before = [...queue.jobs.keys()];
    queue.jobs.clear(); // a job store restarted empty
    const calls = countCalls();
    await scheduler.reconcile();
    assert.deepEqual(calls, { 'schedules(all)': 1 });
    assert.deepEqual([...queue.jobs.keys()], before);
  });

  it('a reconcile pass rewrites the rows of an app whose schedule changed, and only those', async () => {
    const other = (await repo.install({
      ...app,
      id: '00000000-0000-4000-8000-000000000002',
      spec: { ...app.spec, name: 'Other ticker' },
    })) as App;
    await scheduler.syncAll([app, other]);
    const spec = validateSpec(
      {
        ...app.spec,
        system_prompt: 'p',
        subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '7s' } } }],
      },
      T0,
    );
    await repo.update(app.id, { spec });
    const calls = countCalls();
    await scheduler.reconcile();
    assert.equal(calls['schedules(all)'], 1);
    assert.equal(calls.putSchedule, 1, 'the changed app only');
    const [row] = await store.schedules(app.id);
    assert.equal(row!.nextMs, app.installedAt.getTime() + 7000);
    assert.ok(queue.jobs.has(occurrenceJobId(app.id, 'tick', row!.nextMs)));
    const [kept] = await store.schedules(other.id);
    assert.equal(kept!.nextMs, other.installedAt.getTime() + 5000);
  });

  it('syncAll at start: new rows written, a paused app marked, an app without schedules left alone', async () => {
    const skill = (await repo.install({
      ...app,
      id: '00000000-0000-4000-8000-000000000003',
      spec: { ...app.spec, name: 'Skill', type: 'skill', subscriptions: [] },
    })) as App;
    const pausedApp = (await repo.install({
      ...app,
      id: '00000000-0000-4000-8000-000000000004',
      spec: { ...app.spec, name: 'Paused ticker' },
      status: 'paused',
    })) as App;
    const first = countCalls();
    await scheduler.syncAll([app, skill, pausedApp]);
    // The new app's rows in one write; the paused one marked on its own (rare).
    assert.equal(first.addSchedules, 1);
    assert.equal(first.putSchedule, 1);
    assert.deepEqual((await store.schedules()).map((r) => [r.appId, r.signature === 'paused']).sort(), [
      [app.id, false],
      [pausedApp.id, true],
    ]);
    assert.equal(queue.named('trigger.schedule').length, 1, 'no job for the paused app');
    const calls = countCalls();
    await scheduler.syncAll([app, skill, pausedApp]);
    assert.deepEqual(calls, { 'schedules(all)': 1 }, 'nothing to write the second time');
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

  it("the operator's floor spaces runs of a schedule that asks for less (every 5s, floor 60 s)", async () => {
    service.configure({ minIntervalMs: 60_000 });
    await scheduler.sync(app);
    const job = due();
    clock.set(job.scheduledMs + 3);
    await service.fireSchedule(job);
    assert.equal(started.length, 1);
    assert.equal(due().scheduledMs, job.scheduledMs + 60_000, 'the first tick on its grid a floor later');
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

  it('a paused app queues nothing; resuming runs no backlog and records one run_skipped with the count', async () => {
    await scheduler.sync(app);
    const old = due();
    await scheduler.sync((await repo.update(app.id, { status: 'paused' })) as App);
    const rows = await store.schedules(app.id);
    assert.deepEqual(
      rows.map((r) => [r.signature, r.nextMs]),
      [['paused', T0]],
      'a paused row remembers when the pause began',
    );
    await scheduler.refreshNextRun(app.id, false);
    assert.equal((await repo.findById(app.id))!.automation.nextRunAtMs, null);
    clock.set(old.scheduledMs);
    await service.fireSchedule(old);
    await scheduler.reconcile(); // another replica's pass keeps the paused row
    assert.equal(started.length, 0, 'a stale job starts nothing');
    assert.equal((await store.schedules(app.id))[0]!.nextMs, T0);
    clock.set(T0 + 3_600_000 + 2_500);
    const resumed = (await repo.update(app.id, { status: 'active' })) as App;
    await Promise.all([scheduler.sync(resumed), scheduler.sync(resumed)]); // two replicas at once
    assert.equal(started.length, 0, 'no catch-up run');
    assert.equal(skipped.length, 1, skipped.join(' | '));
    assert.match(skipped[0]!, /^The digital human was paused: 720 scheduled runs skipped/);
    const anchor = app.installedAt.getTime();
    assert.deepEqual(skippedDetails[0], {
      subscriptionId: 'tick',
      skippedCount: 720,
      firstScheduledAt: new Date(anchor + 5000).toISOString(),
      lastScheduledAt: new Date(anchor + 3_600_000).toISOString(),
    });
    assert.equal(due().scheduledMs, anchor + 3_605_000, 'on from the next real occurrence');
    await scheduler.sync(resumed);
    assert.equal(skipped.length, 1, 'reported once');
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
    assert.ok((await store.schedules(app.id)).every((r) => r.signature === 'paused'));
  });

  it('working days outside the table: Monday–Friday, with one warning per year however often it is asked', () => {
    const warnings: unknown[][] = [];
    const logger = (scheduler as unknown as { logger: { warn: (...args: unknown[]) => void } }).logger;
    logger.warn = (...args: unknown[]) => warnings.push(args);
    const cfg = { cron: '0 9 * * *', timezone: 'Asia/Shanghai', workday_calendar: true };
    const fri = Date.parse('2027-02-05T02:00:00Z'); // Friday 2027-02-05 10:00 in Shanghai
    const next = scheduler.nextAfter(cfg, T0, fri, app.id);
    assert.equal(new Date(next!).toISOString(), '2027-02-08T01:00:00.000Z', 'Monday, weekend skipped');
    for (let i = 0; i < 5; i++) scheduler.nextAfter(cfg, T0, fri + i * 86_400_000, app.id);
    assert.equal(warnings.length, 1);
    assert.match(String(warnings[0]![0]), /no table for this year; Monday to Friday assumed/);
    assert.deepEqual((warnings[0]![1] as { year: number }).year, 2027);
  });

  describe('a replica dying between the claim and the run start', () => {
    const LEASE = DEFAULT_TRIGGER_POLICY.claimLeaseMs;
    /** A second replica: its own scheduler and service over the same shared state. */
    const replica = () => {
      const bus = new RecordingEventBus();
      const otherScheduler = new TriggerScheduler(store, queue, repo, bus, clock);
      otherScheduler.useRunStarter(starterOf(runs, apps));
      const otherService = new TriggersService(repo, store, otherScheduler, queue, bus, clock);
      otherService.configure({ minIntervalMs: 0 });
      return { scheduler: otherScheduler, service: otherService };
    };
    /** What the dead replica did: the atomic claim (row moved on, occurrence recorded), nothing after. */
    const claimAndDie = async () => {
      await scheduler.sync(app);
      const job = due();
      clock.set(job.scheduledMs + 2);
      const key = occurrenceJobId(app.id, 'tick', job.scheduledMs);
      const move = {
        appId: app.id,
        subscriptionId: 'tick',
        fromMs: job.scheduledMs,
        toMs: job.scheduledMs + 5000,
        key,
      };
      assert.equal(await store.claimOccurrence(move, clock.now()), true);
      assert.equal(await store.claimOccurrence(move, clock.now()), false, 'a claim is taken once');
      await service.fireSchedule(job); // the job again (BullMQ redelivery): the row moved on, nothing
      assert.equal(started.length, 0);
      return { job, key };
    };

    it('the claim and the row move are one step: the claim records the occurrence as not started', async () => {
      const { job, key } = await claimAndDie();
      assert.equal((await store.schedules(app.id))[0]!.nextMs, job.scheduledMs + 5000);
      const [occ] = await store.staleOccurrences(clock.now() + 1);
      assert.deepEqual(
        { key: occ!.key, attempt: occ!.attempt, startedAtMs: occ!.startedAtMs, scheduledMs: occ!.scheduledMs },
        { key, attempt: 1, startedAtMs: null, scheduledMs: job.scheduledMs },
      );
    });

    it('after the lease a reconcile pass fires it exactly once, whichever of two replicas reconciles', async () => {
      const { job, key } = await claimAndDie();
      await scheduler.reconcile();
      assert.equal(started.length, 0, 'not before the lease ran out');
      clock.set(clock.now() + LEASE + 1);
      const other = replica();
      await Promise.all([scheduler.reconcile(), other.scheduler.reconcile(), service.recoverOccurrences()]);
      assert.equal(started.length, 1, 'fired once');
      assert.deepEqual(started[0]!.data, {
        subscriptionId: 'tick',
        scheduledAt: new Date(job.scheduledMs).toISOString(),
      });
      assert.deepEqual(startedRunIds, [occurrenceRunId(key)], 'with the occurrence’s own run id');
      clock.set(clock.now() + LEASE * 3);
      await Promise.all([scheduler.reconcile(), other.scheduler.reconcile()]);
      assert.equal(started.length, 1, 'settled: never again');
      assert.deepEqual(await store.staleOccurrences(clock.now() + 1), []);
    });

    it('a slow holder whose claim was taken over starts nothing (still one run)', async () => {
      await scheduler.sync(app);
      const job = due();
      clock.set(job.scheduledMs);
      const key = occurrenceJobId(app.id, 'tick', job.scheduledMs);
      const move = {
        appId: app.id,
        subscriptionId: 'tick',
        fromMs: job.scheduledMs,
        toMs: job.scheduledMs + 5000,
        key,
      };
      await store.claimOccurrence(move, clock.now());
      clock.set(clock.now() + LEASE + 1);
      await replica().service.recoverOccurrences();
      assert.equal(started.length, 1);
      assert.equal(await store.beginOccurrence(key, 1, clock.now()), false, 'the old holder’s fence fails');
    });

    it('a holder that started the run before dying: the take-over finds the run and starts none', async () => {
      const { key } = await claimAndDie();
      assert.equal(await store.beginOccurrence(key, 1, clock.now()), true);
      runsWithMessages.add(occurrenceRunId(key)); // the run's first message was written, then the replica died
      clock.set(clock.now() + LEASE + 1);
      await scheduler.reconcile();
      assert.equal(started.length, 0);
      assert.deepEqual(await store.staleOccurrences(clock.now() + 1), [], 'settled');
    });

    it('a stale claim of an app paused since starts nothing', async () => {
      await claimAndDie();
      await scheduler.sync((await repo.update(app.id, { status: 'paused' })) as App);
      clock.set(clock.now() + LEASE + 1);
      await scheduler.reconcile();
      assert.equal(started.length, 0);
      assert.deepEqual(await store.staleOccurrences(clock.now() + 1), []);
    });

    it('a run start that fails (the database away) leaves the occurrence to a take-over, which fires it once', async () => {
      await scheduler.sync(app);
      const job = due();
      clock.set(job.scheduledMs);
      const startRun = runs.startRun.bind(runs);
      let failing = true;
      runs.startRun = async (...args: Parameters<AppRunsService['startRun']>) => {
        if (failing) throw new Error('Connection terminated unexpectedly');
        return startRun(...args);
      };
      await assert.rejects(service.fireSchedule(job), /Connection terminated/);
      assert.equal(started.length, 0);
      assert.equal((await store.staleOccurrences(clock.now() + 1)).length, 1, 'not settled');
      failing = false;
      clock.set(clock.now() + LEASE + 1);
      await scheduler.reconcile();
      assert.equal(started.length, 1, 'fired by the take-over');
      assert.equal((started[0]!.data as { scheduledAt?: string }).scheduledAt, new Date(job.scheduledMs).toISOString());
      assert.deepEqual(await store.staleOccurrences(clock.now() + LEASE * 2), [], 'settled');
    });

    it('an occurrence whose run never starts is given up after five tries', async () => {
      await scheduler.sync(app);
      const job = due();
      clock.set(job.scheduledMs);
      runs.startRun = async () => {
        throw new Error('Connection terminated unexpectedly');
      };
      await assert.rejects(service.fireSchedule(job));
      for (let pass = 0; pass < 6; pass++) {
        clock.set(clock.now() + LEASE + 1);
        await service.recoverOccurrences(); // each failure is logged, none thrown
      }
      assert.deepEqual(await store.staleOccurrences(clock.now() + LEASE * 2), [], 'given up: settled');
      assert.equal(started.length, 0);
    });

    it('a normal tick settles its claim: nothing left to take over', async () => {
      await scheduler.sync(app);
      const job = due();
      clock.set(job.scheduledMs);
      await service.fireSchedule(job);
      assert.equal(started.length, 1);
      clock.set(clock.now() + LEASE * 2);
      assert.deepEqual(await store.staleOccurrences(clock.now()), []);
      await scheduler.reconcile();
      assert.equal(started.length, 1);
    });
  });

  it('back-off and pause follow the configured policy', async () => {
    service.configure({ backoffMs: [1000], pauseAfter: 2 });
    await scheduler.sync(app);
    await repo.addActivity({
      id: 'e1',
      appId: app.id,
      runId: 'r1',
      type: 'run_error',
      ts: T0,
      content: { error: 'x' },
    });
    await repo.update(app.id, { automation: { lastRunAtMs: T0, lastError: 'x' } });
    let job = due();
    clock.set(T0 + 500);
    await service.fireSchedule({ ...job, scheduledMs: job.scheduledMs });
    job = due();
    clock.set(Math.max(job.scheduledMs, T0 + 1000));
    await service.fireSchedule(job);
    assert.equal(started.length, 1, 'one failure: waits 1 s only');
    await repo.addActivity({
      id: 'e2',
      appId: app.id,
      runId: 'r2',
      type: 'run_error',
      ts: T0 + 2,
      content: { error: 'x' },
    });
    await repo.addActivity({
      id: 'e3',
      appId: app.id,
      runId: 'r3',
      type: 'run_error',
      ts: T0 + 3,
      content: { error: 'x' },
    });
    job = due();
    clock.set(job.scheduledMs);
    await service.fireSchedule(job);
    assert.deepEqual(paused, [app.id], 'two in a row pause');
  });
});
