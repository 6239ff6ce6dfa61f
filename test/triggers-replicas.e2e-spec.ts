import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { completeEveryRun, startedRuns } from '#testing/trigger-runs.js';
import { sleep, waitFor } from '#testing/wait.js';

const spec = (tag: string, subscriptions: object[]) => ({
  spec_version: '1',
  name: `Replicated ${tag}`,
  version: '1.0.0',
  author: 'alice',
  description: 'Fires once, whichever replica.',
  type: 'automation',
  system_prompt: `[[${tag}]] Do the task, then report.`,
  subscriptions,
});

describe('triggers across two replicas', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let services: SharedServices;
  let model: ScriptedModelServer;
  let a: TestServer;
  let b: TestServer;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-trigger-replicas-'));
  const api = (s: TestServer) => ({
    get: (p: string) => request(s.url).get(p).set('Authorization', `Bearer ${s.password}`),
    post: (p: string, body: object = {}) =>
      request(s.url).post(p).set('Authorization', `Bearer ${s.password}`).send(body),
  });
  const data = <T>(res: request.Response): T => {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data as T;
  };
  const runsOf = (tag: string) => startedRuns(model.requests).filter((r) => r.tag === tag);
  const start = () =>
    startServer({
      services,
      dataDir,
      env: {
        SVC_AI_PROVIDER: 'anthropic',
        SVC_AI_API_URL: model.url,
        SVC_AI_API_KEY: 'k',
        SVC_AI_MODEL: 'scripted-model',
      },
    });
  let spaceId: string;

  before(async () => {
    services = await createSharedServices();
    model = await ScriptedModelServer.start();
    completeEveryRun(model);
    a = await start();
    b = await start();
    spaceId = data<{ id: string }>(await api(a).post('/api/spaces', { name: 'replicated triggers' })).id;
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await model?.close();
    await services?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a webhook sent to both replicas at once starts one run', async () => {
    const secret = 'both';
    const appId = data<{ appId: string }>(
      await api(a).post('/api/apps/install', {
        spec: spec('hook', [{ id: 'h', source: { type: 'webhook', config: { path: 'replicated', secret } } }]),
        spaceId,
      }),
    ).appId;
    for (let round = 0; round < 5; round++) {
      const raw = JSON.stringify({ round });
      const signature = createHmac('sha256', secret).update(raw).digest('hex');
      const send = (s: TestServer) =>
        request(s.url)
          .post('/hooks/replicated')
          .set('Content-Type', 'application/json')
          .set('X-Signature-256', signature)
          .send(raw);
      const answers = await Promise.all([send(a), send(b), send(a), send(b)]);
      for (const res of answers) assert.deepEqual([res.status, res.body], [200, { ok: true, received: true }]);
      // One run at a time per app: the next round waits for this one to end.
      await waitFor(() => runsOf('hook').length > round, 20_000, `run of round ${round}`);
      await waitFor(
        async () => data<{ runningCount: number }>(await api(b).get(`/api/apps/${appId}/state`)).runningCount === 0,
        15_000,
      );
    }
    await sleep(2000);
    const rounds = runsOf('hook').map((r) => (r.data.body as { round: number }).round);
    assert.deepEqual(rounds.sort(), [0, 1, 2, 3, 4], 'one run per delivery, whichever replica got it');
  });

  it('every 5s over 60 s: one run per tick; killing a replica loses no tick', async () => {
    const appId = data<{ appId: string }>(
      await api(a).post('/api/apps/install', {
        spec: spec('tick', [{ id: 't', source: { type: 'schedule', config: { every: '5s' } } }]),
        spaceId,
      }),
    ).appId;
    const installedAt = data<{ installedAt: number }>(await api(a).get(`/api/apps/${appId}`)).installedAt;
    const began = Date.now();
    // Half way, right after a run ended, kill the replica that ran it: the next ticks must still come.
    await waitFor(() => runsOf('tick').length >= 5, 60_000, 'five ticks');
    await waitFor(
      async () => data<{ runningCount: number }>(await api(a).get(`/api/apps/${appId}/state`)).runningCount === 0,
      10_000,
    );
    const session = data<{ replicaId: string | null }>(await api(a).get(`/api/agent/session/app-run:${appId}`));
    const pid = Number((session.replicaId ?? String(b.process.pid)).split('-')[0]);
    const [victim, survivor] = pid === a.process.pid ? [a, b] : [b, a];
    victim.process.kill('SIGKILL');
    await victim.exited;
    const killedAt = Date.now();
    await waitFor(() => Date.now() - began >= 60_000, 70_000);
    await sleep(1000);
    const ticks = runsOf('tick').map((r) => Date.parse(String(r.data.scheduledAt)));
    assert.equal(new Set(ticks).size, ticks.length, `no tick twice: ${ticks.map((t) => t - installedAt).join(',')}`);
    ticks.sort((x, y) => x - y);
    for (const t of ticks) assert.equal((t - installedAt) % 5000, 0);
    for (let i = 1; i < ticks.length; i++) assert.equal(ticks[i]! - ticks[i - 1]!, 5000, 'no tick missed');
    assert.ok(ticks.length >= 11, `ticks over 60 s: ${ticks.length}`);
    assert.ok(ticks.filter((t) => t > killedAt).length >= 4, 'the survivor kept firing');
    const state = data<{ nextRunAtMs: number }>(await api(survivor).get(`/api/apps/${appId}/state`));
    assert.ok(state.nextRunAtMs > Date.now() - 5000);
    if (victim === a) a = await start();
    else b = await start();
  });
});
