import { ArrayBodyAsEmpty, Check, Documented, OpenBody, type Schema } from '../common/validation.js';

/** Request bodies of "Model sources and the configuration" (docs/api.md). */

const nonBlank = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';

@ArrayBodyAsEmpty()
export class SwitchSourceDto {
  @Check(nonBlank, 'sourceId is required (a string)', { type: 'string' })
  sourceId: string;
}

@ArrayBodyAsEmpty()
export class SetModelDto {
  @Check(nonBlank, 'modelId is required (a string)', { type: 'string' })
  modelId: string;
}

const aiSourceFields: Record<'name' | 'provider' | 'apiUrl' | 'apiKey' | 'model' | 'availableModels', Schema> = {
  name: { type: 'string' },
  provider: { type: 'string', enum: ['anthropic', 'openai'] },
  apiUrl: {
    type: 'string',
    description: 'Provider base URL (e.g. https://api.anthropic.com or an OpenAI-compatible /v1 URL)',
  },
  apiKey: { type: 'string', description: 'Omit on update to keep the stored key' },
  model: { type: 'string' },
  availableModels: {
    type: 'array',
    items: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } }, required: ['id'] },
  },
};

/**
 * A model source to add: the service judges every field (its texts: docs/api.md, "Model
 * sources and the configuration"), and keeps provider-specific extras.
 */
@OpenBody({ description: 'A model source' })
export class AddAiSourceDto {
  [extra: string]: unknown;

  @Documented(aiSourceFields.name, { required: true })
  name?: unknown;

  @Documented(aiSourceFields.provider, { required: true })
  provider?: unknown;

  @Documented(aiSourceFields.apiUrl, { required: true })
  apiUrl?: unknown;

  @Documented(aiSourceFields.apiKey)
  apiKey?: unknown;

  @Documented(aiSourceFields.model, { required: true })
  model?: unknown;

  @Documented(aiSourceFields.availableModels)
  availableModels?: unknown;
}

/** The fields of a model source to change (`id` cannot change; an omitted or `***` apiKey keeps the stored one). */
@OpenBody({ description: 'The fields of a model source to change' })
export class UpdateAiSourceDto {
  [extra: string]: unknown;

  @Documented(aiSourceFields.name)
  name?: unknown;

  @Documented(aiSourceFields.provider)
  provider?: unknown;

  @Documented(aiSourceFields.apiUrl)
  apiUrl?: unknown;

  @Documented(aiSourceFields.apiKey)
  apiKey?: unknown;

  @Documented(aiSourceFields.model)
  model?: unknown;

  @Documented(aiSourceFields.availableModels)
  availableModels?: unknown;
}

/**
 * A partial configuration, merged into the stored one by top-level branch (`null` removes a
 * branch); the service judges the branches (a forbidden key, a bad `aiSources`, `remoteAccess.password`).
 */
@OpenBody({ description: 'A partial configuration, merged into the stored one by top-level branch' })
export class ConfigPatchDto {
  [branch: string]: unknown;

  @Documented({
    type: 'object',
    additionalProperties: true,
    description: 'The model sources: `sources` (replaces the list when given) and `currentId`',
  })
  aiSources?: unknown;
}
