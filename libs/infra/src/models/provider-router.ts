import {
  ModelCallError,
  type ModelEndpoint,
  type ModelInfo,
  ModelProvider,
  type ModelProviderKind,
  type ModelRequest,
  type ModelStreamEvent,
} from '#core/ports/model-provider.port.js';
import { AnthropicAdapter } from './anthropic.adapter.js';
import { modelInfo } from './model-catalog.js';
import { OpenAICompatibleAdapter } from './openai-compatible.adapter.js';

/**
 * The ModelProvider the server binds: sends each call to the adapter of the endpoint's
 * provider (`anthropic` → Messages API, `openai` → any Chat Completions endpoint).
 * Bind with `{ provide: ModelProvider, useFactory: () => new ProviderRouter() }` (or
 * `useValue`); the constructor takes adapters so tests can pass configured ones.
 */
export class ProviderRouter extends ModelProvider {
  constructor(
    private readonly anthropic: ModelProvider = new AnthropicAdapter(),
    private readonly openai: ModelProvider = new OpenAICompatibleAdapter(),
  ) {
    super();
  }

  stream(endpoint: ModelEndpoint, request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const adapter = this.adapter(endpoint.provider);
    if (adapter) return adapter.stream(endpoint, request);
    const error = new ModelCallError(
      `Unknown model provider "${String(endpoint.provider)}" (expected anthropic or openai)`,
      'invalid_request',
      null,
      false,
    );
    return {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
    };
  }

  info(provider: ModelProviderKind, model: string): ModelInfo {
    return this.adapter(provider)?.info(provider, model) ?? modelInfo(model);
  }

  private adapter(provider: ModelProviderKind): ModelProvider | undefined {
    if (provider === 'anthropic') return this.anthropic;
    if (provider === 'openai') return this.openai;
    return undefined;
  }
}
