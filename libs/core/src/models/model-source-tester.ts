import { ErrorCodes } from '#contracts/errors.js';
import { Injectable, Logger } from '@nestjs/common';
import { type AISource, type ModelSourceTestResult, sourceNotFound } from '#contracts/models.js';

export type { ModelSourceTestResult };
import { DomainError } from '../errors/domain-error.js';
import { Clock } from '../ports/clock.port.js';
import { ModelCallError, ModelProvider } from '../ports/model-provider.port.js';
import { mergeSource, newSource, validateModelId, validateSourceFields } from './model-source-rules.js';
import { ModelSourcesService } from './model-sources.service.js';
import { isPlainObject } from './secret-masking.js';

export const TesterTexts = {
  assistantAddress:
    'source.apiUrl: the assistant can test stored model sources only, at their stored addresses (give modelSourceId, leave source.apiUrl out).',
} as const;

/** How long one test call may take. */
export const MODEL_SOURCE_TEST_TIMEOUT_MS = 15_000;

/**
 * Tests a model source with one minimal real call (a one-token reply) through the same
 * provider client the assistant uses. The source is a stored one (`modelSourceId`), an
 * unsaved definition (`source`, the shape `POST /api/ai-sources/sources` takes), or a stored
 * one with unsaved edits (both; an omitted or "***" apiKey keeps the stored key).
 * Keys never reach the answer or the log.
 */
@Injectable()
export class ModelSourceTester {
  private readonly logger = new Logger('ModelSourceTest');

  constructor(
    private readonly sources: ModelSourcesService,
    private readonly provider: ModelProvider,
    private readonly clock: Clock,
  ) {}

  /**
   * `caller` `assistant` (a turn, through its own listener) tests stored sources only, at
   * their stored addresses: a test call's answer carries what the address replied, so an
   * address of the turn's choosing would let it read this host's and its network's services.
   */
  async test(body: unknown, caller: 'user' | 'assistant' = 'user'): Promise<ModelSourceTestResult> {
    if (!isPlainObject(body)) throw DomainError.invalid('body must be a JSON object');
    const modelId =
      body.modelId === undefined || body.modelId === null ? undefined : validateModelId(body.modelId, 'modelId');
    const source = await this.sourceOf(body);
    if (caller === 'assistant') {
      const stored = source.id === '' ? null : await this.sources.storedSource(source.id);
      if (!stored || stored.apiUrl !== source.apiUrl) throw DomainError.forbidden(TesterTexts.assistantAddress);
    }
    const model = modelId ?? source.model;
    const started = Date.now();
    try {
      const stream = this.provider.stream(
        { provider: source.provider, apiUrl: source.apiUrl, apiKey: source.apiKey },
        {
          model,
          system: 'Reply with one word.',
          messages: [{ role: 'user', content: [{ type: 'text', text: 'ping' }] }],
          tools: [],
          maxOutputTokens: 1,
          reasoningEffort: 'off',
          signal: AbortSignal.timeout(MODEL_SOURCE_TEST_TIMEOUT_MS),
        },
      );
      for await (const event of stream) if (event.type === 'end') break;
      return { ok: true, modelId: model, latencyMs: Date.now() - started };
    } catch (err) {
      const error = describe(err, source.apiKey);
      this.logger.log(
        `testing model source ${source.id || '(unsaved)'} (${source.provider}, model ${model}) failed: ${error}`,
      );
      return { ok: false, modelId: model, error };
    }
  }

  private async sourceOf(body: Record<string, unknown>): Promise<AISource> {
    const { modelSourceId, source } = body;
    let stored: AISource | null = null;
    if (modelSourceId !== undefined && modelSourceId !== null) {
      if (typeof modelSourceId !== 'string' || modelSourceId.trim() === '') {
        throw DomainError.invalid('modelSourceId must be a non-empty string');
      }
      stored = await this.sources.storedSource(modelSourceId.trim());
      if (!stored) throw DomainError.notFound(sourceNotFound(modelSourceId.trim()), ErrorCodes.MODEL_SOURCE_NOT_FOUND);
    }
    if (source === undefined || source === null) {
      if (!stored) throw DomainError.invalid('modelSourceId or source is required');
      return stored;
    }
    if (stored)
      return mergeSource(stored, validateSourceFields(source, 'update', 'source'), this.clock.now(), 'source');
    if (!isPlainObject(source)) throw DomainError.invalid('source must be a JSON object');
    // An unsaved source needs no name to be tested (the form may not have one yet).
    const fields = validateSourceFields({ ...source, name: 'unsaved' }, 'create', 'source');
    return newSource(fields, fields.id ?? '', this.clock.now());
  }
}

/** The provider's message, with the key (should a provider echo it) cut out. */
function describe(err: unknown, apiKey: string): string {
  let message =
    err instanceof ModelCallError && err.kind === 'aborted'
      ? `No answer within ${MODEL_SOURCE_TEST_TIMEOUT_MS / 1000} s`
      : err instanceof Error
        ? err.message
        : String(err);
  if (apiKey.length >= 4) message = message.split(apiKey).join('***');
  return message.slice(0, 2000);
}
