import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import request from 'supertest';
import { faultReport, ownSharedServices, patientClient } from '#testing/fault-harness.js';
import { canMount, faultSuiteSkipReason, OwnPostgres, OwnRedis } from '#testing/own-services.js';
import { ScriptedModelServer, scriptedModelEnv } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { type SharedServices, startServer } from '#testing/test-server.js';
import { sleep, waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

/**
 * Fault injection against the real server, each test with backing services of its own
 * (PostgreSQL and redis-server started here on loopback, or the embedded database on a data
 * folder of its own). Each prints what it tried and what was lost; losing anything fails.
 */

const skip = faultSuiteSkipReason();
if (skip) faultReport(skip);

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

describe('fault injection', { skip: skip ?? false }, () => {
  it(
    'Postgres stopped 10 s during requests and a streaming turn: 503s, the reply is stored once it is back',
    {
      skip: testMode() !== 'services' ? 'runs in the services pass' : false,
    },
    async () => {
      const pg = await OwnPostgres.start();
      const redis = await OwnRedis.start();
      const model = await ScriptedModelServer.start();
      cleanups.push(
        () => pg.dispose(),
        () => redis.stop(),
        () => model.close(),
      );
      const server = await startServer({ services: ownSharedServices(pg, redis), env: scriptedModelEnv(model) });
      cleanups.push(() => server.stop());
      const api = patientClient(server);
      const space = (await api.post('/api/spaces', { name: 'outage' })).body.data;
      const records: string[] = [];
      for (let i = 0; i < 20; i++) {
        records.push((await api.post(`/api/spaces/${space.id}/conversations`, { title: `c${i}` })).body.data.id);
      }
      const conversationId = records[0]!;
      const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
      ws.send({ type: 'subscribe', payload: { conversationId } });
      await ws.roundTrip();
      // About 5 s of streaming: the turn ends while Postgres is away.
      const chunks = Array.from({ length: 50 }, (_, i) => `chunk ${i}. `);
      model.enqueue({ steps: chunks.flatMap((text) => [{ text }, { delayMs: 100 }]) });
      assert.equal(
        (await api.post('/api/agent/message', { spaceId: space.id, conversationId, message: 'go' })).status,
        200,
      );
      await ws.next((f) => f.channel === 'agent:message' && typeof f.data?.delta === 'string', 10_000);

      await pg.stop();
      const stoppedAt = Date.now();
      const statuses = new Map<string, number>();
      let readyDuringOutage = 0;
      let probes = 0;
      while (Date.now() - stoppedAt < 10_000) {
        const results = await Promise.all([
          api.get('/api/spaces'),
          api.post(`/api/spaces/${space.id}/conversations`, { title: 'during' }),
          api.get(`/api/agent/generating/${conversationId}`),
          request(server.url).get('/readyz').timeout(10_000),
        ]);
        for (const res of results.slice(0, 3)) {
          const key = `${res.status}${res.body?.code ? ` ${res.body.code}` : ''}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
        }
        probes++;
        if (results[3]!.status === 200) readyDuringOutage++;
        await sleep(250);
      }
      await pg.resume();
      const backAt = Date.now();
      await ws.event('agent:complete', 30_000);
      const completeMs = Date.now() - backAt;
      await waitFor(
        async () => (await api.get(`/api/agent/generating/${conversationId}`)).body.data === false,
        10_000,
        'generating to clear',
      );
      const idleMs = Date.now() - backAt;
      await waitFor(async () => (await request(server.url).get('/readyz')).status === 200, 10_000, 'ready again');
      const stored = (await api.get(`/api/spaces/${space.id}/conversations/${conversationId}`)).body.data
        .messages as Array<{
        role: string;
        content: string;
      }>;
      const reply = stored.find((m) => m.role === 'assistant');
      let lostRecords = 0;
      for (const id of records)
        if ((await api.get(`/api/spaces/${space.id}/conversations/${id}`)).status !== 200) lostRecords++;
      const errors = ws.frames.filter((f) => f.channel === 'agent:error');
      faultReport(
        `Postgres stopped ${((backAt - stoppedAt) / 1000).toFixed(1)} s mid-turn; requests during the outage: ` +
          `${[...statuses].map(([k, v]) => `${v}× ${k}`).join(', ')}; /readyz ready in ${readyDuringOutage} of ${probes} probes; ` +
          `agent:complete ${completeMs} ms and generating=false ${idleMs} ms after Postgres returned; ` +
          `lost: ${lostRecords} records, ${reply?.content === chunks.join('') ? 0 : 1} replies`,
      );
      assert.equal(reply?.content, chunks.join(''), 'the whole reply is stored');
      assert.deepEqual(errors, [], 'the turn ended without an error');
      assert.equal(lostRecords, 0);
      assert.equal(readyDuringOutage, 0, '/readyz fails while the database is away');
      assert.ok(![...statuses.keys()].some((k) => k.startsWith('500')), 'no 500 during the outage');
      assert.ok((statuses.get('503 NOT_INITIALIZED') ?? 0) > 0);
      assert.ok(idleMs < 5_000, `generating cleared ${idleMs} ms after Postgres returned`);
      ws.close();
      await server.stop();
    },
  );

  it(
    'Redis frozen, then restarted empty: requests answer, the next turn runs and is stored',
    {
      skip: testMode() !== 'services' ? 'runs in the services pass' : false,
    },
    async () => {
      const pg = await OwnPostgres.start();
      const redis = await OwnRedis.start();
      const model = await ScriptedModelServer.start();
      cleanups.push(
        () => pg.dispose(),
        () => redis.stop(),
        () => model.close(),
      );
      const server = await startServer({ services: ownSharedServices(pg, redis), env: scriptedModelEnv(model) });
      cleanups.push(() => server.stop());
      const api = patientClient(server);
      const space = (await api.post('/api/spaces', { name: 'redis' })).body.data;
      const records: string[] = [];
      for (let i = 0; i < 10; i++) {
        records.push((await api.post(`/api/spaces/${space.id}/conversations`, { title: `c${i}` })).body.data.id);
      }
      redis.freeze();
      const frozenAt = Date.now();
      const statuses = new Map<string, number>();
      while (Date.now() - frozenAt < 5_000) {
        const res = await api.get('/api/spaces').catch(() => ({ status: 0 }) as { status: number });
        statuses.set(String(res.status), (statuses.get(String(res.status)) ?? 0) + 1);
        await sleep(250);
      }
      redis.thaw();
      await redis.restart(); // empty: no persistence
      const restartedAt = Date.now();
      const conversationId = records[0]!;
      model.enqueue({ steps: [{ text: 'after the restart' }] });
      await waitFor(
        async () =>
          (await api.post('/api/agent/message', { spaceId: space.id, conversationId, message: 'go' }).catch(() => null))
            ?.status === 200,
        20_000,
        'a message accepted after the restart',
      );
      await waitFor(
        async () => {
          const messages = (await api.get(`/api/spaces/${space.id}/conversations/${conversationId}`)).body.data
            .messages as Array<{ role: string; content: string }>;
          return messages.some((m) => m.role === 'assistant' && m.content === 'after the restart');
        },
        30_000,
        'the reply to be stored',
      );
      const turnMs = Date.now() - restartedAt;
      let lostRecords = 0;
      for (const id of records)
        if ((await api.get(`/api/spaces/${space.id}/conversations/${id}`)).status !== 200) lostRecords++;
      faultReport(
        `Redis frozen 5 s: GET /api/spaces answered ${[...statuses].map(([k, v]) => `${v}× ${k}`).join(', ')}; ` +
          `restarted empty: a turn ran and was stored ${turnMs} ms later; lost: ${lostRecords} records, 0 replies`,
      );
      assert.equal(lostRecords, 0);
      assert.equal(
        statuses.get('200'),
        [...statuses.values()].reduce((a, b) => a + b, 0),
        'reads need no Redis',
      );
      await server.stop();
    },
  );

  it(
    '/readyz answers 503 naming redis while Redis is down, and ready again once it is back',
    {
      skip: testMode() !== 'services' ? 'runs in the services pass' : false,
    },
    async () => {
      const pg = await OwnPostgres.start();
      const redis = await OwnRedis.start();
      cleanups.push(
        () => pg.dispose(),
        () => redis.stop(),
      );
      const server = await startServer({ services: ownSharedServices(pg, redis) });
      cleanups.push(() => server.stop());
      const readyz = () => request(server.url).get('/readyz').timeout(10_000);
      await waitFor(async () => (await readyz()).status === 200, 15_000, 'ready before the outage');
      await redis.stop();
      const stoppedAt = Date.now();
      const seen: Array<{ status: number; redis?: { ok: boolean; error?: string }; status_?: string }> = [];
      let firstNotReadyMs: number | null = null;
      while (Date.now() - stoppedAt < 6_000) {
        const res = await readyz();
        seen.push({ status: res.status, redis: res.body?.checks?.redis, status_: res.body?.status });
        if (res.status === 503 && firstNotReadyMs === null) firstNotReadyMs = Date.now() - stoppedAt;
        await sleep(250);
      }
      await redis.restart();
      const backAt = Date.now();
      await waitFor(async () => (await readyz()).status === 200, 30_000, 'ready again once Redis is back');
      const readyAgainMs = Date.now() - backAt;
      const after = (await readyz()).body;
      const notReady = seen.filter((s) => s.status === 503);
      faultReport(
        `Redis stopped 6 s: /readyz answered ${notReady.length} × 503 of ${seen.length} probes, the first ` +
          `${firstNotReadyMs} ms after the stop; redis check "${notReady[0]?.redis?.error ?? ''}"; ` +
          `ready again ${readyAgainMs} ms after Redis returned`,
      );
      assert.ok(firstNotReadyMs !== null && firstNotReadyMs < 5_000, 'not ready within 5 s of the outage');
      // After the first 503, every probe of the outage stays 503 and names the redis check.
      const fromFirst = seen.slice(seen.findIndex((s) => s.status === 503));
      for (const s of fromFirst) {
        assert.equal(s.status, 503);
        assert.equal(s.status_, 'not ready');
        assert.equal(s.redis?.ok, false, 'the failed check is redis');
        assert.ok(s.redis?.error, 'with the reason');
      }
      assert.deepEqual(after.checks.redis, { ok: true });
      await server.stop();
    },
  );

  it('SIGKILL during writes, 5 times: every acknowledged record and file survives, no file is torn', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-fault-kill-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const template = process.env.SVC_TEST_DB_TEMPLATE;
    if (testMode() === 'embedded' && template && existsSync(join(template, 'db'))) {
      cpSync(join(template, 'db'), join(dataDir, 'db'), { recursive: true }); // skips PGlite's slow initdb
    }
    const startedAt = Date.now();
    let services: SharedServices | undefined;
    if (testMode() === 'services') {
      const pg = await OwnPostgres.start();
      const redis = await OwnRedis.start();
      cleanups.push(
        () => pg.dispose(),
        () => redis.stop(),
      );
      services = ownSharedServices(pg, redis);
    }
    const start = () => startServer({ dataDir, services });
    let server = await start();
    let api = patientClient(server);
    const space = (await api.post('/api/spaces', { name: 'kill' })).body.data as { id: string; path: string };
    const conversationId = (await api.post(`/api/spaces/${space.id}/conversations`, { title: 'log' })).body.data.id;
    const ackedConversations: string[] = [];
    const ackedMessages: string[] = [];
    const versions = new Map<string, Set<string>>(); // file → every content ever sent
    const ackedFiles = new Set<string>();
    const body = (file: string, round: number, n: number) =>
      `${file} round ${round} write ${n}\n${'x'.repeat(20_000 + n * 7)}\nEND\n`;
    let attempted = 0;
    for (let round = 1; round <= 5; round++) {
      let stop = false;
      const writer = async (w: number) => {
        for (let n = 0; !stop; n++) {
          attempted++;
          const file = `f${w}-${n % 4}.txt`;
          const content = body(file, round, n);
          if (!versions.has(file)) versions.set(file, new Set());
          versions.get(file)!.add(content);
          const kind = n % 3;
          try {
            if (kind === 0) {
              const res = await api.post('/api/artifacts/save', { path: join(space.path, file), content });
              if (res.status === 200) ackedFiles.add(file);
            } else if (kind === 1) {
              const res = await api.post(`/api/spaces/${space.id}/conversations`, { title: `r${round}w${w}n${n}` });
              if (res.status === 200) ackedConversations.push(res.body.data.id);
            } else {
              const text = `r${round} w${w} n${n}`;
              const res = await api.post(`/api/spaces/${space.id}/conversations/${conversationId}/messages`, {
                role: 'user',
                content: text,
              });
              if (res.status === 200) ackedMessages.push(text);
            }
          } catch {
            return; // the server died under this request
          }
        }
      };
      const writers = [0, 1, 2, 3].map((w) => writer(w));
      await sleep(500 + Math.floor(Math.random() * 500));
      server.process.kill('SIGKILL');
      await server.exited;
      stop = true;
      await Promise.all(writers);
      server = await start();
      api = patientClient(server);
    }
    // The last start sweeps temporary files of interrupted writes (alone on the folder: all of them).
    const orphans = () => readdirSync(space.path).filter((n) => n.endsWith('.svc-tmp')).length;
    if (!services) await waitFor(() => orphans() === 0, 10_000, 'orphaned temporary files to be removed');
    let lostRecords = 0;
    for (const id of ackedConversations) {
      if ((await api.get(`/api/spaces/${space.id}/conversations/${id}`)).status !== 200) lostRecords++;
    }
    const stored = new Set(
      (
        (await api.get(`/api/spaces/${space.id}/conversations/${conversationId}`)).body.data.messages as Array<{
          content: string;
        }>
      ).map((m) => m.content),
    );
    for (const text of ackedMessages) if (!stored.has(text)) lostRecords++;
    let torn = 0;
    let lostFiles = 0;
    for (const [file, sent] of versions) {
      const path = join(space.path, file);
      if (!existsSync(path)) {
        if (ackedFiles.has(file)) lostFiles++;
        continue;
      }
      if (!sent.has(readFileSync(path, 'utf8'))) torn++;
    }
    faultReport(
      `SIGKILL ×5 during ${attempted} writes: ${ackedConversations.length} conversations, ${ackedMessages.length} messages, ` +
        `${ackedFiles.size} files acknowledged; lost: ${lostRecords} records, ${lostFiles} files; torn files: ${torn}; ` +
        `temporary files left after restart: ${orphans()}; ${Math.round((Date.now() - startedAt) / 1000)} s${services ? ' (replicas mode keeps those under 10 min old)' : ''}`,
    );
    assert.equal(lostRecords, 0);
    assert.equal(lostFiles, 0);
    assert.equal(torn, 0);
    assert.ok(ackedConversations.length > 0 && ackedFiles.size > 0, 'writes were acknowledged');
    await server.stop();
  });

  it(
    'a read-only space folder: writes answer 403 saying read-only, reads and records unaffected',
    {
      skip: testMode() !== 'embedded' ? 'runs in the embedded pass' : !canMount() ? 'mount is not allowed here' : false,
    },
    async () => {
      const mountDir = mkdtempSync(join(tmpdir(), 'svc-fault-ro-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountDir]);
      cleanups.push(async () => {
        execFileSync('umount', [mountDir]);
        rmSync(mountDir, { recursive: true, force: true });
      });
      const server = await startServer();
      cleanups.push(() => server.stop());
      const api = patientClient(server);
      const space = (await api.post('/api/spaces', { name: 'ro', customPath: mountDir })).body.data;
      const file = join(space.path, 'kept.txt');
      assert.equal((await api.post('/api/artifacts/save', { path: file, content: 'before' })).status, 200);
      execFileSync('mount', ['-o', 'remount,ro', mountDir]);
      const tries = [
        await api.post('/api/artifacts/save', { path: file, content: 'after' }),
        await api.post(`/api/spaces/${space.id}/artifacts/file`, { name: 'new.txt', content: 'x' }),
        await api.post(`/api/spaces/${space.id}/artifacts/folder`, { name: 'sub' }),
      ];
      const read = await api.get(`/api/artifacts/content?path=${encodeURIComponent(file)}`);
      const conversation = await api.post(`/api/spaces/${space.id}/conversations`, { title: 'still recorded' });
      execFileSync('mount', ['-o', 'remount,rw', mountDir]);
      faultReport(
        `read-only space folder: ${tries.length} writes answered ${tries.map((t) => `${t.status} "${t.body.error}"`).join(', ')}; ` +
          `read ${read.status}, conversation record ${conversation.status}; lost: 0 records, torn files: ${readFileSync(file, 'utf8') === 'before' ? 0 : 1}`,
      );
      for (const t of tries) {
        assert.equal(t.status, 403);
        assert.match(t.body.error, /read-only/);
      }
      assert.equal(read.body.data.content, 'before');
      assert.equal(conversation.status, 200);
      await server.stop();
    },
  );

  it(
    'a full data volume: writes refused cleanly, nothing torn, everything acknowledged kept once space is back',
    {
      skip: testMode() !== 'embedded' ? 'runs in the embedded pass' : !canMount() ? 'mount is not allowed here' : false,
    },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-fault-full-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96m', 'tmpfs', dataDir]);
      cleanups.push(async () => {
        execFileSync('umount', [dataDir]);
        rmSync(dataDir, { recursive: true, force: true });
      });
      const template = process.env.SVC_TEST_DB_TEMPLATE;
      if (template && existsSync(join(template, 'db')))
        cpSync(join(template, 'db'), join(dataDir, 'db'), { recursive: true });
      let server = await startServer({ dataDir });
      let api = patientClient(server);
      const space = (await api.post('/api/spaces', { name: 'full' })).body.data;
      const acked: string[] = [];
      for (let i = 0; i < 5; i++)
        acked.push((await api.post(`/api/spaces/${space.id}/conversations`, { title: `c${i}` })).body.data.id);
      const file = join(space.path, 'kept.txt');
      assert.equal((await api.post('/api/artifacts/save', { path: file, content: 'before' })).status, 200);
      // Fill the volume to the last byte.
      const filler = join(dataDir, 'filler');
      const chunk = Buffer.alloc(1024 * 1024, 1);
      const fd = openSync(filler, 'w');
      try {
        for (;;) writeSync(fd, chunk);
      } catch {
        for (let size = 64 * 1024; size >= 1; size = Math.floor(size / 2)) {
          try {
            for (;;) writeSync(fd, chunk.subarray(0, size));
          } catch {
            /* next smaller size */
          }
        }
      } finally {
        closeSync(fd);
      }
      const statuses = new Map<string, number>();
      const note = (res: { status: number; body?: { error?: string } }) => {
        const key = `${res.status} ${res.body?.error ?? ''}`.trim();
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      };
      for (let i = 0; i < 5; i++) {
        note(await api.post('/api/artifacts/save', { path: file, content: `after ${'y'.repeat(50_000)}` }));
        const created = await api.post(`/api/spaces/${space.id}/conversations`, { title: `full ${i}` });
        note(created);
        if (created.status === 200) acked.push(created.body.data.id);
      }
      const ready = (await request(server.url).get('/readyz')).status;
      rmSync(filler);
      await server.stop();
      server = await startServer({ dataDir });
      api = patientClient(server);
      let lost = 0;
      for (const id of acked) if ((await api.get(`/api/spaces/${space.id}/conversations/${id}`)).status !== 200) lost++;
      const content = readFileSync(file, 'utf8');
      const torn = content === 'before' || content === `after ${'y'.repeat(50_000)}` ? 0 : 1;
      const temps = readdirSync(space.path).filter((n) => n.endsWith('.svc-tmp')).length;
      faultReport(
        `full data volume: writes answered ${[...statuses].map(([k, v]) => `${v}× ${k}`).join(', ')}; /readyz ${ready}; ` +
          `after freeing space and restarting: lost ${lost} of ${acked.length} acknowledged records, torn files: ${torn}, temporary files left: ${temps}`,
      );
      assert.equal(lost, 0);
      assert.equal(torn, 0);
      assert.equal(temps, 0);
      assert.ok(![...statuses.keys()].some((k) => k.includes('Internal server error')), 'no bare 500');
      await server.stop();
    },
  );

  it(
    'first start on a too-small data volume exits with the real reason',
    {
      skip: testMode() !== 'embedded' ? 'runs in the embedded pass' : !canMount() ? 'mount is not allowed here' : false,
    },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-fault-tiny-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dataDir]);
      cleanups.push(async () => {
        execFileSync('umount', [dataDir]);
        rmSync(dataDir, { recursive: true, force: true });
      });
      const server = await startServer({ dataDir, waitForListening: false });
      const exit = await Promise.race([server.exited, sleep(60_000).then(() => null)]);
      const line =
        server
          .output()
          .split('\n')
          .find((l) => l.startsWith('svc-server failed to start:')) ?? '';
      faultReport(`first start on a 2 MB volume: exit ${exit?.code}; "${line.slice(0, 160)}"`);
      await server.stop();
      assert.equal(exit?.code, 1);
      assert.notEqual(line, '');
      assert.doesNotMatch(line, /\[object Object\]/);
    },
  );
});
