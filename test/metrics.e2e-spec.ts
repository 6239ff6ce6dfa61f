import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { createSharedServices, type SharedServices, startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

/** The metric families an operator relies on (docs/operations.md, "Metrics"). */
const FAMILIES = [
  'svc_info',
  'svc_http_request_duration_seconds',
  'svc_ws_clients',
  'svc_ws_frames_sent_total',
  'svc_event_publish_duration_seconds',
  'svc_queue_jobs',
  'svc_jobs_failed_total',
  'svc_jobs_stalled_total',
  'svc_model_call_duration_seconds',
  'svc_model_call_errors_total',
  'svc_model_call_retries_total',
  'svc_model_tokens_total',
  'svc_agent_turn_duration_seconds',
  'svc_agent_cost_usd_total',
  'svc_auth_sign_in_failures_total',
  'svc_auth_lockouts_total',
  'svc_file_watch_lag_seconds',
  'svc_event_replay_gaps_total',
  'svc_process_resident_memory_bytes',
  'svc_agent_turns_total',
  'svc_app_runs_started_total',
  'svc_app_runs_finished_total',
  'svc_webhook_deliveries_total',
  'svc_schedule_ticks_total',
  'svc_mcp_servers',
];

/** The value of the first sample whose line starts with `prefix` (name plus some labels). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return null;
}

describe('metrics', () => {
  let model: ScriptedModelServer;
  let services: SharedServices | undefined;
  let server: TestServer;
  const api = () => apiClient(server);

  before(async () => {
    model = await ScriptedModelServer.start();
    services = testMode() === 'services' ? await createSharedServices() : undefined;
    server = await startServer({
      services,
      env: {
        SVC_AI_PROVIDER: 'openai',
        SVC_AI_API_URL: model.url,
        SVC_AI_API_KEY: 'sk-metrics-test',
        SVC_AI_MODEL: 'gpt-4o',
        SVC_AGENT_RETRY_BASE_MS: '10',
        SVC_AGENT_MAX_RETRIES: '1',
      },
    });
  });
  after(async () => {
    await server?.stop();
    await services?.dispose();
    await model?.close();
  });

  it('requires the access password unless SVC_METRICS_PUBLIC=1', async () => {
    const none = await request(server.url).get('/metrics');
    assert.deepEqual([none.status, none.body], [401, { success: false, error: 'No authorization token' }]);
    const wrong = await request(server.url).get('/metrics').set('Authorization', 'Bearer wrong-one');
    assert.equal(wrong.status, 401);
    const ok = await api().get('/metrics');
    assert.equal(ok.status, 200);
    assert.match(String(ok.headers['content-type']), /^text\/plain/);
  });

  it('counts requests, sockets, events, model calls, turns, tokens, sign-in failures and file changes', async () => {
    const space = await api().post('/api/spaces', { name: 'metered' });
    assert.equal(space.status, 200);
    const spaceId = space.body.data.id as string;
    const conv = await api().post(`/api/spaces/${spaceId}/conversations`, { title: 'm' });
    const conversationId = conv.body.data.id as string;
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    ws.send({ type: 'subscribe', payload: { conversationId } });
    await ws.roundTrip();

    // One turn that succeeds with usage, one whose model call fails twice (retried once).
    model.enqueue({ steps: [{ text: 'Hi there' }, { usage: { input: 1000, output: 20 } }] });
    await api().post('/api/agent/message', { spaceId, conversationId, message: 'hello' }).expect(200);
    await ws.event('agent:complete', 15_000);
    model.enqueue({ status: 503 }, { status: 503 });
    await api().post('/api/agent/message', { spaceId, conversationId, message: 'again' }).expect(200);
    await ws.event('agent:error', 15_000);
    await ws.event('agent:complete', 15_000);

    await request(server.url).post('/api/remote/login').send({ token: 'not-the-password' }).expect(401);
    writeFileSync(join(space.body.data.path as string, 'note.txt'), 'hello');
    await ws.event('artifact:changed-batch', 15_000);

    const text = (await api().get('/metrics')).text;
    const missing = FAMILIES.filter((family) => !new RegExp(`^# TYPE ${family} `, 'm').test(text));
    assert.deepEqual(missing, [], 'metric families');

    assert.ok(
      (sample(text, 'svc_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/api/spaces/:spaceId/conversations',
        status: '200',
      }) ?? 0) >= 1,
      'route templates, not raw paths',
    );
    assert.ok(!text.includes(spaceId), 'no ids in label values');
    assert.equal(sample(text, 'svc_ws_clients'), 1);
    assert.ok((sample(text, 'svc_ws_frames_sent_total') ?? 0) > 3);
    assert.ok((sample(text, 'svc_event_publish_duration_seconds_count') ?? 0) > 3);
    assert.equal(sample(text, 'svc_model_call_duration_seconds_count', { provider: 'openai', outcome: 'ok' }), 1);
    assert.equal(sample(text, 'svc_model_call_errors_total', { provider: 'openai', status: '503' }), 2);
    assert.equal(sample(text, 'svc_model_call_retries_total', { provider: 'openai', kind: 'server_error' }), 1);
    assert.equal(sample(text, 'svc_model_tokens_total', { provider: 'openai', kind: 'input' }), 1000);
    assert.equal(sample(text, 'svc_model_tokens_total', { provider: 'openai', kind: 'output' }), 20);
    assert.equal(sample(text, 'svc_agent_turn_duration_seconds_count', { outcome: 'completed' }), 1);
    assert.equal(sample(text, 'svc_agent_turn_duration_seconds_count', { outcome: 'failed' }), 1);
    assert.ok((sample(text, 'svc_agent_cost_usd_total') ?? 0) > 0, 'gpt-4o has a known price');
    assert.equal(sample(text, 'svc_auth_sign_in_failures_total', { reason: 'invalid' }), 1);
    assert.ok((sample(text, 'svc_file_watch_lag_seconds_count') ?? 0) >= 1);
    assert.ok(sample(text, 'svc_queue_jobs', { state: 'completed' }) !== null, 'queue counts read at scrape');
    assert.equal(sample(text, 'svc_agent_turns_total', { kind: 'chat', outcome: 'completed' }), 1);
    assert.equal(sample(text, 'svc_agent_turns_total', { kind: 'chat', outcome: 'failed' }), 1);
    for (const result of ['received', 'duplicate', 'queued', 'refused']) {
      assert.equal(sample(text, 'svc_webhook_deliveries_total', { result }), 0, `webhook ${result} series`);
    }
    assert.equal(sample(text, 'svc_schedule_ticks_total', { outcome: 'fired' }), 0);
    assert.equal(sample(text, 'svc_mcp_servers', { status: 'connected' }), 0);
    // Gauges do not end in _total (Prometheus keeps the suffix for counters; promtool checks it).
    const gaugesTotal = [...text.matchAll(/^# TYPE (\S+) gauge$/gm)]
      .map((m) => m[1]!)
      .filter((n) => n.endsWith('_total'));
    assert.deepEqual(gaugesTotal, [], 'gauges named like counters');
    assert.match(text, /^# TYPE svc_nodejs_active_handles gauge$/m, 'the per-type gauges stay');

    // Logs: the retried 503 is logged once as a retry, the failed turn at warn (docs/operations.md, "Logs").
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    assert.equal(lines.filter((l) => l.msg === 'model call failed; retrying').length, 1, 'one line per retry');
    assert.equal(lines.filter((l) => l.msg === 'model call failed').length, 0, 'not logged again by the provider');
    assert.deepEqual(
      lines.filter((l) => l.msg === 'turn failed').map((l) => l.level),
      ['warn'],
    );
    ws.close();
  });

  it('counts webhook deliveries (received, duplicate) and runs by trigger type and outcome', async () => {
    const spec = {
      spec_version: '1',
      name: 'Metered Hook',
      version: '1.0.0',
      author: 'tests',
      description: 'Counts.',
      type: 'automation',
      system_prompt: 'Do the work.',
      subscriptions: [{ id: 'hook', source: { type: 'webhook', config: { path: 'metered-hook' } } }],
    };
    const installed = await api().post('/api/apps/install', { spec });
    assert.equal(installed.status, 200, JSON.stringify(installed.body));
    for (let i = 0; i < 2; i++) {
      await request(server.url)
        .post('/hooks/metered-hook')
        .set('X-Webhook-Id', 'metered-delivery-1')
        .send({ event: 'ping' })
        .expect(200);
    }
    const scrape = async () => (await api().get('/metrics')).text;
    // The run gets the scripted default reply (no report): reminded, then failed.
    await waitFor(
      async () => (sample(await scrape(), 'svc_app_runs_finished_total', { trigger: 'webhook' }) ?? 0) >= 1,
      30_000,
      'the run to end',
    );
    const text = await scrape();
    assert.equal(sample(text, 'svc_webhook_deliveries_total', { result: 'received' }), 1);
    assert.equal(sample(text, 'svc_webhook_deliveries_total', { result: 'duplicate' }), 1);
    assert.equal(sample(text, 'svc_app_runs_started_total', { trigger: 'webhook' }), 1);
    assert.equal(sample(text, 'svc_app_runs_finished_total', { trigger: 'webhook', outcome: 'failed' }), 1);
    assert.ok((sample(text, 'svc_agent_turns_total', { kind: 'app-run' }) ?? 0) >= 1, 'run turns by kind');
  });

  it('labels lockouts by the lock met: the address (ip) or everyone (global)', async () => {
    // Addresses come from X-Forwarded-For here; a fresh server (and store) so earlier failures do not count.
    const other = await startServer({ env: { SVC_TRUST_PROXY: '1' } });
    try {
      const login = (ip: string) =>
        request(other.url).post('/api/remote/login').set('X-Forwarded-For', ip).send({ token: 'wrong' });
      const lockouts = async () => {
        const text = (await apiClient(other).get('/metrics')).text;
        return {
          ip: sample(text, 'svc_auth_lockouts_total', { scope: 'ip' }),
          global: sample(text, 'svc_auth_lockouts_total', { scope: 'global' }),
        };
      };
      assert.deepEqual(await lockouts(), { ip: 0, global: 0 }, 'both series exist before any lockout');
      for (let i = 0; i < 5; i++) assert.equal((await login('198.51.100.1')).status, 401);
      assert.equal((await login('198.51.100.1')).status, 429, 'the address is locked after five failures');
      assert.equal((await login('198.51.100.1')).status, 429);
      assert.deepEqual(await lockouts(), { ip: 1, global: 0 }, 'met once per address and lock');
      // Five more failures from other addresses make ten within the hour: sign-in locks for everyone.
      for (let i = 2; i <= 6; i++) assert.equal((await login(`198.51.100.${i}`)).status, 401);
      assert.equal((await login('203.0.113.9')).status, 429, 'a fresh address meets the global lock');
      assert.deepEqual(await lockouts(), { ip: 1, global: 1 });
    } finally {
      await other.stop();
    }
  });

  it('answers on the worker role too, without a token when SVC_METRICS_PUBLIC=1', async () => {
    // Split roles need Redis; in embedded mode a second standalone server shows the setting.
    const other = await startServer(
      services
        ? { services, env: { SVC_ROLE: 'worker', SVC_METRICS_PUBLIC: '1' } }
        : { env: { SVC_METRICS_PUBLIC: '1' } },
    );
    try {
      const res = await request(other.url).get('/metrics');
      assert.equal(res.status, 200);
      assert.match(res.text, /^svc_info\{.*role="(worker|all)".*\} 1$/m);
      assert.match(res.text, /^# TYPE svc_queue_jobs gauge$/m);
    } finally {
      await other.stop();
    }
  });
});
