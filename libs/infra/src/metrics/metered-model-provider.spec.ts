import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { ModelCallError, type ModelEndpoint, type ModelRequest } from '#core/ports/model-provider.port.js';
import { failedResponse, FakeModelProvider, textResponse } from '#testing/fake-model-provider.js';
import { RecordingMetrics } from '#testing/fakes.js';
import { runWithLogContext } from '../logging/log-context.js';
import { AppLogger, createPino } from '../logging/logger.js';
import { MeteredModelProvider } from './metered-model-provider.js';

const endpoint: ModelEndpoint = {
  provider: 'openai',
  apiUrl: 'http://model.test/v1',
  apiKey: 'sk-unit',
} as ModelEndpoint;
const quiet = new AppLogger(createPino('error', new Writable({ write: (_c, _e, done) => done() })));
const request = (): ModelRequest =>
  ({ model: 'gpt-4o', signal: new AbortController().signal }) as unknown as ModelRequest;

async function drain(provider: MeteredModelProvider): Promise<void> {
  try {
    for await (const event of provider.stream(endpoint, request())) void event;
  } catch {
    /* counted by the wrapper */
  }
}

describe('MeteredModelProvider', () => {
  it('counts a retry, with its provider, when a turn calls again after a retryable failure', async () => {
    const inner = new FakeModelProvider().respond(
      failedResponse(new ModelCallError('busy', 'server_error', 503, true)),
      textResponse('ok'),
      failedResponse(new ModelCallError('bad key', 'authentication_failed', 401, false)),
      textResponse('again'),
    );
    const metrics = new RecordingMetrics();
    const provider = new MeteredModelProvider(inner, metrics, quiet);
    await runWithLogContext({ turnId: 't1' }, async () => {
      await drain(provider); // fails, retryable
      await drain(provider); // the retry
      await drain(provider); // fails, not retryable: the loop gives up
    });
    await runWithLogContext({ turnId: 't2' }, () => drain(provider)); // another turn: no retry
    assert.deepEqual(metrics.of('modelRetry'), [['openai', 'server_error']]);
    assert.equal(metrics.of('modelCall').length, 4);
  });

  it('keeps turns apart: a failure in one is not a retry in another', async () => {
    const inner = new FakeModelProvider().respond(
      failedResponse(new ModelCallError('slow down', 'rate_limit', 429, true)),
      textResponse('other turn'),
    );
    const metrics = new RecordingMetrics();
    const provider = new MeteredModelProvider(inner, metrics, quiet);
    await runWithLogContext({ turnId: 'a' }, () => drain(provider));
    await runWithLogContext({ turnId: 'b' }, () => drain(provider));
    assert.deepEqual(metrics.of('modelRetry'), []);
  });
});
