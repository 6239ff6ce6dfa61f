import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { App } from '../kernel/app.js';
import { AssistantApi, type AssistantApiCall } from '../ports/assistant-api.port.js';
import { appMayUseServiceApi, assistantMayUseServiceApi, serviceApiTools } from './service-api-tool.js';

class FakeApi extends AssistantApi {
  calls: AssistantApiCall[] = [];
  constructor(private readonly up: boolean) {
    super();
  }
  available = () => this.up;
  operations = async () => ['GET /api/spaces'];
  call = async (call: AssistantApiCall) => {
    this.calls.push(call);
    return { status: call.method === 'GET' ? 200 : 403, body: { success: call.method === 'GET' } };
  };
}

const ctx = { signal: new AbortController().signal, toolUseId: 't', space: {} } as never;
const app = (permissions: string[], granted: string[] = [], denied: string[] = []) =>
  ({ spec: { permissions }, permissions: { granted, denied } }) as unknown as App;

describe('the ServiceApi tool', () => {
  it('is on for the assistant by its preference, for a digital human by svc-api-ref (asked or granted, not denied)', () => {
    assert.equal(assistantMayUseServiceApi({ assistant: { serviceApi: true } }), true);
    assert.equal(assistantMayUseServiceApi({ assistant: { serviceApi: 'yes' } }), false);
    assert.equal(assistantMayUseServiceApi({}), false);
    assert.equal(appMayUseServiceApi(app([])), false);
    assert.equal(appMayUseServiceApi(app(['svc-api-ref'])), true);
    assert.equal(appMayUseServiceApi(app([], ['svc-api-ref'])), true);
    assert.equal(appMayUseServiceApi(app(['svc-api-ref'], [], ['svc-api-ref'])), false);
  });

  it('is offered only where the API is served; passes the call on and marks refusals as errors', async () => {
    assert.deepEqual(await serviceApiTools(new FakeApi(false)), []);
    const api = new FakeApi(true);
    const [tool] = await serviceApiTools(api);
    assert.match(tool!.description, /- GET \/api\/spaces/);
    const ok = await tool!.run({ method: 'get', path: '/api/spaces', query: { a: 1 } }, ctx);
    assert.deepEqual(ok, { output: 'HTTP 200\n{"success":true}', isError: false });
    assert.deepEqual(api.calls[0], { method: 'GET', path: '/api/spaces', query: { a: '1' } });
    assert.equal((await tool!.run({ method: 'DELETE', path: '/api/spaces/x' }, ctx)).isError, true);
    await assert.rejects(tool!.run({ method: 'GET', path: '/etc/passwd' }, ctx), /path must start with \/api\//);
    await assert.rejects(tool!.run({ method: 'TRACE', path: '/api/x' }, ctx), /method must be one of/);
  });
});
