import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { okData } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { type AppState, automationSpec, everySub, TriggerHarness } from '#testing/trigger-harness.js';
import { waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

interface Entry {
  type: string;
  ts: number;
  content: { reason?: string; error?: string };
}

/**
 * docs/api/triggers.md, "Schedules": a scheduled digital human whose runs fail (the scripted model answers 400)
 * backs off between runs and, past the limit, is paused with `lastError`; `nextRunAtMs` stays
 * the real next occurrence all along (not the end of the back-off), in state and events.
 * Back-off 3 s (the last value repeats) and a pause after 3 failures, to keep it short.
 */
describe(`schedule failures: back-off, then pause (${testMode()})`, () => {
  let h: TriggerHarness;
  let spaceId: string;

  before(async () => {
    h = await TriggerHarness.start({
      failTags: ['failing'],
      slowTags: { slow: 3500 },
      env: {
        SVC_TRIGGER_BACKOFF_MS: '3000',
        SVC_TRIGGER_PAUSE_AFTER: '3',
        SVC_TRIGGER_RECONCILE_MS: '1000',
        SVC_AGENT_MAX_RETRIES: '0',
      },
    });
    spaceId = await h.space('failures');
  });
  after(async () => {
    await h?.stop();
  });

  it('runs that keep failing back off, then pause the app with lastError; nextRunAtMs stays real', async () => {
    const ws = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    try {
      const appId = await h.install(automationSpec('failing', [everySub('1s')]), spaceId);
      const installedAt = await h.installedAt(appId);
      const onGrid = (ms: number) => (ms - installedAt) % 1000 === 0;

      // While backing off (one failure seen, not yet paused), state shows the next tick.
      await waitFor(
        async () => (await h.state(appId)).lastError != null || (await h.state(appId)).status === 'paused',
        60_000,
        'a first failed run',
      );
      const during: AppState = await h.state(appId);
      if (during.status !== 'paused') {
        const now = Date.now();
        assert.ok(during.nextRunAtMs !== null && onGrid(during.nextRunAtMs), `on the 1 s grid: ${during.nextRunAtMs}`);
        assert.ok(
          during.nextRunAtMs > now - 2000 && during.nextRunAtMs <= now + 1000,
          'the next tick, not the back-off end',
        );
      }

      await waitFor(
        async () => {
          const s = await h.state(appId);
          return s.status === 'paused' && /^Paused after/.test(s.lastError ?? '');
        },
        90_000,
        'paused after repeated failures',
      );
      const paused = await h.state(appId);
      assert.match(paused.lastError ?? '', /^Paused after 3 failed runs in a row: .*scripted failure of failing/);
      assert.equal(paused.nextRunAtMs, null, 'paused: no next occurrence');
      assert.equal(paused.runningCount, 0);

      const activity = okData<Entry[]>(await h.api.get(`/api/apps/${appId}/activity?limit=200`)).reverse();
      const errors = activity.filter((e) => e.type === 'run_error');
      assert.equal(errors.length, 3, 'three failed runs, then no more');
      for (const e of errors) assert.match(e.content.error ?? '', /scripted failure of failing/);
      const reasons = activity.filter((e) => e.type === 'run_skipped').map((e) => e.content.reason ?? '');
      assert.ok(
        reasons.some((r) => /Backing off after 1 failed run/.test(r)),
        reasons.join(' | '),
      );
      assert.ok(
        reasons.some((r) => /Backing off after 2 failed run/.test(r)),
        reasons.join(' | '),
      );
      assert.match(reasons.at(-1)!, /^Paused after 3 failed runs in a row/);

      // The runs the model saw: one per tick that ran, each at least the back-off after the one before.
      const starts = [...new Set(h.runsOf('failing').map((r) => r.startedAtMs))].sort((a, b) => a - b);
      assert.equal(starts.length, 3, `run starts: ${starts.join(',')}`);
      for (let i = 1; i < starts.length; i++) {
        assert.ok(starts[i]! - starts[i - 1]! >= 2900, `back-off honoured: ${starts[i]! - starts[i - 1]!} ms`);
      }

      // Every app:status_changed of this app carried a real occurrence (or null once paused).
      const events = ws.frames
        .filter((f) => f.channel === 'app:status_changed' && f.data?.appId === appId)
        .map((f) => f.data!.state as AppState & { status?: string });
      assert.ok(events.length >= 4, `status events: ${events.length}`);
      for (const state of events) {
        if (state.nextRunAtMs !== null) assert.ok(onGrid(state.nextRunAtMs), `event nextRunAtMs ${state.nextRunAtMs}`);
      }
      const last = events.at(-1)!;
      assert.equal(last.nextRunAtMs, null);
      assert.match(last.lastError ?? '', /^Paused after 3 failed runs/);

      // Paused: nothing more fires.
      const before = h.runsOf('failing').length;
      await new Promise((r) => setTimeout(r, 3000));
      assert.equal(h.runsOf('failing').length, before);
    } finally {
      ws.close();
    }
  });

  it('a tick while the app is still running records run_skipped; runs never overlap; nextRunAtMs stays real', async () => {
    const appId = await h.install(automationSpec('slow', [everySub('1s')]), spaceId);
    const installedAt = await h.installedAt(appId);
    await waitFor(() => h.runsOf('slow').length >= 2, 60_000, 'two slow runs');
    const during = await h.state(appId);
    if (during.nextRunAtMs !== null) assert.equal((during.nextRunAtMs - installedAt) % 1000, 0, 'on the 1 s grid');
    okData(await h.api.post(`/api/apps/${appId}/pause`));
    await h.idle(appId, 60_000);
    const activity = okData<Entry[]>(await h.api.get(`/api/apps/${appId}/activity?limit=200`));
    const busy = activity.filter((e) => e.type === 'run_skipped' && /already running/.test(e.content.reason ?? ''));
    assert.ok(busy.length >= 1, `ticks during a 3.5 s run are skipped: ${activity.map((e) => e.type).join(',')}`);
    const starts = [...new Set(h.runsOf('slow').map((r) => r.startedAtMs))].sort((a, b) => a - b);
    for (let i = 1; i < starts.length; i++) {
      assert.ok(starts[i]! - starts[i - 1]! >= 3000, `one run at a time: ${starts[i]! - starts[i - 1]!} ms apart`);
    }
  });
});
