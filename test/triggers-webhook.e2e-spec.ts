import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { okData } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { REPO_ROOT } from '#testing/test-server.js';
import { automationSpec, TriggerHarness } from '#testing/trigger-harness.js';
import { sleep, waitFor } from '#testing/wait.js';

const SECRET = 'hook-s3cret';
const sign = (raw: string, secret = SECRET) => createHmac('sha256', secret).update(raw).digest('hex');

const spec = (tag: string, path: string, secret: string | null = SECRET) =>
  automationSpec(
    tag,
    [{ id: 'gh', source: { type: 'webhook', config: { path, ...(secret ? { secret } : {}) } } }],
    `Hooked ${tag}`,
  );

describe(`webhook triggers (${testMode()})`, () => {
  let h: TriggerHarness;
  const suffix = randomUUID().slice(0, 8);
  const path = `github-${suffix}`;
  const api = () => h.api;
  const data = okData;
  /** A delivery with the raw text sent byte for byte. */
  const deliver = (hookPath: string, raw: string, headers: Record<string, string> = {}, prefix = '') =>
    request(h.server.url)
      .post(`${prefix}/hooks/${hookPath}`)
      .set('Content-Type', 'application/json')
      .set(headers)
      .send(raw);
  const runsOf = (tag: string) => h.runsOf(tag);
  /** A run in progress makes the next trigger a `run_skipped`: wait for the app to be idle. */
  const idle = (id: string) => h.idle(id);
  let spaceId: string;
  let appId: string;

  before(async () => {
    h = await TriggerHarness.start({ env: { SVC_BASE_PATH: '/svc' } });
    spaceId = await h.space('hooks');
    appId = await h.install(spec('main', path), spaceId);
  });
  after(async () => {
    await h?.stop();
  });

  it('a signed delivery answers {ok, received} at once, needs no password and starts one run with the body', async () => {
    const raw = JSON.stringify({ action: 'opened', issue: { number: 1 } });
    const res = await deliver(path, raw, { 'X-Hub-Signature-256': `sha256=${sign(raw)}`, 'X-GitHub-Delivery': 'd-1' });
    assert.deepEqual([res.status, res.body], [200, { ok: true, received: true }]);
    await waitFor(() => runsOf('main').length === 1, 20_000, 'the run');
    const run = runsOf('main')[0]!;
    assert.equal(run.type, 'webhook');
    assert.deepEqual(run.data.body, { action: 'opened', issue: { number: 1 } });
    assert.equal(run.data.deliveryId, 'd-1');
    assert.equal(run.data.path, path);
  });

  it('a repeat starts no second run: the same delivery id, or the same body without an id', async () => {
    const raw = JSON.stringify({ action: 'edited', n: 2 });
    await idle(appId);
    const first = await deliver(path, raw, { 'X-Signature-256': sign(raw), 'X-Webhook-Id': 'w-2' });
    assert.equal(first.status, 200);
    await waitFor(() => runsOf('main').some((r) => (r.data.body as { n?: number }).n === 2), 20_000, 'the run');
    await idle(appId);
    const other = JSON.stringify({ action: 'edited', n: 3 });
    const sameId = await deliver(path, other, { 'X-Signature-256': sign(other), 'X-Webhook-Id': 'w-2' });
    assert.deepEqual([sameId.status, sameId.body], [200, { ok: true, received: true }]);
    const sameBody = await deliver(path, raw, { 'X-Webhook-Signature': sign(raw) });
    assert.deepEqual([sameBody.status, sameBody.body], [200, { ok: true, received: true }]);
    // A fresh delivery after the repeats: once its run is seen, the repeats would have been too.
    const fresh = JSON.stringify({ action: 'closed', n: 4 });
    assert.equal((await deliver(path, fresh, { 'X-Webhook-Signature': sign(fresh) })).status, 200);
    await waitFor(() => runsOf('main').some((r) => (r.data.body as { n?: number }).n === 4), 20_000, 'the fresh run');
    await sleep(1000);
    const bodies = runsOf('main').map((r) => (r.data.body as { n?: number }).n ?? 1);
    assert.deepEqual(bodies.sort(), [1, 2, 4]);
  });

  it('a wrong or missing signature answers 401 and starts nothing; unknown path 404; not JSON 400; over 256 KB 413', async () => {
    await idle(appId);
    const before = runsOf('main').length;
    const raw = JSON.stringify({ action: 'forged' });
    const wrong = await deliver(path, raw, { 'X-Hub-Signature-256': `sha256=${sign(raw, 'guess')}` });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error, 'Invalid webhook signature');
    const missing = await deliver(path, raw);
    assert.deepEqual([missing.status, missing.body.error], [401, 'Invalid webhook signature']);
    const unknown = await deliver(`nobody-${suffix}`, raw);
    assert.equal(unknown.status, 404);
    const notJson = await deliver(path, 'not json', { 'X-Signature-256': sign('not json') });
    assert.equal(notJson.status, 400);
    const big = JSON.stringify({ blob: 'x'.repeat(256 * 1024) });
    const tooBig = await deliver(path, big, { 'X-Signature-256': sign(big) });
    assert.equal(tooBig.status, 413);
    // Just under the limit is fine (and larger than the 100 KB of /api bodies).
    const large = JSON.stringify({ blob: 'y'.repeat(200 * 1024) });
    assert.equal((await deliver(path, large, { 'X-Signature-256': sign(large) })).status, 200);
    await waitFor(() => runsOf('main').length === before + 1, 20_000, 'the large delivery run');
    await sleep(1000);
    assert.equal(runsOf('main').length, before + 1, 'nothing for the refused ones');
  });

  it('the /api body rules hold for webhooks: too deep, NUL or an unpaired surrogate answer 400, and a retry is taken', async () => {
    await idle(appId);
    const before = runsOf('main').length;
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const tooDeep = await deliver(path, deep, { 'X-Signature-256': sign(deep) });
    assert.deepEqual([tooDeep.status, tooDeep.body.error], [400, 'JSON body is nested deeper than 64 levels']);
    for (const raw of ['{"text":"a\\u0000b"}', '{"text":"a\\ud800b"}']) {
      const refused = await deliver(path, raw, { 'X-Signature-256': sign(raw), 'X-Webhook-Id': `odd-${suffix}` });
      assert.equal(refused.status, 400, raw);
      assert.match(refused.body.error, /^body\.text must not contain (NUL|unpaired surrogate) characters$/);
    }
    // Nothing was recorded for the refused ones: the same delivery id sent right is a new delivery.
    const fixed = JSON.stringify({ text: 'fixed' });
    const ok = await deliver(path, fixed, { 'X-Signature-256': sign(fixed), 'X-Webhook-Id': `odd-${suffix}` });
    assert.deepEqual(ok.body, { ok: true, received: true });
    await waitFor(() => runsOf('main').length === before + 1, 20_000, 'the run of the fixed delivery');
  });

  it('answers under SVC_BASE_PATH too, and bad signatures never lock out sign-in', async () => {
    await idle(appId);
    const raw = JSON.stringify({ via: 'base-path' });
    const res = await deliver(path, raw, { 'X-Signature-256': sign(raw) }, '/svc');
    assert.deepEqual([res.status, res.body], [200, { ok: true, received: true }]);
    await waitFor(() => runsOf('main').some((r) => (r.data.body as { via?: string }).via === 'base-path'), 20_000);
    for (let i = 0; i < 25; i++) {
      const bad = JSON.stringify({ i });
      assert.equal((await deliver(path, bad, { 'X-Signature-256': sign(bad, 'nope') })).status, 401);
    }
    const login = await request(h.server.url).post('/api/remote/login').send({ token: h.server.password });
    assert.equal(login.status, 200, JSON.stringify(login.body));
    assert.equal(login.body.success, true);
  });

  it('paths are unique across apps; a paused or uninstalled app answers 404; no secret means no signature needed', async () => {
    const taken = await api().post('/api/apps/install', { spec: spec('copy', path), spaceId });
    assert.equal(taken.body.success, false);
    assert.match(taken.body.error, /subscriptions\[0\]\.source\.config\.path/);
    const upper = await api().post('/api/apps/install', { spec: spec('upper', 'Not-Lower'), spaceId });
    assert.match(upper.body.error, /subscriptions\[0\]\.source\.config\.path/);
    const openPath = `open-${suffix}`;
    const openId = data<{ appId: string }>(
      await api().post('/api/apps/install', { spec: spec('open', openPath, null), spaceId }),
    ).appId;
    const raw = JSON.stringify({ open: true });
    assert.equal((await deliver(openPath, raw)).status, 200);
    await waitFor(() => runsOf('open').length === 1, 20_000, 'unsigned run');
    await idle(openId);
    const renamed = `renamed-${suffix}`;
    data(
      await api().patch(`/api/apps/${openId}/spec`, {
        subscriptions: [{ id: 'gh', source: { type: 'webhook', config: { path: renamed } } }],
      }),
    );
    assert.equal((await deliver(openPath, JSON.stringify({ n: 1 }))).status, 404, 'the old path is gone at once');
    data(await api().post(`/api/apps/${openId}/pause`));
    assert.equal((await deliver(renamed, JSON.stringify({ n: 2 }))).status, 404, 'paused');
    data(await api().post(`/api/apps/${openId}/resume`));
    assert.equal((await deliver(renamed, JSON.stringify({ n: 3 }))).status, 200);
    assert.equal((await api().delete(`/api/apps/${openId}`)).status, 200);
    assert.equal((await deliver(renamed, JSON.stringify({ n: 4 }))).status, 404, 'uninstalled');
    const state = data<{ triggers: Array<{ type: string; fires: boolean; path?: string }> }>(
      await api().get(`/api/apps/${appId}/state`),
    );
    assert.deepEqual(state.triggers, [{ id: 'gh', type: 'webhook', fires: true, path }]);
  });

  it('paths of several segments: /hooks/<a>/<b> (also under SVC_BASE_PATH), unique as a whole', async () => {
    const deep = `gh-${suffix}/push`;
    const deepId = data<{ appId: string }>(
      await api().post('/api/apps/install', { spec: spec('deep', `/${deep}/`), spaceId }),
    ).appId;
    const stored = data<{ spec: { subscriptions: Array<{ source: { config: { path: string } } }> } }>(
      await api().get(`/api/apps/${deepId}`),
    );
    assert.equal(stored.spec.subscriptions[0]!.source.config.path, deep, 'stored without outer slashes');
    const raw = JSON.stringify({ ref: 'refs/heads/main' });
    const res = await deliver(deep, raw, { 'X-Hub-Signature-256': `sha256=${sign(raw)}` });
    assert.deepEqual([res.status, res.body], [200, { ok: true, received: true }]);
    await waitFor(() => runsOf('deep').length === 1, 20_000, 'the run of the deep path');
    assert.equal(runsOf('deep')[0]!.data.path, deep);
    await idle(deepId);
    const based = JSON.stringify({ ref: 'refs/heads/next' });
    const viaBase = await deliver(deep, based, { 'X-Signature-256': sign(based) }, '/svc');
    assert.deepEqual([viaBase.status, viaBase.body], [200, { ok: true, received: true }]);
    await waitFor(() => runsOf('deep').length === 2, 20_000, 'the run via the base path');
    // Only the whole path names the hook: its first segment, or a longer path, is unknown.
    assert.equal((await deliver(`gh-${suffix}`, raw, { 'X-Signature-256': sign(raw) })).status, 404);
    assert.equal((await deliver(`${deep}/more`, raw, { 'X-Signature-256': sign(raw) })).status, 404);
    const copy = await api().post('/api/apps/install', { spec: spec('deep-copy', deep), spaceId });
    assert.equal(copy.body.success, false);
    assert.match(copy.body.error, /subscriptions\[0\]\.source\.config\.path/);
    const sibling = await api().post('/api/apps/install', { spec: spec('deep-pull', `gh-${suffix}/pull`), spaceId });
    assert.equal(sibling.body.success, true, 'a sibling path is another hook');
    for (const bad of ['a//b', 'a/../b', 'A/b', 'a/b c']) {
      const refused = await api().post('/api/apps/install', { spec: spec('bad', bad), spaceId });
      assert.match(refused.body.error ?? '', /subscriptions\[0\]\.source\.config\.path/, bad);
    }
  });

  it("the README's curl/openssl example signs correctly and is answered {ok, received}", async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const block = /```sh\n(BODY=[^`]*?openssl dgst[^`]*?)```/.exec(readme)?.[1];
    assert.ok(block, 'the README has the webhook signing example');
    const hookPath = `readme-${suffix}/events`;
    const readmeId = data<{ appId: string }>(
      await api().post('/api/apps/install', {
        spec: { ...spec('readme', hookPath, 'my-secret-key') },
        spaceId,
      }),
    ).appId;
    const script = block.replace(/\$B\/hooks\/[a-z0-9/._~-]+/, `$B/hooks/${hookPath}`);
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
      env: { ...process.env, B: h.server.url, J: 'Content-Type: application/json' },
    });
    assert.deepEqual(JSON.parse(stdout.trim()), { ok: true, received: true });
    await waitFor(() => runsOf('readme').length === 1, 20_000, 'the run of the README delivery');
    assert.deepEqual(runsOf('readme')[0]!.data.body, { action: 'opened', issue: { number: 7 } });
    data(await api().post(`/api/apps/${readmeId}/pause`));
  });
});
