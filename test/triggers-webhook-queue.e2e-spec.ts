import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { okData } from '#testing/api-client.js';
import { testMode } from '#testing/test-env.js';
import { automationSpec, TriggerHarness } from '#testing/trigger-harness.js';
import { waitFor } from '#testing/wait.js';

const SECRET = 'queue-s3cret';
const sign = (raw: string) => createHmac('sha256', SECRET).update(raw).digest('hex');

const spec = (tag: string, path: string) =>
  automationSpec(tag, [{ id: 'gh', source: { type: 'webhook', config: { path, secret: SECRET } } }], `Queued ${tag}`);

/**
 * Every accepted delivery runs (docs/api/triggers.md): deliveries arriving while the digital human runs
 * wait in order (in Postgres, so they survive a restart) and start one run each; past
 * SVC_WEBHOOK_QUEUE_MAX waiting the answer is 429 with Retry-After.
 */
describe(`webhook delivery queue (${testMode()})`, () => {
  let h: TriggerHarness;
  const suffix = randomUUID().slice(0, 8);
  let spaceId: string;
  const deliver = (path: string, raw: string, headers: Record<string, string> = {}, type = 'application/json') =>
    request(h.server.url)
      .post(`/hooks/${path}`)
      .set('Content-Type', type)
      .set({ 'X-Hub-Signature-256': `sha256=${sign(raw)}`, ...headers })
      .send(raw);
  const numbers = (tag: string) => h.runsOf(tag).map((r) => (r.data.body as { n?: number }).n);

  before(async () => {
    // `slow` runs take a while (later deliveries arrive while one runs); `busy` runs until stopped.
    h = await TriggerHarness.start({ slowTags: { slow: 1500, restart: 4000, busy: 600_000 } });
    spaceId = await h.space('queued hooks');
  });
  after(async () => {
    await h?.stop();
  });

  it('five distinct deliveries at once start five runs, one at a time, in the order they were accepted', async () => {
    const path = `five-${suffix}`;
    const appId = await h.install(spec('slow', path), spaceId);
    for (let n = 1; n <= 5; n++) {
      const raw = JSON.stringify({ n });
      const res = await deliver(path, raw, { 'X-GitHub-Delivery': `five-${n}-${suffix}`, 'X-GitHub-Event': 'issues' });
      assert.deepEqual([res.status, res.body], [200, { ok: true, received: true }]);
    }
    await waitFor(() => numbers('slow').length === 5, 60_000, 'five runs');
    assert.deepEqual(numbers('slow'), [1, 2, 3, 4, 5]);
    await h.idle(appId);
    const activity = okData<Array<{ type: string; content: { reason?: string } }>>(
      await h.api.get(`/api/apps/${appId}/activity?limit=50`),
    );
    assert.equal(
      activity.filter((e) => e.type === 'run_skipped').length,
      0,
      `no run was skipped: ${JSON.stringify(activity.map((e) => [e.type, e.content.reason]))}`,
    );
    // The run gets the event headers and the content type, never credentials.
    const first = h.runsOf('slow')[0]!;
    assert.equal(first.data.contentType, 'application/json');
    const headers = first.data.headers as Record<string, string>;
    assert.equal(headers['x-github-event'], 'issues');
    assert.equal(headers['x-github-delivery'], `five-1-${suffix}`);
    assert.equal(headers['x-hub-signature-256'], undefined);
    assert.equal(headers.authorization, undefined);
    // Sent together too: every one runs once.
    const together = await Promise.all(
      [6, 7, 8, 9, 10].map((n) =>
        deliver(path, JSON.stringify({ n }), { Authorization: 'Bearer secret', Cookie: 'a=b' }),
      ),
    );
    assert.deepEqual(
      together.map((r) => r.status),
      [200, 200, 200, 200, 200],
    );
    await waitFor(() => numbers('slow').length === 10, 60_000, 'five more runs');
    assert.deepEqual(
      [...numbers('slow')].sort((a, b) => a! - b!),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    for (const run of h.runsOf('slow').slice(5)) {
      const sent = run.data.headers as Record<string, string>;
      assert.equal(sent.authorization, undefined);
      assert.equal(sent.cookie, undefined);
    }
  });

  it('past 100 waiting the answer is 429 with Retry-After, and the sender may retry later', async () => {
    const path = `full-${suffix}`;
    const appId = await h.install(spec('busy', path), spaceId);
    assert.equal((await deliver(path, JSON.stringify({ n: 0 }))).status, 200);
    await waitFor(() => numbers('busy').length === 1, 30_000, 'the first run');
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => deliver(path, JSON.stringify({ n: 1 + batch * 10 + i }))),
      );
      assert.deepEqual(
        answers.map((r) => r.status),
        Array.from({ length: 10 }, () => 200),
      );
    }
    const refused = await deliver(path, JSON.stringify({ n: 101 }), { 'X-GitHub-Delivery': `full-101-${suffix}` });
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.match(String(refused.headers['retry-after']), /^\d+$/);
    assert.match(refused.body.error, /Too many deliveries are waiting/);
    // Not kept as received: the same delivery sent again is refused again, not answered as a repeat.
    const again = await deliver(path, JSON.stringify({ n: 101 }), { 'X-GitHub-Delivery': `full-101-${suffix}` });
    assert.equal(again.status, 429);
    assert.equal(numbers('busy').length, 1, 'still the one run');
    assert.equal((await h.api.delete(`/api/apps/${appId}`)).status, 200);
  });

  it('application/x-www-form-urlencoded with a JSON payload field is taken as that JSON; other bodies stay 400', async () => {
    const path = `form-${suffix}`;
    await h.install(spec('form', path), spaceId);
    const form = new URLSearchParams({ payload: JSON.stringify({ action: 'opened', n: 1 }) }).toString();
    const res = await deliver(path, form, { 'X-GitHub-Event': 'issues' }, 'application/x-www-form-urlencoded');
    assert.deepEqual([res.status, res.body], [200, { ok: true, received: true }]);
    await waitFor(() => h.runsOf('form').length === 1, 30_000, 'the run of the form delivery');
    const run = h.runsOf('form')[0]!;
    assert.deepEqual(run.data.body, { action: 'opened', n: 1 });
    assert.equal(run.data.contentType, 'application/x-www-form-urlencoded');
    const noPayload = new URLSearchParams({ other: '{}' }).toString();
    assert.equal((await deliver(path, noPayload, {}, 'application/x-www-form-urlencoded')).status, 400);
    const notJson = new URLSearchParams({ payload: 'not json' }).toString();
    assert.equal((await deliver(path, notJson, {}, 'application/x-www-form-urlencoded')).status, 400);
    assert.equal((await deliver(path, 'plain words', {}, 'text/plain')).status, 400);
  });

  it('a delivery still waiting when the server stops runs after it starts again', async () => {
    const path = `restart-${suffix}`;
    await h.install(spec('restart', path), spaceId);
    assert.equal((await deliver(path, JSON.stringify({ n: 1 }))).status, 200);
    await waitFor(() => numbers('restart').length === 1, 30_000, 'the first run');
    assert.equal((await deliver(path, JSON.stringify({ n: 2 }))).status, 200);
    await h.stopServer();
    assert.deepEqual(numbers('restart'), [1], 'the second waited');
    await h.startServer();
    await waitFor(() => numbers('restart').includes(2), 60_000, 'the waiting delivery runs after the restart');
    assert.deepEqual(numbers('restart'), [1, 2]);
  });
});
