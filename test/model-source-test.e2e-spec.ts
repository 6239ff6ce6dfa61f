import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient } from '#testing/api-client.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';

// POST /api/agent/test-model-source (docs/api.md, "Testing a model source"): one minimal real call to a
// stored or unsaved model source, against the scripted model server (which wants its key).

const GOOD_KEY = 'sk-scripted';
const WRONG_KEY = 'sk-e2e-wrong-key-4711';

describe(`testing a model source (${testMode()})`, () => {
  let model: ScriptedModelServer;
  let server: TestServer;
  let sourceId: string;
  const post = (body: unknown) => apiClient(server).post('/api/agent/test-model-source', body);

  before(async () => {
    model = await ScriptedModelServer.start({ apiKey: GOOD_KEY });
    server = await startServer({ env: model.serverEnv() });
    const config = await apiClient(server).get('/api/config');
    sourceId = config.body.data.aiSources.currentId as string;
    assert.ok(sourceId, 'the SVC_AI_* source is stored');
  });
  after(async () => {
    await server?.stop();
    await model?.close();
  });

  it('answers ok with the model and latency for a stored source with a good key', async () => {
    const before = model.requests.length;
    const res = await post({ modelSourceId: sourceId });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    assert.equal(res.body.data.ok, true, JSON.stringify(res.body));
    assert.equal(res.body.data.modelId, 'scripted-model');
    assert.equal(typeof res.body.data.latencyMs, 'number');
    assert.equal(model.requests.length, before + 1, 'exactly one real call');
    const other = await post({ modelSourceId: sourceId, modelId: 'another-model' });
    assert.equal(other.body.data.ok, true);
    assert.equal(other.body.data.modelId, 'another-model');
  });

  it('answers ok:false with the provider message for a wrong key, saved or unsaved, never echoing the key', async () => {
    const unsaved = await post({
      source: { provider: 'openai', apiUrl: `${model.url}/v1`, apiKey: WRONG_KEY, model: 'scripted-model' },
    });
    assert.equal(unsaved.status, 200, JSON.stringify(unsaved.body));
    assert.equal(unsaved.body.success, true);
    assert.equal(unsaved.body.data.ok, false);
    assert.match(unsaved.body.data.error, /401|invalid x-api-key|auth/i);
    const edited = await post({ modelSourceId: sourceId, source: { apiKey: WRONG_KEY } });
    assert.equal(edited.body.data.ok, false, JSON.stringify(edited.body));
    assert.match(edited.body.data.error, /401|invalid x-api-key|auth/i);
    // "***" keeps the stored (good) key.
    const masked = await post({ modelSourceId: sourceId, source: { apiKey: '***' } });
    assert.equal(masked.body.data.ok, true, JSON.stringify(masked.body));
    for (const body of [unsaved.body, edited.body, masked.body]) {
      assert.ok(!JSON.stringify(body).includes(WRONG_KEY), 'the given key never shows');
      assert.ok(!JSON.stringify(body).includes(GOOD_KEY), 'the stored key never shows');
    }
    assert.ok(!server.output().includes(WRONG_KEY), 'the key is never logged');
  });

  it('answers 404 for an unknown source and 400 naming the field for a bad body', async () => {
    const missing = await post({ modelSourceId: 'no-such-source' });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { success: false, error: 'Source not found: no-such-source' });
    const cases: Array<[unknown, RegExp]> = [
      [{}, /modelSourceId or source is required/],
      [{ modelSourceId: 42 }, /modelSourceId/],
      [{ modelSourceId: sourceId, modelId: 7 }, /modelId/],
      [{ source: { provider: 'nope', apiUrl: model.url, model: 'm' } }, /source\.provider/],
      [{ source: { provider: 'openai', model: 'm' } }, /source\.apiUrl/],
      [{ source: 'text' }, /source/],
    ];
    for (const [body, error] of cases) {
      const res = await post(body);
      assert.equal(res.status, 400, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`);
      assert.equal(res.body.success, false);
      assert.match(res.body.error, error);
    }
  });
});
