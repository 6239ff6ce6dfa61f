import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { okData } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { type AppState, automationSpec, everySub as every, TriggerHarness } from '#testing/trigger-harness.js';
import { sleep, waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

type State = AppState;

describe(`schedule triggers (${testMode()})`, () => {
  let h: TriggerHarness;
  const api = () => h.api;
  const data = okData;
  const runsOf = (tag: string) => h.runsOf(tag);
  const state = (appId: string) => h.state(appId);
  const install = (tag: string, subscriptions: object[], spaceId: string) =>
    h.install(automationSpec(tag, subscriptions, `Ticker ${tag}`), spaceId);
  const spec = automationSpec;
  let spaceId: string;

  before(async () => {
    h = await TriggerHarness.start({ env: { SVC_TRIGGER_RECONCILE_MS: '1000' } });
    spaceId = await h.space('schedules');
  });
  after(async () => {
    await h?.stop();
  });

  it('every 2s fires once per tick on the grid from install; nextRunAtMs is the real next tick', async () => {
    const appId = await install('grid', [every('2s')], spaceId);
    const app = data<{ installedAt: number }>(await api().get(`/api/apps/${appId}`));
    await waitFor(() => runsOf('grid').length >= 3, 30_000, 'three scheduled runs');
    const runs = runsOf('grid');
    const scheduled = runs.map((r) => Date.parse(String(r.data.scheduledAt)));
    assert.equal(new Set(scheduled).size, scheduled.length, 'one run per tick');
    for (const t of scheduled) assert.equal((t - app.installedAt) % 2000, 0, 'on the 2 s grid from install');
    for (let i = 1; i < scheduled.length; i++) assert.equal(scheduled[i]! - scheduled[i - 1]!, 2000, 'no tick missed');
    for (const run of runs) {
      assert.equal(run.type, 'schedule');
      assert.equal(run.data.subscriptionId, 'tick');
      assert.ok(run.startedAtMs >= Date.parse(String(run.data.scheduledAt)), 'never early');
    }
    const now = Date.now();
    const s = await state(appId);
    assert.ok(
      s.nextRunAtMs !== null && s.nextRunAtMs > now - 2000 && s.nextRunAtMs <= now + 2000,
      String(s.nextRunAtMs),
    );
    assert.equal((s.nextRunAtMs - app.installedAt) % 2000, 0);
    // The status event a run sends already carries the next occurrence, not the one that fired.
    const ws = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    const event = await ws.next(
      (f) =>
        f.channel === 'app:status_changed' && f.data?.appId === appId && (f.data.state as State).runningCount === 1,
      10_000,
    );
    assert.ok((event.data!.state as State).nextRunAtMs! > Date.now() - 500);
    ws.close();
    data(await api().post(`/api/apps/${appId}/pause`));
  });

  it('paused: nothing fires and nextRunAtMs is null; resumed: no backlog, one run_skipped, back on the grid', async () => {
    const appId = await install('pause', [every('2s')], spaceId);
    const installedAt = data<{ installedAt: number }>(await api().get(`/api/apps/${appId}`)).installedAt;
    await waitFor(() => runsOf('pause').length >= 1, 20_000, 'a first run');
    const pausedAt = Date.now();
    data(await api().post(`/api/apps/${appId}/pause`));
    await waitFor(async () => (await state(appId)).runningCount === 0, 10_000, 'run over');
    assert.equal((await state(appId)).nextRunAtMs, null);
    const countAtPause = runsOf('pause').length;
    await sleep(5000);
    assert.equal(runsOf('pause').length, countAtPause, 'no run while paused');
    const resumedAt = Date.now();
    data(await api().post(`/api/apps/${appId}/resume`));
    await waitFor(() => runsOf('pause').length > countAtPause, 20_000, 'a run after resume');
    await sleep(500);
    const after = runsOf('pause').slice(countAtPause);
    assert.equal(after.length, 1, 'one run, no backlog of the ticks missed while paused');
    assert.ok(Date.parse(String(after[0]!.data.scheduledAt)) > resumedAt, 'a tick after the resume');
    data(await api().post(`/api/apps/${appId}/pause`));

    // The ticks that fell while paused: one run_skipped entry saying so, with their count and span.
    type Entry = { type: string; content: Record<string, unknown> };
    const activity = data<Entry[]>(await api().get(`/api/apps/${appId}/activity?limit=200`));
    const skips = activity.filter((e) => e.type === 'run_skipped' && /paused/.test(String(e.content.reason)));
    assert.equal(skips.length, 1, JSON.stringify(activity.map((e) => [e.type, e.content.reason])));
    const skip = skips[0]!.content;
    assert.match(String(skip.reason), /^The digital human was paused: \d+ scheduled runs skipped/);
    assert.equal(skip.subscriptionId, 'tick');
    const count = Number(skip.skippedCount);
    const first = Date.parse(String(skip.firstScheduledAt));
    const last = Date.parse(String(skip.lastScheduledAt));
    assert.ok(count >= 2, `skipped ${count} ticks in ~5 s paused`);
    assert.equal(last - first, (count - 1) * 2000, 'consecutive ticks on the 2 s grid');
    assert.equal((first - installedAt) % 2000, 0, 'on the grid from install');
    assert.ok(first > pausedAt - 2000 && last <= resumedAt + 2000, `${first}..${last} within the pause`);
    const ran = runsOf('pause').map((r) => Date.parse(String(r.data.scheduledAt)));
    assert.ok(
      ran.every((t) => t < first || t > last),
      'no run started for a tick skipped while paused',
    );
  });

  it('frequency and PATCH spec take effect at once; cron with seconds in a time zone fires', async () => {
    const appId = await install('freq', [every('1d')], spaceId);
    const before = await state(appId);
    assert.ok(before.nextRunAtMs! > Date.now() + 3_600_000);
    data(await api().post(`/api/apps/${appId}/frequency`, { subscriptionId: 'tick', frequency: '2s' }));
    assert.ok((await state(appId)).nextRunAtMs! <= Date.now() + 2000);
    await waitFor(() => runsOf('freq').length >= 1, 20_000, 'a run at the new frequency');
    data(
      await api().patch(`/api/apps/${appId}/spec`, {
        subscriptions: [
          { id: 'tick', source: { type: 'schedule', config: { cron: '*/3 * * * * *', timezone: 'Asia/Shanghai' } } },
        ],
      }),
    );
    const next = (await state(appId)).nextRunAtMs!;
    assert.equal(next % 3000, 0, 'a cron second divisible by 3');
    const count = runsOf('freq').length;
    await waitFor(() => runsOf('freq').length > count, 20_000, 'a cron run');
    assert.equal(Date.parse(String(runsOf('freq').at(-1)!.data.scheduledAt)) % 3000, 0);
    data(await api().post(`/api/apps/${appId}/pause`));
  });

  it('refuses a bad time zone or cron naming the field; other sources are kept and never fire', async () => {
    const bad = await api().post('/api/apps/install', {
      spec: spec('bad', [
        { id: 'x', source: { type: 'schedule', config: { cron: '0 9 * * *', timezone: 'Mars/Olympus' } } },
      ]),
      spaceId,
    });
    assert.equal(bad.body.success, false);
    assert.match(bad.body.error, /subscriptions\[0\]\.source\.config\.timezone/);
    const badCron = await api().post('/api/apps/install', {
      spec: spec('bad', [{ id: 'x', source: { type: 'schedule', config: { cron: '61 * * * *' } } }]),
      spaceId,
    });
    assert.match(badCron.body.error, /subscriptions\[0\]\.source\.config\.cron/);
    const appId = await install(
      'others',
      [
        { id: 'page', source: { type: 'webpage', config: { url: 'https://example.com', watch: 'content' } } },
        { id: 'feed', source: { type: 'rss', config: { url: 'https://example.com/feed' } } },
        { id: 'own', source: { type: 'custom', config: { anything: 1 } } },
        { id: 'chat', source: { type: 'wecom', config: { chatId: 'c1' } } },
      ],
      spaceId,
    );
    const s = await state(appId);
    assert.deepEqual(
      s.triggers.map((t) => [t.id, t.type, t.fires]),
      [
        ['page', 'webpage', false],
        ['feed', 'rss', false],
        ['own', 'custom', false],
        ['chat', 'wecom', false],
      ],
    );
    assert.ok(s.triggers.every((t) => typeof t.note === 'string'));
    assert.equal(s.nextRunAtMs, null);
    const stored = data<{ spec: { subscriptions: unknown[] } }>(await api().get(`/api/apps/${appId}`));
    assert.equal(stored.spec.subscriptions.length, 4);
    await sleep(1500);
    assert.equal(runsOf('others').length, 0);
  });

  it('after downtime: exactly one catch-up run, then back on schedule', async () => {
    const appId = await install('downtime', [every('2s')], spaceId);
    const app = data<{ installedAt: number }>(await api().get(`/api/apps/${appId}`));
    await waitFor(() => runsOf('downtime').length >= 1, 20_000, 'a first run');
    await waitFor(async () => (await state(appId)).runningCount === 0, 10_000, 'run over');
    await h.stopServer();
    const downAt = Date.now();
    const seenBefore = runsOf('downtime').length;
    await sleep(7000); // three ticks or more missed
    await h.startServer();
    const upAt = Date.now();
    await waitFor(() => runsOf('downtime').length >= seenBefore + 2, 30_000, 'catch-up and next tick');
    await sleep(500);
    const later = runsOf('downtime').slice(seenBefore);
    const ticks = later.map((r) => Date.parse(String(r.data.scheduledAt)));
    const missed = ticks.filter((t) => t < upAt - 1000);
    assert.equal(missed.length, 1, `one catch-up among ${ticks.map((t) => t - downAt).join(', ')}`);
    assert.ok(missed[0]! >= downAt - 2000, 'the catch-up is a missed tick');
    assert.ok(
      ticks.slice(1).every((t) => t > upAt - 2000),
      'then only ticks from now on',
    );
    for (const t of ticks) assert.equal((t - app.installedAt) % 2000, 0);
    data(await api().post(`/api/apps/${appId}/pause`));
  });

  it(
    'the delayed jobs come back from Postgres when the job store lost them',
    { skip: testMode() === 'services' ? false : 'needs Redis' },
    async () => {
      const { Redis } = await import('ioredis');
      const appId = await install('flush', [every('2s')], spaceId);
      await waitFor(() => runsOf('flush').length >= 1, 20_000, 'a first run');
      const redis = new Redis(h.services!.redisUrl);
      try {
        // A Redis restarted empty: every queue key of this deployment is gone.
        const keys = await redis.keys(`${h.services!.redisPrefix}:bull*`);
        assert.ok(keys.length > 0);
        await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
      const count = runsOf('flush').length;
      await waitFor(() => runsOf('flush').length >= count + 2, 30_000, 'ticks after the job store was emptied');
      const ticks = runsOf('flush').map((r) => String(r.data.scheduledAt));
      assert.equal(new Set(ticks).size, ticks.length, 'no tick twice');
      data(await api().post(`/api/apps/${appId}/pause`));
    },
  );
});
