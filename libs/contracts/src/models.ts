/** Wire shapes of model sources and the configuration object (docs/api.md, "Model sources and the configuration"). */

export type AiProvider = 'anthropic' | 'openai';
export const AI_PROVIDERS: readonly AiProvider[] = ['anthropic', 'openai'];

/** Defaults of a source seeded from SVC_AI_* when a variable is unset. */
export const DEFAULT_API_URL: Readonly<Record<AiProvider, string>> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
};
export const DEFAULT_MODEL: Readonly<Record<AiProvider, string>> = {
  anthropic: 'claude-sonnet-4-5',
  openai: 'gpt-4o',
};

/** Every secret in a response reads as this; sent back, it means "keep the stored value". */
export const MASKED_SECRET = '***';

export interface AvailableModel {
  id: string;
  name: string;
  description?: string;
  supportsVision?: boolean;
}

/** One account at one provider. `id` is the `modelSourceId` conversations pin. */
export interface AISource {
  id: string;
  name: string;
  provider: AiProvider;
  authType: 'api-key';
  apiUrl: string;
  /** Masked as "***" in every response; '' when the source has no key. */
  apiKey: string;
  /** The model this source uses when nothing else is pinned. */
  model: string;
  availableModels: AvailableModel[];
  /** ISO 8601. */
  createdAt: string;
  updatedAt: string;
}

export interface AISourcesConfig {
  version: 2;
  currentId: string | null;
  sources: AISource[];
}

/** `GET /api/config`: the sources plus every other stored top-level branch, secrets masked. */
export interface AppConfiguration {
  aiSources: AISourcesConfig;
  [branch: string]: unknown;
}

/** Answer of `switch-source` and `set-model`. */
export interface CurrentSelection {
  currentId: string | null;
  currentModel: string | null;
}

/** Answer of `POST /api/agent/test-model-source` (docs/api.md, "Testing a model source"). */
export type ModelSourceTestResult =
  { ok: true; modelId: string; latencyMs: number } | { ok: false; modelId: string; error: string };

/** Body of `POST /api/ai-sources/sources`; `PUT …/:sourceId` takes any subset. */
export interface AISourceInput {
  id?: string;
  name?: string;
  provider?: AiProvider;
  authType?: 'api-key';
  apiUrl?: string;
  /** Omitted (or "***") on update keeps the stored key; '' clears it. */
  apiKey?: string;
  model?: string;
  availableModels?: Array<{ id: string; name?: string; description?: string; supportsVision?: boolean }>;
}

/** Event: the model list of some sources changed (added, updated or removed). */
/** Between replicas only (never to sockets): `POST /api/config` changed these top-level branches. */
export const CONFIG_CHANGED_CHANNEL = 'internal:config-changed';
export interface ConfigChanged {
  branches: string[];
}

export const AI_SOURCES_CATALOG_CHANGED = 'ai-sources:catalog-changed';
export interface AiSourcesCatalogChanged {
  sourceIds: string[];
}

/** Exact failure text for an unknown source (docs/api.md, "Model sources and the configuration"). */
export const sourceNotFound = (id: string): string => `Source not found: ${id}`;
