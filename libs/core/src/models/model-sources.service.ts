import { ErrorCodes } from '#contracts/errors.js';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import {
  AI_SOURCES_CATALOG_CHANGED,
  type AiSourcesCatalogChanged,
  type AISource,
  type AISourcesConfig,
  type AppConfiguration,
  CONFIG_CHANGED_CHANNEL,
  type ConfigChanged,
  type CurrentSelection,
  sourceNotFound,
} from '#contracts/models.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { requiredString } from '../errors/input-rules.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import type { ModelEndpoint } from '../ports/model-provider.port.js';
import { SettingsRepository } from '../ports/settings.repository.port.js';
import {
  AI_SOURCES_BRANCH,
  type ConfigDocument,
  mergeAiSourcesBranch,
  mergeBranches,
  parseConfigPatch,
  readConfigDocument,
} from './configuration-rules.js';
import {
  type AiSourcesDocument,
  applySeed,
  bumpedTime,
  changedSourceIds,
  currentSource,
  mergeSource,
  type ModelPin,
  newSource,
  readSourcesDocument,
  repairCurrentId,
  sameSource,
  seedDefinition,
  seedSourceId,
  selectForPin,
  SOURCES_MAX,
  toSourcesConfig,
  validateModelId,
  validateSourceFields,
  withModelListed,
} from './model-source-rules.js';
import { maskSecrets } from './secret-masking.js';
import { type Mutation, Serial, SettingsDocument } from './settings-document.js';

/** Settings keys of the two stored documents. */
export const AI_SOURCES_KEY = 'config.aiSources';
export const CONFIG_BRANCHES_KEY = 'config.branches';

export const NO_SOURCE_CONFIGURED =
  'No model source is configured: add one with POST /api/ai-sources/sources or set SVC_AI_API_KEY (and SVC_AI_PROVIDER, SVC_AI_API_URL, SVC_AI_MODEL) and restart.';

/** A source to call, secrets in clear (for the agent engine only, never for responses). */
export interface ResolvedModel {
  source: AISource;
  model: string;
  endpoint: ModelEndpoint;
}

/** Checks a configuration branch's new value against the stored one; throws a DomainError to refuse it. */
export type BranchCheck = (next: unknown, stored: unknown) => void;

/**
 * Model sources and the configuration object (docs/api.md, "Model sources and the configuration"). Every answer meant for a
 * client is masked here; only `resolveForConversation` and `current` give clear secrets.
 * Nothing logged here carries a key.
 */
@Injectable()
export class ModelSourcesService implements OnApplicationBootstrap {
  private readonly logger = new Logger('ModelSources');
  private readonly sources: SettingsDocument<AiSourcesDocument>;
  private readonly branches: SettingsDocument<ConfigDocument>;
  private readonly branchChecks = new Map<string, BranchCheck>();

  constructor(
    settings: SettingsRepository,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    const serial = new Serial();
    this.sources = new SettingsDocument(settings, AI_SOURCES_KEY, readSourcesDocument, serial);
    this.branches = new SettingsDocument(settings, CONFIG_BRANCHES_KEY, readConfigDocument, serial);
  }

  /** Seeds the SVC_AI_* source at start; failures are logged, the server still starts. */
  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.seedFromEnvironment();
    } catch (err) {
      this.logger.error(`seeding the model source from SVC_AI_* failed: ${(err as Error).message}`);
    }
  }

  /**
   * When SVC_AI_API_URL or SVC_AI_API_KEY is set, the seeded source is added (or updated in
   * place) and becomes current; sources added through the API stay (README, "Configuration": `SVC_AI_*`). Its id is derived from the seed, so replicas starting
   * together write the same single source; an unchanged restart writes nothing.
   */
  async seedFromEnvironment(): Promise<void> {
    const def = seedDefinition(this.config.modelSeed);
    if (!def) return;
    const changed = await this.sources.update((doc) => {
      const next = applySeed(doc, def, this.clock.now());
      return next
        ? { next: { ...next, revision: doc.revision }, result: changedSourceIds(doc.sources, next.sources) }
        : { next: null, result: [] };
    });
    this.logger.log(
      `model source from SVC_AI_*: provider ${def.provider} at ${originOf(def.apiUrl)}, model ${def.model}, ` +
        `id ${seedSourceId(def)}` +
        (changed.length > 0 ? ' (stored and made current)' : ' (already stored and current)'),
    );
    await this.announce(changed);
  }

  // -------------------------------------------------------------------------------------
  // Reads

  /** `GET /api/config`: every stored branch plus `aiSources`, secrets masked. */
  async configuration(): Promise<AppConfiguration> {
    const [sources, other] = await Promise.all([this.sources.read(), this.branches.read()]);
    return maskSecrets({ ...other.branches, [AI_SOURCES_BRANCH]: toSourcesConfig(sources) } as AppConfiguration);
  }

  /** The sources, secrets masked. */
  async sourcesConfig(): Promise<AISourcesConfig> {
    return maskSecrets(toSourcesConfig(await this.sources.read()));
  }

  /** Whether a source with this id exists (e.g. to check a conversation's pin). */
  async hasSource(sourceId: string): Promise<boolean> {
    return (await this.sources.read()).sources.some((s) => s.id === sourceId);
  }

  /**
   * The source and model a conversation runs on: the pinned source and model while the
   * source exists, else the current source and its model; null without any source.
   * Secrets in clear: for calling the model, never for a response or a log.
   */
  async resolveForConversation(pin: ModelPin | null | undefined): Promise<ResolvedModel | null> {
    const selection = selectForPin(await this.sources.read(), pin);
    if (!selection) return null;
    const { source, model } = selection;
    return {
      source,
      model,
      endpoint: {
        provider: source.provider,
        apiUrl: source.apiUrl,
        apiKey: source.apiKey,
        source: { id: source.id, name: source.name },
      },
    };
  }

  /** A stored source by id, secrets in clear (for testing it, never for a response or a log); null when missing. */
  async storedSource(sourceId: string): Promise<AISource | null> {
    return (await this.sources.read()).sources.find((s) => s.id === sourceId) ?? null;
  }

  /** The current source and its model (what a new conversation pins), secrets in clear. */
  current(): Promise<ResolvedModel | null> {
    return this.resolveForConversation(null);
  }

  // -------------------------------------------------------------------------------------
  // Writes

  /**
   * `POST /api/config`: merges a partial configuration at the top level. Everything is
   * validated before anything is written; answers the whole configuration, masked.
   */
  async updateConfiguration(body: unknown): Promise<AppConfiguration> {
    const patch = parseConfigPatch(body);
    const ids = new IdPool();
    const { aiSources } = patch;
    if (aiSources) {
      // Validate against what is stored now, so a bad branch writes nothing at all.
      mergeAiSourcesBranch(await this.sources.read(), aiSources, this.clock.now(), ids.sequence());
    }
    if (Object.keys(patch.branches).length > 0) {
      await this.branches.update((doc) => {
        const branches = mergeBranches(doc.branches, patch.branches);
        for (const key of Object.keys(patch.branches)) this.branchChecks.get(key)?.(branches[key], doc.branches[key]);
        return { next: { revision: doc.revision, branches }, result: undefined };
      });
      const changed: ConfigChanged = { branches: Object.keys(patch.branches) };
      await this.bus.publish(CONFIG_CHANGED_CHANNEL, changed).catch(() => undefined);
    }
    if (aiSources) {
      const changed = await this.sources.update((doc) => {
        const next = mergeAiSourcesBranch(doc, aiSources, this.clock.now(), ids.sequence());
        return { next: { ...next, revision: doc.revision }, result: changedSourceIds(doc.sources, next.sources) };
      });
      await this.announce(changed);
    }
    return this.configuration();
  }

  /** The stored value of a configuration branch, secrets in clear (for the server's own use, never for a response). */
  async storedBranch(key: string): Promise<unknown> {
    return (await this.branches.read()).branches[key];
  }

  /**
   * The context that owns a configuration branch registers its check at start (the MCP context
   * checks `mcpServers`): it runs on every change of that branch, before anything is written,
   * and throws to refuse the change.
   */
  checkBranch(key: string, check: BranchCheck): void {
    this.branchChecks.set(key, check);
  }

  /** Adds a source (client-chosen id or a new UUID; duplicate id: 409). The first one becomes current. */
  async addSource(body: unknown): Promise<AISourcesConfig> {
    const fields = validateSourceFields(body, 'create');
    const id = fields.id ?? randomUUID();
    const doc = await this.mutate((current) => {
      if (current.sources.some((s) => s.id === id)) {
        throw new DomainError('conflict', `A source with id ${id} already exists`, ErrorCodes.ALREADY_EXISTS);
      }
      if (current.sources.length >= SOURCES_MAX) throw DomainError.invalid(`at most ${SOURCES_MAX} sources`);
      const sources = [...current.sources, newSource(fields, id, this.clock.now())];
      return { ...current, sources, currentId: repairCurrentId(sources, current.currentId) };
    });
    await this.announce([id]);
    return maskSecrets(toSourcesConfig(doc));
  }

  /**
   * Merges fields into a source; an omitted (or "***") apiKey keeps the stored key.
   * `updatedAt` is bumped on every accepted update.
   */
  async updateSource(sourceId: string, body: unknown): Promise<AISourcesConfig> {
    const fields = validateSourceFields(body, 'update');
    if (fields.id !== undefined && fields.id !== sourceId) throw DomainError.invalid('id cannot be changed');
    let changed = false;
    const doc = await this.mutate((current) => {
      const source = this.find(current, sourceId);
      const now = this.clock.now();
      const merged = { ...mergeSource(source, fields, now), updatedAt: bumpedTime(source.updatedAt, now) };
      changed = !sameSource(merged, source);
      return { ...current, sources: current.sources.map((s) => (s.id === sourceId ? merged : s)) };
    });
    if (changed) await this.announce([sourceId]);
    return maskSecrets(toSourcesConfig(doc));
  }

  /** Removes a source; when it was current, the first remaining one (or none) becomes current. */
  async removeSource(sourceId: string): Promise<AISourcesConfig> {
    const doc = await this.mutate((current) => {
      this.find(current, sourceId);
      const sources = current.sources.filter((s) => s.id !== sourceId);
      return { ...current, sources, currentId: repairCurrentId(sources, current.currentId) };
    });
    await this.announce([sourceId]);
    return maskSecrets(toSourcesConfig(doc));
  }

  async switchSource(sourceId: unknown): Promise<CurrentSelection> {
    const id = requiredString(sourceId, 'sourceId', REQUIRED).trim();
    const doc = await this.mutate((current) => {
      this.find(current, id);
      return current.currentId === id ? null : { ...current, currentId: id };
    });
    return selectionOf(doc);
  }

  /** Sets the current source's model, adding it to its available models when missing. */
  async setModel(modelId: unknown): Promise<CurrentSelection> {
    const model = validateModelId(requiredString(modelId, 'modelId', REQUIRED).trim(), 'modelId');
    let listed = true;
    const doc = await this.mutate((current) => {
      const source = currentSource(current);
      if (!source) throw DomainError.notFound(NO_SOURCE_CONFIGURED, ErrorCodes.NO_MODEL);
      listed = source.availableModels.some((m) => m.id === model);
      if (source.model === model && current.currentId === source.id) return null;
      const updated: AISource = {
        ...source,
        model,
        availableModels: withModelListed(source.availableModels, model),
        updatedAt: bumpedTime(source.updatedAt, this.clock.now()),
      };
      return {
        ...current,
        currentId: source.id,
        sources: current.sources.map((s) => (s.id === source.id ? updated : s)),
      };
    });
    if (!listed && doc.currentId) await this.announce([doc.currentId]);
    return selectionOf(doc);
  }

  // -------------------------------------------------------------------------------------

  /** Read-modify-write of the sources; `change` returns null for "nothing to write". */
  private async mutate(change: (current: AiSourcesDocument) => AiSourcesDocument | null): Promise<AiSourcesDocument> {
    return this.sources.update((current): Mutation<AiSourcesDocument, AiSourcesDocument> => {
      const next = change(current);
      return next ? { next, result: { ...next, revision: current.revision + 1 } } : { next: null, result: current };
    });
  }

  private find(doc: AISourcesConfig, sourceId: string): AISource {
    const source = doc.sources.find((s) => s.id === sourceId);
    if (!source) throw DomainError.notFound(sourceNotFound(sourceId), ErrorCodes.MODEL_SOURCE_NOT_FOUND);
    return source;
  }

  /** Tells every replica's clients; a bus failure does not undo the stored change. */
  private async announce(sourceIds: string[]): Promise<void> {
    if (sourceIds.length === 0) return;
    const data: AiSourcesCatalogChanged = { sourceIds };
    try {
      await this.bus.publish(AI_SOURCES_CATALOG_CHANGED, data);
    } catch (err) {
      this.logger.warn(`publishing ${AI_SOURCES_CATALOG_CHANGED} failed: ${(err as Error).message}`);
    }
  }
}

/** How switch-source and set-model word a missing id (docs/api.md). */
const REQUIRED = 'is required (a string)';

function selectionOf(doc: AISourcesConfig): CurrentSelection {
  const source = currentSource(doc);
  return { currentId: source?.id ?? null, currentModel: source?.model ?? null };
}

/**
 * Ids for the sources a config POST adds without one. Each `sequence()` hands out the
 * same ids in the same order, so a mutation that re-runs (validation first, then after
 * a lost race) gives the same item the same id.
 */
class IdPool {
  private readonly ids: string[] = [];

  sequence(): () => string {
    let i = 0;
    return () => {
      if (i >= this.ids.length) this.ids.push(randomUUID());
      return this.ids[i++]!;
    };
  }
}

/** Scheme, host and port only: a URL may carry credentials in its user info or query. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}
