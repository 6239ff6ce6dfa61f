import { createHash } from 'node:crypto';
import {
  AI_PROVIDERS,
  type AiProvider,
  type AISource,
  type AISourcesConfig,
  type AvailableModel,
  DEFAULT_API_URL,
  DEFAULT_MODEL,
  MASKED_SECRET,
} from '#contracts/models.js';
import type { ModelSourceSeed } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { isPlainObject } from './secret-masking.js';

/** Pure rules of model sources: validation, merge, seeding, selection. No I/O here. */

export const NAME_MAX = 200;
export const MODEL_ID_MAX = 256;
export const API_URL_MAX = 2048;
export const API_KEY_MAX = 8192;
export const SOURCE_ID_MAX = 128;
export const SOURCES_MAX = 200;
export const AVAILABLE_MODELS_MAX = 2000;
const SOURCE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** The stored document: the wire shape plus a revision for optimistic concurrency. */
export interface AiSourcesDocument extends AISourcesConfig {
  revision: number;
}

export const EMPTY_SOURCES: Readonly<AiSourcesDocument> = { version: 2, currentId: null, sources: [], revision: 0 };

/** A validated set of source fields; absent ones were not given. */
export interface SourceFields {
  id?: string;
  name?: string;
  provider?: AiProvider;
  apiUrl?: string;
  /** undefined: not given or "***" (keep the stored key). */
  apiKey?: string;
  model?: string;
  availableModels?: AvailableModel[];
}

/** Which source fields must be present. */
export type SourceMode = 'create' | 'update';

const at = (prefix: string, field: string): string => (prefix ? `${prefix}.${field}` : field);

function text(raw: unknown, field: string, max: number): string {
  if (typeof raw !== 'string') throw DomainError.invalid(`${field} must be a string`);
  const value = raw.trim();
  if (value === '') throw DomainError.invalid(`${field} must not be empty`);
  if (value.length > max) throw DomainError.invalid(`${field} must be at most ${max} characters`);
  return value;
}

export function validateSourceId(raw: unknown, field = 'id'): string {
  if (typeof raw !== 'string' || raw.length > SOURCE_ID_MAX || !SOURCE_ID.test(raw)) {
    throw DomainError.invalid(`${field} must be a UUID (letters, digits and . _ : - only, at most ${SOURCE_ID_MAX})`);
  }
  return raw;
}

export function validateApiUrl(raw: unknown, field = 'apiUrl'): string {
  const value = text(raw, field, API_URL_MAX);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw DomainError.invalid(`${field} must be an http:// or https:// URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw DomainError.invalid(`${field} must be an http:// or https:// URL`);
  }
  return value;
}

export function validateModelId(raw: unknown, field = 'model'): string {
  return text(raw, field, MODEL_ID_MAX);
}

function validateAvailableModels(raw: unknown, field: string): AvailableModel[] {
  if (!Array.isArray(raw)) throw DomainError.invalid(`${field} must be an array of {id, name}`);
  if (raw.length > AVAILABLE_MODELS_MAX) {
    throw DomainError.invalid(`${field} must hold at most ${AVAILABLE_MODELS_MAX} models`);
  }
  const seen = new Set<string>();
  const models: AvailableModel[] = [];
  raw.forEach((item, i) => {
    const f = `${field}[${i}]`;
    // A bare string is accepted as a model id.
    const entry = typeof item === 'string' ? { id: item } : item;
    if (!isPlainObject(entry)) throw DomainError.invalid(`${f} must be an object {id, name}`);
    const id = validateModelId(entry.id, `${f}.id`);
    const name = entry.name === undefined || entry.name === null ? id : text(entry.name, `${f}.name`, NAME_MAX);
    const model: AvailableModel = { id, name };
    if (entry.description !== undefined && entry.description !== null) {
      if (typeof entry.description !== 'string') throw DomainError.invalid(`${f}.description must be a string`);
      model.description = entry.description.slice(0, 2000);
    }
    if (entry.supportsVision !== undefined && entry.supportsVision !== null) {
      if (typeof entry.supportsVision !== 'boolean') throw DomainError.invalid(`${f}.supportsVision must be a boolean`);
      model.supportsVision = entry.supportsVision;
    }
    if (!seen.has(id)) models.push(model);
    seen.add(id);
  });
  return models;
}

/**
 * Validates a source body. `create` needs name, provider, apiUrl and model; `update`
 * takes any subset. Unknown fields are dropped; createdAt/updatedAt are the server's.
 * An apiKey of "***" (what a read shows) reads as "not given". Messages name the field.
 */
export function validateSourceFields(raw: unknown, mode: SourceMode, prefix = ''): SourceFields {
  if (!isPlainObject(raw)) throw DomainError.invalid(`${prefix || 'body'} must be a JSON object`);
  const out: SourceFields = {};
  const given = (k: string): boolean => raw[k] !== undefined;
  const required = (k: string): void => {
    if (mode === 'create' && (raw[k] === undefined || raw[k] === null)) {
      throw DomainError.invalid(`${at(prefix, k)} is required`);
    }
  };

  if (given('id') && raw.id !== null) out.id = validateSourceId(raw.id, at(prefix, 'id'));
  required('name');
  if (given('name')) out.name = text(raw.name, at(prefix, 'name'), NAME_MAX);
  required('provider');
  if (given('provider')) {
    if (typeof raw.provider !== 'string' || !AI_PROVIDERS.includes(raw.provider as AiProvider)) {
      throw DomainError.invalid(`${at(prefix, 'provider')} must be one of ${AI_PROVIDERS.join(', ')}`);
    }
    out.provider = raw.provider as AiProvider;
  }
  if (given('authType') && raw.authType !== 'api-key') {
    throw DomainError.invalid(`${at(prefix, 'authType')} must be "api-key"`);
  }
  required('apiUrl');
  if (given('apiUrl')) out.apiUrl = validateApiUrl(raw.apiUrl, at(prefix, 'apiUrl'));
  if (given('apiKey') && raw.apiKey !== null) {
    if (typeof raw.apiKey !== 'string') throw DomainError.invalid(`${at(prefix, 'apiKey')} must be a string`);
    if (raw.apiKey.length > API_KEY_MAX) {
      throw DomainError.invalid(`${at(prefix, 'apiKey')} must be at most ${API_KEY_MAX} characters`);
    }
    if (raw.apiKey !== MASKED_SECRET) out.apiKey = raw.apiKey.trim();
  }
  required('model');
  if (given('model')) out.model = validateModelId(raw.model, at(prefix, 'model'));
  if (given('availableModels') && raw.availableModels !== null) {
    out.availableModels = validateAvailableModels(raw.availableModels, at(prefix, 'availableModels'));
  }
  return out;
}

/** `models` with `model` appended when it is not listed yet. */
export function withModelListed(models: readonly AvailableModel[], model: string): AvailableModel[] {
  return models.some((m) => m.id === model) ? [...models] : [...models, { id: model, name: model }];
}

/** An ISO time strictly later than `previous`, so every update visibly bumps `updatedAt`. */
export function bumpedTime(previous: string, now: number): string {
  const before = Date.parse(previous);
  return new Date(Number.isNaN(before) || now > before ? now : before + 1).toISOString();
}

/** A new source from validated create fields. */
export function newSource(fields: SourceFields, id: string, now: number): AISource {
  const model = fields.model!;
  const stamp = new Date(now).toISOString();
  return {
    id,
    name: fields.name!,
    provider: fields.provider!,
    authType: 'api-key',
    apiUrl: fields.apiUrl!,
    apiKey: fields.apiKey ?? '',
    model,
    availableModels: withModelListed(fields.availableModels ?? [], model),
    createdAt: stamp,
    updatedAt: stamp,
  };
}

/** The fields that describe a source, for change detection (timestamps left out). */
function essence(s: AISource): string {
  return JSON.stringify([s.name, s.provider, s.authType, s.apiUrl, s.apiKey, s.model, s.availableModels]);
}

export function sameSource(a: AISource, b: AISource): boolean {
  return essence(a) === essence(b);
}

export const StoredKeyTexts = {
  newAddress: (field: string) =>
    `${field} is required to change apiUrl: a stored key is only ever sent to the address it was stored with (send the key again for the new address).`,
} as const;

/**
 * Whether the fields would send the stored key to another address: a new apiUrl while the
 * key is omitted (or "***"). A stored key goes only where it was stored for; a caller that
 * names a new address sends the key for it too.
 */
export function movesStoredKey(source: AISource, fields: SourceFields): boolean {
  return (
    fields.apiUrl !== undefined &&
    fields.apiKey === undefined &&
    source.apiKey !== '' &&
    sameAddressText(fields.apiUrl) !== sameAddressText(source.apiUrl)
  );
}

/** An address as compared for that rule: trailing slashes do not make it another address. */
function sameAddressText(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

/**
 * Field-by-field merge of an update: absent fields (and an apiKey of "***") keep their
 * stored value; a new `model` is added to `availableModels`; `updatedAt` is bumped when
 * anything changed. The id never changes.
 */
export function mergeSource(source: AISource, fields: SourceFields, now: number, prefix = ''): AISource {
  if (movesStoredKey(source, fields)) throw DomainError.invalid(StoredKeyTexts.newAddress(at(prefix, 'apiKey')));
  const model = fields.model ?? source.model;
  const merged: AISource = {
    ...source,
    name: fields.name ?? source.name,
    provider: fields.provider ?? source.provider,
    authType: 'api-key',
    apiUrl: fields.apiUrl ?? source.apiUrl,
    apiKey: fields.apiKey ?? source.apiKey,
    model,
    availableModels: withModelListed(fields.availableModels ?? source.availableModels, model),
  };
  merged.updatedAt = sameSource(merged, source) ? source.updatedAt : bumpedTime(source.updatedAt, now);
  return merged;
}

/** The source `currentId` names, or the first one, or none. */
export function currentSource(doc: AISourcesConfig): AISource | null {
  return doc.sources.find((s) => s.id === doc.currentId) ?? doc.sources[0] ?? null;
}

/** After a removal or replacement: keep `currentId` when it still names a source, else the first. */
export function repairCurrentId(sources: readonly AISource[], currentId: string | null): string | null {
  if (currentId !== null && sources.some((s) => s.id === currentId)) return currentId;
  return sources[0]?.id ?? null;
}

export interface ModelPin {
  modelSourceId?: string | null;
  modelId?: string | null;
}

export interface Selection {
  source: AISource;
  model: string;
}

/**
 * Which source and model a conversation runs on: its pin when the pinned source still
 * exists (the pinned model, or the source's model when none is pinned); otherwise the
 * current source with its model; null when there are no sources.
 */
export function selectForPin(doc: AISourcesConfig, pin: ModelPin | null | undefined): Selection | null {
  const pinned = pin?.modelSourceId ? doc.sources.find((s) => s.id === pin.modelSourceId) : undefined;
  if (pinned) {
    const model = typeof pin?.modelId === 'string' && pin.modelId.trim() !== '' ? pin.modelId : pinned.model;
    return { source: pinned, model };
  }
  const current = currentSource(doc);
  return current ? { source: current, model: current.model } : null;
}

/** Ids of sources that appeared, vanished or changed between two lists. */
export function changedSourceIds(before: readonly AISource[], after: readonly AISource[]): string[] {
  const old = new Map(before.map((s) => [s.id, s]));
  const ids = new Set<string>();
  for (const s of after) {
    const prev = old.get(s.id);
    if (!prev || !sameSource(prev, s)) ids.add(s.id);
    old.delete(s.id);
  }
  for (const id of old.keys()) ids.add(id);
  return [...ids];
}

/** A stored value read defensively: anything malformed reads as no sources. */
export function readSourcesDocument(raw: unknown): AiSourcesDocument {
  if (!isPlainObject(raw) || !Array.isArray(raw.sources)) {
    return { ...EMPTY_SOURCES, revision: isPlainObject(raw) && typeof raw.revision === 'number' ? raw.revision : 0 };
  }
  const sources = (raw.sources as unknown[]).filter(
    (s): s is AISource => isPlainObject(s) && typeof s.id === 'string' && typeof s.model === 'string',
  );
  const currentId = typeof raw.currentId === 'string' ? raw.currentId : null;
  return {
    version: 2,
    currentId: repairCurrentId(sources, currentId),
    sources,
    revision: typeof raw.revision === 'number' ? raw.revision : 0,
  };
}

/** The wire shape (no revision); secrets still in clear: mask before sending. */
export function toSourcesConfig(doc: AISourcesConfig): AISourcesConfig {
  return { version: 2, currentId: doc.currentId, sources: doc.sources };
}

// ---------------------------------------------------------------------------------------
// Seeding from SVC_AI_*

/** The seed with defaults applied, or null when neither URL nor key is set (no seeding). */
export function seedDefinition(
  seed: ModelSourceSeed | null,
): { provider: AiProvider; apiUrl: string; apiKey: string; model: string } | null {
  if (!seed || (seed.apiUrl === undefined && seed.apiKey === undefined)) return null;
  const provider = seed.provider;
  return {
    provider,
    apiUrl: seed.apiUrl ?? DEFAULT_API_URL[provider],
    apiKey: seed.apiKey ?? '',
    model: seed.model ?? DEFAULT_MODEL[provider],
  };
}

/**
 * Deterministic id of the seeded source, so replicas starting together agree on one.
 * Derived from provider, URL and model (a UUID v5 layout over SHA-1); the key is left out
 * on purpose: the id is public, and a hash of a weak key could be guessed offline. A new
 * key therefore keeps the id, and conversations pinned to it keep their pin.
 */
export function seedSourceId(def: { provider: string; apiUrl: string; model: string }): string {
  const bytes = createHash('sha1')
    .update(`svc:model-source-seed\n${def.provider}\n${def.apiUrl}\n${def.model}`)
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Whether a stored source came from SVC_AI_*: its id is the seed id of its own provider, URL
 * and model (ids of sources added through the API are random UUIDs, never of this layout).
 */
export function isSeededSource(source: Pick<AISource, 'id' | 'provider' | 'apiUrl' | 'model'>): boolean {
  return source.id === seedSourceId(source);
}

/**
 * The sources after seeding (README, "Configuration": `SVC_AI_*`): the seeded source is added, or updated in place when
 * a source from these variables is stored (the one of the same id, else one seeded from earlier
 * values of the variables, which it replaces at its position), and becomes current. Sources added
 * through the API are kept. A stored copy keeps its createdAt (and its updatedAt when nothing
 * changed), so a restart with the same variables changes nothing: null when the stored document
 * already is that.
 */
export function applySeed(
  doc: AiSourcesDocument,
  def: { provider: AiProvider; apiUrl: string; apiKey: string; model: string },
  now: number,
): AISourcesConfig | null {
  const id = seedSourceId(def);
  const stored = doc.sources.find((s) => s.id === id);
  const earlier = stored ? undefined : doc.sources.find(isSeededSource);
  const stamp = new Date(now).toISOString();
  const seeded: AISource = {
    id,
    name: stored?.name ?? `${def.provider} (env)`,
    provider: def.provider,
    authType: 'api-key',
    apiUrl: def.apiUrl,
    apiKey: def.apiKey,
    model: def.model,
    availableModels: stored?.availableModels.some((m) => m.id === def.model)
      ? stored.availableModels
      : [{ id: def.model, name: def.model }],
    createdAt: stored?.createdAt ?? earlier?.createdAt ?? stamp,
    updatedAt: stored?.updatedAt ?? stamp,
  };
  if (stored && !sameSource(stored, seeded)) seeded.updatedAt = bumpedTime(stored.updatedAt, now);
  const unchanged = stored !== undefined && doc.currentId === id && sameSource(stored, seeded);
  if (unchanged) return null;
  // One source from the variables: the earlier one (its values since changed) makes way at its place.
  const replaced = stored ?? earlier;
  const sources = replaced
    ? doc.sources.map((s) => (s.id === replaced.id ? seeded : s)).filter((s) => s === seeded || !isSeededSource(s))
    : [...doc.sources, seeded];
  return { version: 2, currentId: id, sources };
}
