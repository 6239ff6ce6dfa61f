import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { JobContext } from '#core/ports/job-queue.port.js';
import { EmbeddedPostgres } from '#infra/database/embedded-postgres.js';
import { BullJobQueue, EMBEDDED_QUEUE_POLL_MS, type QueueBackendConfig } from '#infra/queue/bullmq-job-queue.js';
import { sleep, waitFor, withTimeout } from '#testing/fakes.js';
import { createTestDatabase, testMode, testRedisUrl, uniqueSuffix } from '#testing/test-env.js';

/** The job map of these tests: the queue is generic over it. */
type TestJobs = {
  'test.echo': { n: number };
  'test.flaky': { id: string };
  'test.other': Record<string, never>;
};

const TEST_TIMEOUT = 20_000;

/** The backing store of one suite and how to get at it (again, after a restart). */
interface Backend {
  config(): QueueBackendConfig;
  /** Simulates a server restart of the backing store where that means anything. */
  restart(): Promise<void>;
  dispose(): Promise<void>;
}

async function embeddedBackend(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-queue-'));
  const template = process.env.SVC_TEST_DB_TEMPLATE;
  // A pre-initialized embedded database from the runner skips PGlite's slow initdb.
  if (template && existsSync(join(template, 'db'))) cpSync(join(template, 'db'), join(dir, 'db'), { recursive: true });
  let embedded = await EmbeddedPostgres.start(dir);
  return {
    // As the server runs it: NOTIFY does not cross the socket server; the queue wakes its own
    // worker and polls as a safety net.
    config: () => ({ kind: 'postgres', url: embedded.url, pollMs: EMBEDDED_QUEUE_POLL_MS }),
    async restart() {
      await embedded.stop();
      embedded = await EmbeddedPostgres.start(dir);
    },
    async dispose() {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresBackend(): Promise<Backend> {
  const db = await createTestDatabase();
  return {
    config: () => ({ kind: 'postgres', url: db.url }),
    restart: async () => undefined,
    dispose: () => db.drop(),
  };
}

async function redisBackend(): Promise<Backend> {
  const prefix = `svc-test-${uniqueSuffix()}`;
  return {
    config: () => ({ kind: 'redis', url: testRedisUrl(), prefix }),
    restart: async () => undefined,
    async dispose() {
      const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 3 });
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      } finally {
        await redis.quit().catch(() => redis.disconnect());
      }
    },
  };
}

function queueSuite(label: string, makeBackend: () => Promise<Backend>): void {
  describe(`BullJobQueue on ${label}`, () => {
    let backend: Backend | undefined;
    const open = new Set<BullJobQueue<TestJobs>>();

    before(async () => {
      backend = await makeBackend();
    });

    after(async () => {
      await Promise.all([...open].map((q) => q.close().catch(() => undefined)));
      await backend?.dispose();
    });

    function queue(queueName: string, declaredNames: ReadonlyArray<keyof TestJobs> = []): BullJobQueue<TestJobs> {
      const q = new BullJobQueue<TestJobs>({ backend: backend!.config(), declaredNames, concurrency: 4, queueName });
      open.add(q);
      return q;
    }

    async function close(q: BullJobQueue<TestJobs>): Promise<void> {
      open.delete(q);
      await withTimeout(q.close(), 10_000, 'closing the queue');
    }

    const name = (): string => `t-${uniqueSuffix()}`;

    it(
      'starts a new job promptly while a repeatable job is scheduled far ahead',
      { timeout: TEST_TIMEOUT },
      async () => {
        const q = queue(name(), ['test.echo', 'test.other']);
        try {
          const started: number[] = [];
          q.process('test.echo', async () => {
            started.push(Date.now());
          });
          q.process('test.other', async () => undefined);
          await q.startConsuming();
          await q.repeat('far', 'test.other', {}, { everyMs: 60_000 });
          await new Promise((r) => setTimeout(r, 800)); // let the worker settle into its wait
          const added = Date.now();
          await q.add('test.echo', { n: 1 });
          await waitFor(() => started.length === 1, { what: 'job started', timeoutMs: 5000 });
          const latency = started[0]! - added;
          assert.ok(latency < 1500, `the job waited ${latency} ms for the worker`);
        } finally {
          await close(q);
        }
      },
    );

    it(
      'on Postgres, a job or a schedule this process queues while its worker waits starts at once, not at the next poll',
      { timeout: TEST_TIMEOUT },
      async (t) => {
        const config = backend!.config();
        if (config.kind !== 'postgres') return t.skip('the Redis backend has no poll');
        // A poll far longer than the test: only the wake (or NOTIFY) can start these jobs in time.
        const q = new BullJobQueue<TestJobs>({
          backend: { ...config, pollMs: 120_000 },
          declaredNames: ['test.echo', 'test.other'],
          concurrency: 4,
          queueName: name(),
        });
        open.add(q);
        try {
          let echoed = 0;
          let repeated = 0;
          q.process('test.echo', async () => void echoed++);
          q.process('test.other', async () => void repeated++);
          await q.startConsuming();
          await sleep(800); // the worker is in its wait
          await q.add('test.echo', { n: 1 });
          await waitFor(() => echoed === 1, { what: 'the queued job', timeoutMs: 10_000 });
          await sleep(800);
          // A schedule's next job is a delayed one: the worker's next wait ends when it is due.
          await q.repeat('soon', 'test.other', {}, { everyMs: 1000 });
          await waitFor(() => repeated >= 2, { what: 'two runs of the schedule', timeoutMs: 10_000 });
          await q.removeRepeat('soon');
        } finally {
          await close(q);
        }
      },
    );

    it('delivers typed data to the processor registered for the job name', { timeout: TEST_TIMEOUT }, async () => {
      const q = queue(name(), ['test.echo', 'test.other']);
      try {
        const echoes: Array<{ data: { n: number }; ctx: JobContext }> = [];
        const others: JobContext[] = [];
        q.process('test.echo', async (data, ctx) => {
          echoes.push({ data, ctx });
        });
        q.process('test.other', async (_data, ctx) => {
          others.push(ctx);
        });
        assert.equal(q.isConsuming(), false);
        await q.startConsuming();
        assert.equal(q.isConsuming(), true);
        assert.throws(() => q.process('test.flaky', async () => undefined), /after the queue started consuming/);

        const echoId = await q.add('test.echo', { n: 42 });
        const otherId = await q.add('test.other', {});
        await waitFor(() => echoes.length === 1 && others.length === 1, { what: 'both jobs processed' });
        assert.deepEqual(echoes[0], { data: { n: 42 }, ctx: { id: echoId, attempt: 1 } });
        assert.deepEqual(others[0], { id: otherId, attempt: 1 });
        await q.ping();
      } finally {
        await close(q);
      }
    });

    it('a second add with the same jobId is a no-op: the job runs once', { timeout: TEST_TIMEOUT }, async () => {
      const q = queue(name(), ['test.echo']);
      try {
        const runs: Array<{ n: number; id: string }> = [];
        q.process('test.echo', async (data, ctx) => {
          runs.push({ n: data.n, id: ctx.id });
        });
        const first = await q.add('test.echo', { n: 1 }, { jobId: 'fixed-id' });
        const second = await q.add('test.echo', { n: 2 }, { jobId: 'fixed-id' });
        assert.equal(first, 'fixed-id');
        assert.equal(second, 'fixed-id');
        await q.startConsuming();
        await waitFor(() => runs.length >= 1, { what: 'the job to run' });
        // Also after completion, while the completed job is kept.
        assert.equal(await q.add('test.echo', { n: 3 }, { jobId: 'fixed-id' }), 'fixed-id');
        await sleep(1500);
        assert.deepEqual(runs, [{ n: 1, id: 'fixed-id' }]);
      } finally {
        await close(q);
      }
    });

    it('retries with backoff: fails on attempts 1 and 2, succeeds on 3', { timeout: TEST_TIMEOUT }, async () => {
      const q = queue(name(), ['test.flaky']);
      try {
        const attempts: Array<{ attempt: number; at: number }> = [];
        let succeeded = 0;
        q.process('test.flaky', async (data, ctx) => {
          assert.equal(data.id, 'flaky-1');
          attempts.push({ attempt: ctx.attempt, at: Date.now() });
          if (ctx.attempt < 3) throw new Error(`planned failure ${ctx.attempt}`);
          succeeded++;
        });
        await q.startConsuming();
        await q.add('test.flaky', { id: 'flaky-1' }, { attempts: 3, backoffMs: 100 });
        await waitFor(() => succeeded === 1, { timeoutMs: 10_000, what: 'the third attempt to succeed' });
        await sleep(500); // no further attempt after the success
        assert.deepEqual(
          attempts.map((a) => a.attempt),
          [1, 2, 3],
        );
        for (let i = 1; i < attempts.length; i++) {
          const gap = attempts[i]!.at - attempts[i - 1]!.at;
          assert.ok(gap >= 100, `attempt ${i + 1} started ${gap} ms after attempt ${i}, before the 100 ms backoff`);
        }
      } finally {
        await close(q);
      }
    });

    it(
      'an add of the id of a kept failed job queues it afresh (a waiting one stays a no-op)',
      { timeout: TEST_TIMEOUT },
      async () => {
        const q = queue(name(), ['test.flaky']);
        try {
          const attempts: string[] = [];
          q.process('test.flaky', async (data) => {
            attempts.push(data.id);
            if (attempts.length === 1) throw new Error('the first run fails');
          });
          await q.add('test.flaky', { id: 'first' }, { jobId: 'occurrence-1' });
          await q.add('test.flaky', { id: 'repeat while waiting' }, { jobId: 'occurrence-1' });
          await q.startConsuming();
          await waitFor(() => attempts.length >= 1, { what: 'the first run' });
          await sleep(500); // recorded as failed
          await q.add('test.flaky', { id: 'after the failure' }, { jobId: 'occurrence-1' });
          await waitFor(() => attempts.length >= 2, { what: 'the job queued again' });
          await sleep(500);
          assert.deepEqual(attempts, ['first', 'after the failure']);
        } finally {
          await close(q);
        }
      },
    );

    it('stops after the last attempt', { timeout: TEST_TIMEOUT }, async () => {
      const q = queue(name(), ['test.flaky']);
      try {
        const attempts: number[] = [];
        q.process('test.flaky', async (_data, ctx) => {
          attempts.push(ctx.attempt);
          throw new Error('always fails');
        });
        await q.startConsuming();
        await q.add('test.flaky', { id: 'doomed' }, { attempts: 2, backoffMs: 50 });
        await waitFor(() => attempts.length >= 2, { timeoutMs: 10_000, what: 'two attempts' });
        await sleep(1000);
        assert.deepEqual(attempts, [1, 2]);
      } finally {
        await close(q);
      }
    });

    it('a delayed job does not run before its delay and runs after it', { timeout: TEST_TIMEOUT }, async () => {
      const q = queue(name(), ['test.echo']);
      try {
        let ranAt: number | null = null;
        q.process('test.echo', async () => {
          ranAt = Date.now();
        });
        await q.startConsuming();
        const addedAt = Date.now();
        await q.add('test.echo', { n: 1 }, { delayMs: 1500 });
        await sleep(1200);
        assert.equal(ranAt, null, 'ran before its delay');
        await waitFor(() => ranAt !== null, { timeoutMs: 8000, what: 'the delayed job' });
        const waited = ranAt! - addedAt;
        assert.ok(waited >= 1450, `ran ${waited} ms after add, delay was 1500 ms`);
        assert.ok(waited < 7000, `ran only ${waited} ms after add`);
      } finally {
        await close(q);
      }
    });

    it('a repeatable job runs repeatedly until removeRepeat stops it', { timeout: TEST_TIMEOUT }, async () => {
      const q = queue(name(), ['test.echo']);
      try {
        const runs: number[] = [];
        q.process('test.echo', async (data) => {
          runs.push(data.n);
        });
        await q.startConsuming();
        await q.repeat('every-half-second', 'test.echo', { n: 7 }, { everyMs: 500 });
        await waitFor(() => runs.length >= 2, { timeoutMs: 8000, what: 'two runs of the repeatable job' });
        assert.deepEqual(runs.slice(0, 2), [7, 7]);

        await q.removeRepeat('every-half-second');
        await sleep(300); // one run may already have been in flight
        const afterRemoval = runs.length;
        await sleep(1500); // three periods
        assert.equal(runs.length, afterRemoval, `ran ${runs.length - afterRemoval} more time(s) after removeRepeat`);
      } finally {
        await close(q);
      }
    });

    it(
      'startConsuming refuses to start when a declared job name has no processor',
      { timeout: TEST_TIMEOUT },
      async () => {
        const q = queue(name(), ['test.echo', 'test.other']);
        try {
          q.process('test.echo', async () => undefined);
          await assert.rejects(q.startConsuming(), (err: Error) => {
            assert.match(err.message, /test\.other/);
            assert.doesNotMatch(err.message, /test\.echo/);
            return true;
          });
          assert.equal(q.isConsuming(), false);
          // Registering the missing processor then makes it start.
          q.process('test.other', async () => undefined);
          await q.startConsuming();
          assert.equal(q.isConsuming(), true);
        } finally {
          await close(q);
        }
      },
    );

    /** A queue whose `test.echo` jobs run in the quick lane. */
    function laned(queueName: string, declaredNames: ReadonlyArray<keyof TestJobs> = []): BullJobQueue<TestJobs> {
      const q = new BullJobQueue<TestJobs>({
        backend: backend!.config(),
        declaredNames,
        concurrency: 1,
        queueName,
        quickLane: { names: ['test.echo'], concurrency: 2 },
      });
      open.add(q);
      return q;
    }

    it(
      'a quick job runs while the only slot of the main lane is held by a long job',
      { timeout: TEST_TIMEOUT },
      async () => {
        const q = laned(name(), ['test.echo', 'test.other']);
        try {
          let release!: () => void;
          const held = new Promise<void>((resolve) => (release = resolve));
          let longStarted = false;
          let longEnded = false;
          const echoes: number[] = [];
          q.process('test.other', async () => {
            longStarted = true;
            await held;
            longEnded = true;
          });
          q.process('test.echo', async (data) => {
            echoes.push(data.n);
          });
          await q.startConsuming();
          await q.add('test.other', {});
          await waitFor(() => longStarted, { what: 'the long job started', timeoutMs: 10_000 });
          await q.add('test.echo', { n: 1 });
          await q.add('test.echo', { n: 2 });
          await waitFor(() => echoes.length === 2, { what: 'both quick jobs ran', timeoutMs: 10_000 });
          assert.equal(longEnded, false, 'the quick jobs ran while the long one still held its slot');
          release();
          await waitFor(() => longEnded, { what: 'the long job ended', timeoutMs: 10_000 });
          // The processor has returned; the queue records the job completed just after.
          let counts = await q.counts();
          await waitFor(async () => (counts = await q.counts()).completed >= 3, {
            what: 'three jobs completed',
            timeoutMs: 10_000,
          }).catch(() => undefined);
          assert.equal(counts.completed, 3, `completed over both lanes: ${JSON.stringify(counts)}`);
        } finally {
          await close(q);
        }
      },
    );

    it('a quick job an earlier version queued in the main queue still runs', { timeout: 30_000 }, async () => {
      const queueName = name();
      const earlier = queue(queueName);
      await earlier.add('test.echo', { n: 5 });
      await close(earlier);
      const q = laned(queueName, ['test.echo']);
      try {
        const seen: number[] = [];
        q.process('test.echo', async (data) => {
          seen.push(data.n);
        });
        await q.startConsuming();
        await waitFor(() => seen.length === 1, { what: 'the job from the main queue ran', timeoutMs: 10_000 });
        assert.deepEqual(seen, [5]);
      } finally {
        await close(q);
      }
    });

    it(
      'a repeat an earlier version kept in the main queue moves to the quick lane: it fires from one lane only',
      { timeout: 30_000 },
      async () => {
        const queueName = name();
        const earlier = queue(queueName);
        await earlier.repeat('tick', 'test.echo', { n: 1 }, { everyMs: 1000 });
        await close(earlier);
        const q = laned(queueName, ['test.echo']);
        try {
          const runs: number[] = [];
          q.process('test.echo', async () => {
            runs.push(Date.now());
          });
          await q.repeat('tick', 'test.echo', { n: 1 }, { everyMs: 1000 });
          await q.startConsuming();
          await waitFor(() => runs.length >= 1, { what: 'the first tick', timeoutMs: 10_000 });
          const from = runs.length;
          await sleep(4000);
          const fired = runs.length - from;
          // One scheduler fires 4 times in 4 s (±1); two would fire about 8 times.
          assert.ok(fired >= 2 && fired <= 5, `fired ${fired} times in 4 s`);
          await q.removeRepeat('tick');
          await sleep(300);
          const afterRemoval = runs.length;
          await sleep(2500);
          assert.equal(runs.length, afterRemoval, 'removeRepeat stopped it in every lane');
        } finally {
          await close(q);
        }
      },
    );

    it('a job survives a restart and is processed by the next consumer', { timeout: 30_000 }, async () => {
      const queueName = name();
      const producer = queue(queueName);
      const id = await producer.add('test.echo', { n: 99 });
      await close(producer);

      await backend!.restart();

      const consumer = queue(queueName, ['test.echo']);
      try {
        const seen: Array<{ n: number; id: string }> = [];
        consumer.process('test.echo', async (data, ctx) => {
          seen.push({ n: data.n, id: ctx.id });
        });
        await consumer.startConsuming();
        await waitFor(() => seen.length >= 1, { timeoutMs: 10_000, what: 'the job added before the restart' });
        assert.deepEqual(seen, [{ n: 99, id }]);
      } finally {
        await close(consumer);
      }
    });
  });
}

if (testMode() === 'services') {
  queueSuite('Postgres (services)', postgresBackend);
  queueSuite('Redis (services)', redisBackend);
} else {
  queueSuite('embedded Postgres (PGlite)', embeddedBackend);
}
