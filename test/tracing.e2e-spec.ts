import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { apiClient, newConversation } from '#testing/api-client.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

/** A span as the OTLP/HTTP JSON encoding carries it (ids in hex), attributes flattened. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status: { code?: number };
  attributes: Record<string, string | number | boolean>;
  events: string[];
  service: string;
}

type OtlpValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };

const valueOf = (v: OtlpValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));
const flatten = (attributes: OtlpAttribute[] = []) =>
  Object.fromEntries(attributes.map((a) => [a.key, valueOf(a.value)]));

/** A minimal OTLP/HTTP collector: decodes the JSON trace exports it is sent, keeps the spans. */
class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly paths: string[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver.paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        try {
          receiver.collect(JSON.parse(body.toString('utf8')));
          res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
        } catch (err) {
          res.writeHead(400).end(String(err));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private collect(payload: {
    resourceSpans?: Array<{
      resource?: { attributes?: OtlpAttribute[] };
      scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
    }>;
  }): void {
    for (const rs of payload.resourceSpans ?? []) {
      const service = String(flatten(rs.resource?.attributes)['service.name'] ?? '');
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            traceId: String(s.traceId),
            spanId: String(s.spanId),
            parentSpanId: String(s.parentSpanId ?? ''),
            name: String(s.name),
            kind: Number(s.kind),
            status: (s.status ?? {}) as { code?: number },
            attributes: flatten(s.attributes as OtlpAttribute[]),
            events: ((s.events ?? []) as Array<{ name: string; attributes?: OtlpAttribute[] }>).map(
              (e) => `${e.name} ${String(flatten(e.attributes)['svc.event.channel'] ?? '')}`,
            ),
            service,
          });
        }
      }
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('tracing (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let model: ScriptedModelServer;
  let receiver: OtlpReceiver;
  let server: TestServer;

  before(async () => {
    model = await ScriptedModelServer.start();
    receiver = await OtlpReceiver.start();
    server = await startServer({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_SERVICE_NAME: 'svc-under-test',
        SVC_AI_PROVIDER: 'openai',
        SVC_AI_API_URL: model.url,
        SVC_AI_API_KEY: 'sk-tracing-test',
        SVC_AI_MODEL: 'gpt-4o',
      },
    });
  });
  after(async () => {
    await server?.stop();
    await receiver?.close();
    await model?.close();
  });

  it('one message makes connected spans: HTTP request → agent-turn job → model call, with the request id', async () => {
    const { spaceId, conversationId } = await newConversation(server, 'traced');
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    ws.send({ type: 'subscribe', payload: { conversationId } });
    await ws.roundTrip();

    model.enqueue({ steps: [{ text: 'Traced reply' }, { usage: { input: 120, output: 7 } }] });
    // The caller's own trace is continued (W3C traceparent).
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const sent = await apiClient(server)
      .post('/api/agent/message')
      .set('X-Request-Id', 'trace-req-1')
      .set('traceparent', `00-${callerTrace}-${callerSpan}-01`)
      .send({ spaceId, conversationId, message: 'hello' });
    assert.equal(sent.status, 200);
    await ws.event('agent:complete', 30_000);
    ws.close();

    const find = (predicate: (s: ReceivedSpan) => boolean) => receiver.spans.find(predicate);
    const http = () => find((s) => s.attributes['svc.request_id'] === 'trace-req-1' && s.kind === 2);
    const job = () => find((s) => s.name === 'job agent.turn' && s.attributes['svc.request_id'] === 'trace-req-1');
    const call = () => find((s) => s.name.startsWith('model.call') && s.parentSpanId === job()?.spanId);
    await waitFor(
      () => Boolean(http() && job() && call()),
      30_000,
      `the three spans (got ${receiver.paths.length} exports)`,
    );

    const [h, j, m] = [http()!, job()!, call()!];
    assert.equal(h.name, 'POST /api/agent/message');
    assert.equal(h.traceId, callerTrace, 'the HTTP span continues the caller trace');
    assert.equal(h.parentSpanId, callerSpan);
    assert.equal(h.attributes['http.route'], '/api/agent/message');
    assert.equal(h.attributes['http.response.status_code'], 200);
    assert.equal(h.service, 'svc-under-test');

    assert.equal(j.traceId, callerTrace, 'the job is in the same trace');
    assert.equal(j.parentSpanId, h.spanId, "the job's parent is the request that queued it");
    assert.equal(typeof j.attributes['svc.turn_id'], 'string');
    assert.equal(j.kind, 5, 'consumer');
    assert.ok(
      j.events.some((e) => e === 'event.published agent:complete'),
      `events published during the turn: ${j.events.join(', ')}`,
    );

    assert.equal(m.traceId, callerTrace);
    assert.equal(m.attributes['gen_ai.system'], 'openai');
    assert.equal(m.attributes['gen_ai.request.model'], 'gpt-4o');
    assert.equal(m.attributes['gen_ai.usage.input_tokens'], 120);
    assert.equal(m.attributes['gen_ai.usage.output_tokens'], 7);
    assert.equal(m.attributes['svc.model.status'], 'ok');
    assert.equal(m.attributes['svc.request_id'], 'trace-req-1');
    assert.equal(m.attributes['svc.turn_id'], j.attributes['svc.turn_id']);
    assert.match(receiver.paths[0]!, /^POST \/v1\/traces application\/json/);
  });

  it('a failed model call ends its span as an error with the provider status', async () => {
    const { spaceId, conversationId } = await newConversation(server, 'traced-fail');
    model.enqueue({ status: 400, error: 'bad request' });
    await apiClient(server)
      .post('/api/agent/message')
      .set('X-Request-Id', 'trace-req-2')
      .send({ spaceId, conversationId, message: 'fail please' })
      .expect(200);
    const failed = () =>
      receiver.spans.find((s) => s.name.startsWith('model.call') && s.attributes['svc.request_id'] === 'trace-req-2');
    await waitFor(() => Boolean(failed()), 30_000, 'the failed model call span');
    assert.equal(failed()!.attributes['svc.model.status'], 'error');
    assert.equal(failed()!.attributes['http.response.status_code'], 400);
    assert.equal(failed()!.status.code, 2, 'status ERROR');
  });
});

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('starts without the variable and sends nothing anywhere', async () => {
    const receiver = await OtlpReceiver.start();
    const server = await startServer({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: undefined } });
    try {
      const res = await apiClient(server).get('/api/spaces');
      assert.equal(res.status, 200);
      assert.doesNotMatch(server.output(), /tracing on/);
      assert.equal(receiver.paths.length, 0);
    } finally {
      await server.stop();
      await receiver.close();
    }
  });

  it('refuses a malformed endpoint at start, naming the variable', async () => {
    await assert.rejects(
      startServer({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' } }),
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
  });
});
