import { type AISource, type AISourcesConfig, MASKED_SECRET } from '#contracts/models.js';
import { DomainError } from '../errors/domain-error.js';
import {
  type AiSourcesDocument,
  mergeSource,
  newSource,
  repairCurrentId,
  SOURCES_MAX,
  validateSourceFields,
} from './model-source-rules.js';
import { isPlainObject, MovedSecretError, restoreMaskedSecrets } from './secret-masking.js';

/**
 * Rules of the configuration object (`GET/POST /api/config`): `aiSources` plus any other
 * top-level branches clients keep. A POST merges at the top level: each branch it names
 * replaces the stored branch (null removes it), with "***" secrets restored from the
 * stored branch. The password (`remoteAccess.password`) is the server's, never stored here.
 */

export const AI_SOURCES_BRANCH = 'aiSources';
export const REMOTE_ACCESS_BRANCH = 'remoteAccess';
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
export const BRANCHES_MAX = 100;

/** The other branches, stored as one document. */
export interface ConfigDocument {
  revision: number;
  branches: Record<string, unknown>;
}

export function readConfigDocument(raw: unknown): ConfigDocument {
  if (!isPlainObject(raw)) return { revision: 0, branches: {} };
  return {
    revision: typeof raw.revision === 'number' ? raw.revision : 0,
    branches: isPlainObject(raw.branches) ? raw.branches : {},
  };
}

export interface ConfigPatch {
  /** The aiSources branch, when given. */
  aiSources?: Record<string, unknown>;
  /** Other branches: a value replaces the stored branch, null removes it. */
  branches: Record<string, unknown>;
}

/** Splits and checks a POST body. `remoteAccess` is ignored unless it tries to set a password (400). */
export function parseConfigPatch(raw: unknown): ConfigPatch {
  if (!isPlainObject(raw)) throw DomainError.invalid('body must be a JSON object');
  const patch: ConfigPatch = { branches: {} };
  const entries: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(raw)) {
    if (FORBIDDEN_KEYS.has(key)) throw DomainError.invalid(`${key} is not an allowed configuration key`);
    if (key === AI_SOURCES_BRANCH) {
      if (!isPlainObject(value)) throw DomainError.invalid('aiSources must be an object {version, currentId, sources}');
      patch.aiSources = value;
    } else if (key === REMOTE_ACCESS_BRANCH) {
      const password = isPlainObject(value) ? value.password : undefined;
      if (typeof password === 'string' && password !== '' && password !== MASKED_SECRET) {
        throw DomainError.invalid(
          'remoteAccess.password cannot be changed here: set SVC_REMOTE_PASSWORD and restart the server',
        );
      }
    } else if (value !== undefined) {
      entries.push([key, value]);
    }
  }
  patch.branches = Object.fromEntries(entries);
  return patch;
}

/** Top-level merge of the other branches; "***" secrets keep the stored values. */
export function mergeBranches(
  stored: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged = new Map(Object.entries(stored));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key);
    else {
      try {
        merged.set(key, restoreMaskedSecrets(value, stored[key], key));
      } catch (err) {
        if (err instanceof MovedSecretError) throw DomainError.invalid(err.message);
        throw err;
      }
    }
  }
  if (merged.size > BRANCHES_MAX) throw DomainError.invalid(`the configuration holds at most ${BRANCHES_MAX} branches`);
  return Object.fromEntries(merged);
}

/**
 * Applies an `aiSources` branch: `sources`, when given, replaces the list (each item is
 * validated as a whole source; a stored source of the same id keeps its apiKey when the
 * item omits it or sends "***", and its createdAt); `currentId`, when given, must name
 * one of the resulting sources or be null; otherwise the stored one is kept if it still
 * exists, else the first source becomes current.
 */
export function mergeAiSourcesBranch(
  doc: AiSourcesDocument,
  branch: Record<string, unknown>,
  now: number,
  newId: () => string,
): AISourcesConfig {
  if (branch.version !== undefined && branch.version !== 2) throw DomainError.invalid('aiSources.version must be 2');
  let sources: AISource[] = doc.sources;
  if (branch.sources !== undefined) {
    if (!Array.isArray(branch.sources)) throw DomainError.invalid('aiSources.sources must be an array');
    if (branch.sources.length > SOURCES_MAX) {
      throw DomainError.invalid(`aiSources.sources must hold at most ${SOURCES_MAX} sources`);
    }
    const stored = new Map(doc.sources.map((s) => [s.id, s]));
    const seen = new Set<string>();
    sources = branch.sources.map((item, i) => {
      const prefix = `aiSources.sources[${i}]`;
      const fields = validateSourceFields(item, 'create', prefix);
      const id = fields.id ?? newId();
      if (seen.has(id)) throw DomainError.invalid(`${prefix}.id repeats the id of another source`);
      seen.add(id);
      const previous = stored.get(id);
      return previous ? mergeSource(previous, fields, now, prefix) : newSource(fields, id, now);
    });
  }
  let currentId = doc.currentId;
  if (branch.currentId !== undefined) {
    if (
      branch.currentId !== null &&
      (typeof branch.currentId !== 'string' || !sources.some((s) => s.id === branch.currentId))
    ) {
      throw DomainError.invalid('aiSources.currentId must be null or the id of one of the sources');
    }
    currentId = branch.currentId;
  }
  return { version: 2, currentId: repairCurrentId(sources, currentId), sources };
}
