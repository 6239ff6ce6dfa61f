import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { apiClient, okData } from '#testing/api-client.js';
import type { LeaderLease } from '#core/ports/leader-lease.port.js';
import { LocalLeaderLease } from '#infra/watch/local-leader-lease.js';
import { RedisLeaderLease } from '#infra/watch/redis-leader-lease.js';
import { testMode, testRedisUrl, uniqueSuffix } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { sleep, waitFor } from '#testing/wait.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';

interface Change {
  type: string;
  path: string;
  relativePath: string;
}
interface Space {
  id: string;
  path: string;
}

const BATCH = 'artifact:changed-batch';
const TREE = 'artifact:tree-update';

async function createSpace(server: TestServer, name: string): Promise<Space> {
  return okData<Space>(await apiClient(server).post('/api/spaces', { name }));
}

/** Change-batch frames of a space received so far (not consumed). */
function batchesOf(ws: WsTestClient, spaceId: string): Array<{ changes: Change[]; resync?: boolean }> {
  return ws.frames
    .filter((f) => f.type === 'event' && f.channel === BATCH && f.data?.spaceId === spaceId)
    .map((f) => f.data as unknown as { changes: Change[]; resync?: boolean });
}

function changesOf(ws: WsTestClient, spaceId: string): Change[] {
  return batchesOf(ws, spaceId).flatMap((b) => b.changes);
}

/**
 * Repeats `act` until a change of `relativePath` reaches `ws` (a new space's watcher starts
 * a moment after the space is created; nothing tells a client when).
 */
async function untilSeen(
  ws: WsTestClient,
  spaceId: string,
  relativePath: string,
  act: () => void | Promise<void>,
  timeoutMs = 15_000,
): Promise<Change> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await act();
    const until = Math.min(deadline, Date.now() + 1_500);
    while (Date.now() < until) {
      const seen = changesOf(ws, spaceId).find((c) => c.relativePath === relativePath);
      if (seen) return seen;
      await sleep(25);
    }
    if (Date.now() >= deadline) throw new Error(`no change of ${relativePath} within ${timeoutMs} ms`);
  }
}

/** Waits until a space is watched, then forgets the probe's frames. */
async function watching(ws: WsTestClient, space: Space): Promise<void> {
  const probe = join(space.path, 'watch-probe.txt');
  await untilSeen(ws, space.id, 'watch-probe.txt', () => writeFileSync(probe, String(Date.now())));
  unlinkSync(probe);
  await waitFor(
    () => changesOf(ws, space.id).some((c) => c.relativePath === 'watch-probe.txt' && c.type === 'unlink'),
    5_000,
    'probe unlink',
  );
  await sleep(700); // the probe's tree updates
  ws.frames.length = 0;
}

describe('artifact events', () => {
  let server: TestServer;
  let ws: WsTestClient;
  let space: Space;

  before(async () => {
    server = await startServer();
    ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    space = await createSpace(server, 'Watched');
    await watching(ws, space);
  });
  after(async () => {
    ws?.close();
    await server?.stop();
  });

  it('a file created through the API arrives as a change batch and a tree update of its folder', async () => {
    const res = await apiClient(server).post(`/api/spaces/${space.id}/artifacts/file`, {
      name: 'from-api.md',
      content: '# hi',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const batch = await ws.next(
      (f) => f.channel === BATCH && (f.data?.changes as Change[]).some((c) => c.relativePath === 'from-api.md'),
      5_000,
    );
    assert.equal(batch.data?.spaceId, space.id);
    const change = (batch.data?.changes as Change[]).find((c) => c.relativePath === 'from-api.md')!;
    assert.deepEqual(change, { type: 'add', path: join(space.path, 'from-api.md'), relativePath: 'from-api.md' });
    assert.equal(batch.data?.resync, undefined);
    assert.ok(!(batch.data?.changes as Change[]).some((c) => c.relativePath.endsWith('.svc-tmp')), 'no temporary file');

    const tree = await ws.next(
      (f) =>
        f.channel === TREE && (f.data?.updatedDirs as Array<{ dirPath: string }>).some((d) => d.dirPath === space.path),
      5_000,
    );
    const dir = (tree.data?.updatedDirs as Array<{ dirPath: string; children: Array<Record<string, unknown>> }>).find(
      (d) => d.dirPath === space.path,
    )!;
    assert.deepEqual(
      dir.children.find((c) => c.name === 'from-api.md'),
      {
        id: 'from-api.md',
        name: 'from-api.md',
        type: 'file',
        path: join(space.path, 'from-api.md'),
        relativePath: 'from-api.md',
        childrenLoaded: true,
      },
    );
  });

  it('a file written straight to disk in the temporary space arrives too, with its new folders', async () => {
    const temp = (await apiClient(server).get('/api/spaces/svc')).body.data as Space;
    // As for any space: the server says it listens once its first watches open or a few seconds
    // have passed, so a loaded machine may still be opening this one.
    await watching(ws, temp);
    const folder = join(temp.path, `disk-${uniqueSuffix()}`);
    mkdirSync(join(folder, 'deeper'), { recursive: true });
    writeFileSync(join(folder, 'deeper', 'note.txt'), 'written with fs');
    const rel = (p: string) => p.slice(temp.path.length + 1);
    const noteSeen = () =>
      changesOf(ws, temp.id).some((c) => c.relativePath === rel(join(folder, 'deeper', 'note.txt')));
    // chokidar can miss entries created right after their folder (`mkdir -p` then a write); the
    // watcher then notices, and clients get a resync instead of the change: they read again.
    await waitFor(
      () => noteSeen() || batchesOf(ws, temp.id).some((b) => b.resync),
      15_000,
      'the file on disk, or a resync',
    );
    if (!noteSeen()) {
      const listed = okData<Array<{ name: string }>>(
        await apiClient(server).post(`/api/spaces/${temp.id}/artifacts/children`, { dirPath: join(folder, 'deeper') }),
      );
      assert.deepEqual(
        listed.map((c) => c.name),
        ['note.txt'],
        'read again after the resync',
      );
      return;
    }
    const changes = changesOf(ws, temp.id);
    assert.ok(
      changes.some((c) => c.type === 'addDir' && c.relativePath === rel(folder)),
      JSON.stringify(changes),
    );
    assert.ok(changes.some((c) => c.type === 'add' && c.path === join(folder, 'deeper', 'note.txt')));
    const tree = await ws.next(
      (f) =>
        f.channel === TREE &&
        (f.data?.updatedDirs as Array<{ dirPath: string }>).some((d) => d.dirPath === join(folder, 'deeper')),
      5_000,
    );
    const dir = (tree.data?.updatedDirs as Array<{ dirPath: string; children: Array<{ name: string }> }>).find(
      (d) => d.dirPath === join(folder, 'deeper'),
    )!;
    assert.deepEqual(
      dir.children.map((c) => c.name),
      ['note.txt'],
    );
  });

  it('changes in .git, node_modules and the top .svc folder produce nothing', async () => {
    ws.frames.length = 0;
    for (const dir of ['.git/objects/ab', 'node_modules/pkg', 'lib/node_modules/x', '.svc/memory', 'sub/.git']) {
      mkdirSync(join(space.path, dir), { recursive: true });
    }
    writeFileSync(join(space.path, '.git/HEAD'), 'ref: refs/heads/main');
    writeFileSync(join(space.path, '.git/objects/ab/cdef'), 'blob');
    writeFileSync(join(space.path, 'node_modules/pkg/index.js'), 'x');
    writeFileSync(join(space.path, 'lib/node_modules/x/y.js'), 'x');
    writeFileSync(join(space.path, '.svc/memory.md'), 'memory');
    writeFileSync(join(space.path, '.svc/memory/topic.md'), 'topic');
    writeFileSync(join(space.path, 'sub/.git/config'), 'x');
    writeFileSync(join(space.path, 'sentinel.txt'), 'x');
    await waitFor(() => changesOf(ws, space.id).some((c) => c.relativePath === 'sentinel.txt'), 10_000, 'the sentinel');
    await waitFor(() => changesOf(ws, space.id).some((c) => c.relativePath === 'sub'), 10_000, 'the new folder');
    // A nested .svc is an ordinary folder (written once its parent is watched).
    mkdirSync(join(space.path, 'sub/.svc'), { recursive: true });
    writeFileSync(join(space.path, 'sub/.svc/kept.txt'), 'x');
    // chokidar can miss entries created right after their folder; the watcher then notices,
    // and clients get a resync instead of the change.
    await waitFor(
      () =>
        changesOf(ws, space.id).some((c) => c.relativePath === 'sub/.svc/kept.txt') ||
        batchesOf(ws, space.id).some((b) => b.resync),
      15_000,
      'the nested .svc file',
    );
    await sleep(800);
    const paths = changesOf(ws, space.id).map((c) => c.relativePath);
    const leaked = paths.filter(
      (p) => /(^|\/)(\.git|node_modules)(\/|$)/.test(p) || p === '.svc' || p.startsWith('.svc/'),
    );
    assert.deepEqual(leaked, [], `ignored paths reported: ${JSON.stringify(paths)}`);
    assert.ok(paths.includes('lib'), 'the folder holding node_modules is reported');
  });

  it('deleting a file reports the unlink and the updated folder', async () => {
    mkdirSync(join(space.path, 'del'), { recursive: true });
    // The folder first: chokidar can miss files created right after their folder (the resync
    // case above), and this case is about the deletion.
    await waitFor(() => changesOf(ws, space.id).some((c) => c.relativePath === 'del'), 10_000, 'the folder');
    writeFileSync(join(space.path, 'del/a.txt'), 'a');
    writeFileSync(join(space.path, 'del/b.txt'), 'b');
    await waitFor(() => changesOf(ws, space.id).some((c) => c.relativePath === 'del/b.txt'), 10_000, 'adds');
    await sleep(700);
    ws.frames.length = 0;
    unlinkSync(join(space.path, 'del/a.txt'));
    const batch = await ws.next(
      (f) => f.channel === BATCH && (f.data?.changes as Change[]).some((c) => c.relativePath === 'del/a.txt'),
      5_000,
    );
    assert.equal((batch.data?.changes as Change[]).find((c) => c.relativePath === 'del/a.txt')?.type, 'unlink');
    const tree = await ws.next(
      (f) =>
        f.channel === TREE &&
        (f.data?.updatedDirs as Array<{ dirPath: string }>).some((d) => d.dirPath === join(space.path, 'del')),
      5_000,
    );
    const dir = (tree.data?.updatedDirs as Array<{ dirPath: string; children: Array<{ name: string }> }>).find(
      (d) => d.dirPath === join(space.path, 'del'),
    )!;
    assert.deepEqual(
      dir.children.map((c) => c.name),
      ['b.txt'],
    );
  });

  it('a burst of 2,500 files arrives in batches of at most 1,000, each file once', async () => {
    ws.frames.length = 0;
    const folder = join(space.path, 'burst');
    mkdirSync(folder);
    const names = Array.from({ length: 2_500 }, (_, i) => `file-${String(i).padStart(4, '0')}.txt`);
    for (let i = 0; i < names.length; i += 250) {
      await Promise.all(names.slice(i, i + 250).map((n) => writeFile(join(folder, n), n)));
    }
    const wanted = new Set(names.map((n) => `burst/${n}`));
    await waitFor(
      () => changesOf(ws, space.id).filter((c) => c.type === 'add' && wanted.has(c.relativePath)).length >= wanted.size,
      90_000,
      'all 2,500 adds',
    );
    await sleep(800);
    const batches = batchesOf(ws, space.id);
    assert.ok(batches.length >= 3, `${batches.length} batches`);
    for (const b of batches) assert.ok(b.changes.length <= 1_000, `a batch of ${b.changes.length}`);
    assert.ok(batches.every((b) => b.resync === undefined));
    const adds = changesOf(ws, space.id).filter((c) => c.type === 'add' && wanted.has(c.relativePath));
    assert.equal(adds.length, 2_500, 'each file added once');
    assert.equal(new Set(adds.map((c) => c.relativePath)).size, 2_500);
    const trees = ws.frames.filter((f) => f.channel === TREE) as Frame[];
    const burstDir = trees
      .flatMap((f) => f.data?.updatedDirs as Array<{ dirPath: string; children: unknown[] }>)
      .filter((d) => d.dirPath === folder)
      .pop();
    assert.equal(burstDir?.children.length, 2_500, 'the last tree update of the folder lists every file');
  });

  it('reconcile tells every client to resync', async () => {
    ws.frames.length = 0;
    const res = await apiClient(server).post(`/api/spaces/${space.id}/artifacts/reconcile`, {});
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true });
    const batch = await ws.event(BATCH, 5_000);
    assert.deepEqual(batch.data, { spaceId: space.id, changes: [], resync: true });
    assert.equal(
      (await apiClient(server).post('/api/spaces/00000000-0000-4000-8000-000000000000/artifacts/reconcile', {})).status,
      404,
    );
  });

  it('a deleted space is no longer watched; a new one is', async () => {
    const other = await createSpace(server, 'Short-lived');
    await watching(ws, other);
    const res = await apiClient(server).del(`/api/spaces/${other.id}`);
    assert.equal(res.status, 200);
    await sleep(1_000);
    mkdirSync(other.path, { recursive: true });
    ws.frames.length = 0;
    writeFileSync(join(other.path, 'after-delete.txt'), 'x');
    writeFileSync(join(space.path, 'still-watched.txt'), 'x');
    await waitFor(
      () => changesOf(ws, space.id).some((c) => c.relativePath === 'still-watched.txt'),
      10_000,
      'sentinel',
    );
    await sleep(700);
    assert.equal(batchesOf(ws, other.id).length, 0);
    rmSync(other.path, { recursive: true, force: true });
  });
});

describe('leader lease', () => {
  it('in-process: always the leader', async () => {
    const lease: LeaderLease = new LocalLeaderLease();
    const events: string[] = [];
    const campaign = lease.campaign('x', {
      elected: (i) => events.push(`elected:${i.takeover}`),
      deposed: () => events.push('deposed'),
    });
    await campaign.settled;
    assert.equal(campaign.isLeader(), true);
    assert.deepEqual(events, ['elected:false']);
    await lease.close();
    assert.equal(campaign.isLeader(), false);
  });

  describe('Redis', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
    const prefix = `svc-test-lease-${uniqueSuffix()}`;
    const leases: RedisLeaderLease[] = [];
    const leaseModule = new URL('../libs/infra/src/watch/redis-leader-lease.js', import.meta.url).href;
    const make = (owner: string): RedisLeaderLease => {
      const lease = new RedisLeaderLease(testRedisUrl(), prefix, owner, undefined, { ttlMs: 1_000, renewEveryMs: 200 });
      leases.push(lease);
      return lease;
    };
    after(async () => {
      for (const lease of leases) await lease.close();
    });

    it('one holder at a time; release hands over at once, a dead holder within the lease lifetime', async () => {
      const log: string[] = [];
      const listener = (name: string) => ({
        elected: (i: { takeover: boolean }) => log.push(`${name}:elected:${i.takeover}`),
        deposed: () => log.push(`${name}:deposed`),
      });
      const a = make('a').campaign('watch', listener('a'));
      await a.settled;
      const b = make('b').campaign('watch', listener('b'));
      const c = make('c').campaign('watch', listener('c'));
      await Promise.all([b.settled, c.settled]);
      assert.deepEqual([a.isLeader(), b.isLeader(), c.isLeader()], [true, false, false]);
      await sleep(600);
      assert.equal(a.isLeader(), true, 'renewed');
      assert.deepEqual(log, ['a:elected:false']);

      await a.stop();
      await waitFor(() => b.isLeader() || c.isLeader(), 1_000, 'handover after release');
      assert.equal(b.isLeader() && c.isLeader(), false, 'one leader');
      const [holder, other] = b.isLeader() ? [b, c] : [c, b];
      assert.match(log[1]!, /^[bc]:elected:true$/);

      // The holder "dies": its key is no longer renewed (simulated by stealing and deleting it).
      const redis = new Redis(testRedisUrl());
      try {
        await redis.set(`${prefix}:lease:watch`, 'someone-else', 'PX', 1_000);
        await waitFor(() => !holder.isLeader(), 1_000, 'the holder notices it lost the lease');
        assert.ok(log.some((l) => /^[bc]:deposed$/.test(l)));
        await waitFor(() => holder.isLeader() || other.isLeader(), 3_000, 'takeover after expiry');
      } finally {
        redis.disconnect();
      }
    });

    it('where Redis refuses CLIENT commands, leases are still taken, renewed and handed over on release', async () => {
      const admin = new Redis(testRedisUrl());
      const user = `svc-test-noclient-${uniqueSuffix()}`;
      await admin.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '&*', '+@all', '-client');
      try {
        const url = new URL(testRedisUrl());
        url.username = user;
        url.password = 'pw';
        const restricted = (owner: string): RedisLeaderLease => {
          const lease = new RedisLeaderLease(url.toString(), prefix, owner, undefined, {
            ttlMs: 1_000,
            renewEveryMs: 200,
          });
          leases.push(lease);
          return lease;
        };
        const noop = { elected: () => {}, deposed: () => {} };
        const a = restricted('ra').campaign('restricted', noop);
        await a.settled;
        assert.equal(a.isLeader(), true, 'acquired without a client id');
        const value = await admin.get(`${prefix}:lease:restricted`);
        assert.match(String(value), /^ra:[0-9a-f-]+$/, 'the token alone');
        const b = restricted('rb').campaign('restricted', noop);
        await b.settled;
        await sleep(1_500);
        assert.deepEqual([a.isLeader(), b.isLeader()], [true, false], 'renewed, not taken');
        await a.stop();
        await waitFor(() => b.isLeader(), 2_000, 'handover after release');
      } finally {
        await admin.call('ACL', 'DELUSER', user);
        admin.disconnect();
      }
    });

    /** A lease held by a separate process with the default timings (its key lives 10 s). */
    async function holdInChild(name: string): Promise<ChildProcess> {
      const script =
        'const { RedisLeaderLease } = await import(process.argv[1]);' +
        'const lease = new RedisLeaderLease(process.argv[2], process.argv[3], "doomed");' +
        'const campaign = lease.campaign(process.argv[4], { elected: () => {}, deposed: () => {} });' +
        'await campaign.settled;' +
        'console.log(campaign.isLeader() ? "leading" : "not leading");' +
        'setInterval(() => {}, 60_000);';
      const child = spawn(
        process.execPath,
        ['--input-type=module', '-e', script, leaseModule, testRedisUrl(), prefix, name],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let output = '';
      child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      try {
        await waitFor(() => output.includes('leading'), 10_000, 'the child campaigning');
      } catch (err) {
        child.kill('SIGKILL');
        throw err;
      }
      assert.equal(output.trim(), 'leading');
      return child;
    }

    it('a holder that is killed is replaced once Redis sees its connection gone, long before its lease expires', async () => {
      const child = await holdInChild('killed');
      const events: string[] = [];
      const survivor = make('survivor').campaign('killed', {
        elected: (i) => events.push(`elected:${i.takeover}`),
        deposed: () => events.push('deposed'),
      });
      await survivor.settled;
      assert.equal(survivor.isLeader(), false, 'the child holds it');
      await sleep(1_000);
      assert.equal(survivor.isLeader(), false, 'a live holder keeps it');

      const killedAt = Date.now();
      child.kill('SIGKILL');
      // Renewed every 3 s, the child's key would expire 7-10 s after the kill.
      await waitFor(() => survivor.isLeader(), 5_000, 'takeover before the lease could expire');
      assert.ok(Date.now() - killedAt < 7_000);
      assert.deepEqual(events, ['elected:true']);
    });

    it('a holder whose Redis connection closes steps down and the lease goes to one replica', async () => {
      const log: string[] = [];
      const listener = (name: string) => ({
        elected: () => log.push(`${name}:elected`),
        deposed: () => log.push(`${name}:deposed`),
      });
      const a = make('a').campaign('cut', listener('a'));
      await a.settled;
      const b = make('b').campaign('cut', listener('b'));
      await b.settled;
      assert.deepEqual([a.isLeader(), b.isLeader()], [true, false]);

      const redis = new Redis(testRedisUrl());
      try {
        const value = (await redis.get(`${prefix}:lease:cut`))!;
        const clientId = / (\d+) \S+$/.exec(value)?.[1];
        assert.ok(clientId, `the lease names its holder's connection: ${value}`);
        await redis.call('CLIENT', 'KILL', 'ID', clientId);
        await waitFor(() => log.includes('a:deposed'), 3_000, 'the holder steps down');
        await waitFor(() => a.isLeader() || b.isLeader(), 8_000, 'a new holder');
        assert.equal(a.isLeader() && b.isLeader(), false, 'one leader');
        // It stepped down on its connection's close, before anyone could take the lease over (not
        // at its next renewal, after the other replica had).
        const elected = log.findIndex((l, i) => i > 0 && l.endsWith(':elected'));
        assert.ok(elected === -1 || log.indexOf('a:deposed') < elected, log.join(', '));
      } finally {
        redis.disconnect();
      }
    });
  });
});

describe('two replicas on one shared data folder', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let services: SharedServices;
  let a: TestServer;
  let b: TestServer;
  const shared = mkdtempSync(join(tmpdir(), 'svc-shared-'));

  before(async () => {
    services = await createSharedServices();
    a = await startServer({ services, dataDir: shared });
    b = await startServer({ services, dataDir: shared });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await services?.dispose();
    rmSync(shared, { recursive: true, force: true });
  });

  const leaderOf = (): [TestServer, TestServer] => {
    const isLeader = (s: TestServer) => s.output().includes('"msg":"watching spaces (leader)"');
    assert.notEqual(isLeader(a), isLeader(b), 'exactly one replica watches');
    return isLeader(a) ? [a, b] : [b, a];
  };

  it('a client on each replica sees each change exactly once', async () => {
    const onA = await WsTestClient.signedIn(a.wsUrl, a.password);
    const onB = await WsTestClient.signedIn(b.wsUrl, b.password);
    const space = await createSpace(b, 'Shared');
    await watching(onA, space);
    await sleep(300);
    onB.frames.length = 0;

    writeFileSync(join(space.path, 'on-disk.txt'), 'x');
    const created = await apiClient(a).post(`/api/spaces/${space.id}/artifacts/file`, {
      name: 'via-a.txt',
      content: 'a',
    });
    assert.equal(created.status, 200);
    const created2 = await apiClient(b).post(`/api/spaces/${space.id}/artifacts/file`, {
      name: 'via-b.txt',
      content: 'b',
    });
    assert.equal(created2.status, 200);
    for (const ws of [onA, onB]) {
      await waitFor(
        () =>
          ['on-disk.txt', 'via-a.txt', 'via-b.txt'].every((n) =>
            changesOf(ws, space.id).some((c) => c.relativePath === n),
          ),
        10_000,
        'all three files',
      );
    }
    await sleep(1_500);
    for (const [label, ws] of [
      ['A', onA],
      ['B', onB],
    ] as const) {
      const adds = changesOf(ws, space.id)
        .filter((c) => c.type === 'add')
        .map((c) => c.relativePath)
        .sort();
      assert.deepEqual(adds, ['on-disk.txt', 'via-a.txt', 'via-b.txt'], `client on ${label}`);
    }
    onA.close();
    onB.close();
  });

  it('when the watching replica stops, the other takes over (with a resync) and events keep coming once', async () => {
    const [leader, survivor] = leaderOf();
    const ws = await WsTestClient.signedIn(survivor.wsUrl, survivor.password);
    const space = await createSpace(survivor, 'Takeover');
    await watching(ws, space);
    await leader.stop();
    const resync = await ws.next(
      (f) => f.channel === BATCH && f.data?.spaceId === space.id && f.data?.resync === true,
      20_000,
    );
    assert.deepEqual(resync.data?.changes, []);
    ws.frames.length = 0;
    writeFileSync(join(space.path, 'after-takeover.txt'), 'x');
    await waitFor(
      () => changesOf(ws, space.id).some((c) => c.relativePath === 'after-takeover.txt'),
      10_000,
      'change after takeover',
    );
    await sleep(1_000);
    assert.equal(changesOf(ws, space.id).filter((c) => c.relativePath === 'after-takeover.txt').length, 1);
    ws.close();
  });
});
