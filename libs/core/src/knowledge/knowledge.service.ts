import { createHash, randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ErrorCodes } from '#contracts/errors.js';
import { KnowledgeChannels } from '#contracts/knowledge.js';
import type {
  AddFilesResultDto,
  IngestStatusDto,
  KnowledgeBaseDto,
  KnowledgeBaseStatus,
  KnowledgeEmbeddingDto,
  KnowledgeSourceRefDto,
  LinkedDirDto,
  RawFileDto,
  SearchHitDto,
} from '#contracts/knowledge.js';
import { childOf, isPlainName } from '../artifacts/path-rules.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { knowledgeIngestJobId } from '../kernel/job-ids.js';
import { EventBus } from '../ports/event-bus.port.js';
import { FileStore, type GuardedPath } from '../ports/file-store.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import { SpacesService } from '../spaces/spaces.service.js';
import { MAX_FILES_PER_IMPORT, MAX_SOURCE_BYTES, PRUNED_FOLDERS, rejectionReason } from './formats.js';
import {
  DocumentParser,
  Embeddings,
  EmbeddingsUnavailable,
  embeddingKey,
  type IndexOutcome,
  type IngestRecord,
  KnowledgeFiles,
  type KnowledgeBaseRecord,
  KnowledgeRepository,
  type KeywordHit,
  type LinkRecord,
  type SourceRecord,
} from './knowledge.ports.js';
import { tsqueryLiteral } from './lexemes.js';
import { fuseByRank } from './rank-fusion.js';

export const KnowledgeErrors = {
  notFound: 'Knowledge base not found',
  missingSpaceId: 'Missing spaceId',
  missingAppId: 'Missing appId',
  missingName: 'Missing name',
  sourceNotFound: 'Source not found',
  uploadTooLarge: `File too large (the upload limit is ${MAX_SOURCE_BYTES / 1024 / 1024} MB)`,
  learning: 'Learning is already in progress',
  linkNotFound: 'Linked folder not found',
} as const;

/** Search: default and most hits. */
export const DEFAULT_TOP_K = 8;
export const MAX_TOP_K = 50;
/** Longest a parser may work on one file before the source fails. */
export const PARSE_TIMEOUT_MS = 60_000;
/** Attempts of one ingest job (the last one fails the source rather than throwing). */
export const INGEST_ATTEMPTS = 3;

export type SearchMode = 'hybrid' | 'keyword' | 'semantic';

/** Each list fused holds this many times topK candidates (at least RRF_MIN_CANDIDATES). */
const RRF_DEPTH = 4;
const RRF_MIN_CANDIDATES = 40;
/** Most dimensions an embedding setting may name. */
export const MAX_EMBEDDING_DIMENSIONS = 8192;

const STATUSES: readonly KnowledgeBaseStatus[] = ['active', 'paused', 'error'];

const IDLE = (kbId: string): IngestStatusDto => ({ kbId, total: 0, completed: 0, phase: 'idle', errors: [] });

function statusDto(s: IngestRecord): IngestStatusDto {
  return {
    kbId: s.kbId,
    total: s.total,
    completed: s.completed,
    ...(s.current ? { current: s.current } : {}),
    phase: s.phase,
    errors: s.errors,
  };
}

/** The embedding key a base's chunks should carry now: null when it has no usable embedding model. */
function wantedKey(kb: KnowledgeBaseRecord): string | null {
  return kb.embedding !== null && kb.embeddingError === null ? embeddingKey(kb.embedding) : null;
}

/**
 * Whether a source's content `hash` is in the index already (learned, or found to hold no text),
 * with vectors of the base's embedding model when it has a usable one; a failed one is tried again.
 */
function isIndexed(s: SourceRecord, hash: string, key: string | null): boolean {
  if (s.indexedHash !== hash) return false;
  if (s.state === 'no-text') return true;
  return s.state === 'learned' && (key === null || s.embeddingKey === key);
}

/** A vector scaled to unit length (so a dot product is the cosine similarity). */
function unit(v: number[]): number[] {
  const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
  return norm === 0 ? v : v.map((x) => x / norm);
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

/** A path inside a knowledge base: relative, forward slashes, each segment a plain name. */
function normalizeRelPath(path: string): string | null {
  const segments = path
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  if (segments.length === 0 || !segments.every(isPlainName)) return null;
  return segments.join('/');
}

/**
 * Knowledge bases (docs/api/knowledge.md): records, bindings, sources copied from workspaces
 * or allowed server folders or uploaded, ingestion as queued jobs with persisted progress, and
 * keyword search over the chunk index.
 */
@Injectable()
export class KnowledgeService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Knowledge');

  constructor(
    private readonly repo: KnowledgeRepository,
    private readonly files: KnowledgeFiles,
    private readonly parser: DocumentParser,
    private readonly fileStore: FileStore,
    private readonly spaces: SpacesService,
    private readonly queue: JobQueue,
    private readonly bus: EventBus,
    private readonly embeddings: Embeddings,
    private readonly models: ModelSourcesService,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'kbImportRoots'>,
  ) {}

  /** Says at start how knowledge bases search here (docs/api/knowledge.md, "Search"). */
  onApplicationBootstrap(): void {
    this.logger.log(
      'knowledge bases: keyword search (tsvector + GIN) in every base; hybrid search (keyword and vector ranks fused) in bases with an embedding model',
    );
  }

  // ---- knowledge bases ------------------------------------------------------------------

  private async dto(kb: KnowledgeBaseRecord): Promise<KnowledgeBaseDto> {
    return {
      id: kb.id,
      name: kb.name,
      ...(kb.icon !== null ? { icon: kb.icon } : {}),
      ...(kb.description !== null ? { description: kb.description } : {}),
      status: kb.status,
      createdAt: kb.createdAt,
      updatedAt: kb.updatedAt,
      spaceIds: kb.spaceIds,
      appIds: kb.appIds,
      isDefault: kb.isDefault,
      stats: await this.repo.stats(kb.id),
      embedding: kb.embedding,
      searchMode: wantedKey(kb) !== null ? 'hybrid' : 'keyword',
      ...(kb.embedding !== null && kb.embeddingError !== null
        ? { searchNote: `${kb.embeddingError}: search is keyword-only` }
        : {}),
    };
  }

  private async record(kbId: string): Promise<KnowledgeBaseRecord> {
    const kb = await this.repo.get(kbId);
    if (!kb) throw DomainError.notFound(KnowledgeErrors.notFound, ErrorCodes.KNOWLEDGE_BASE_NOT_FOUND);
    return kb;
  }

  async create(input: { name?: unknown; icon?: unknown; description?: unknown }): Promise<KnowledgeBaseDto> {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name === '') throw DomainError.invalid(KnowledgeErrors.missingName);
    const kb = await this.repo.create({
      id: randomUUID(),
      name,
      icon: typeof input.icon === 'string' ? input.icon : null,
      description: typeof input.description === 'string' ? input.description : null,
    });
    return this.dto(kb);
  }

  async list(): Promise<KnowledgeBaseDto[]> {
    return Promise.all((await this.repo.list()).map((kb) => this.dto(kb)));
  }

  async get(kbId: string): Promise<KnowledgeBaseDto> {
    return this.dto(await this.record(kbId));
  }

  async forSpace(spaceId: string): Promise<KnowledgeBaseDto[]> {
    return Promise.all((await this.repo.boundTo('space', spaceId)).map((kb) => this.dto(kb)));
  }

  async update(
    kbId: string,
    input: { name?: unknown; icon?: unknown; description?: unknown; status?: unknown; embedding?: unknown },
  ): Promise<KnowledgeBaseDto> {
    await this.record(kbId);
    const changes: Parameters<KnowledgeRepository['update']>[1] = {};
    if (input.name !== undefined) {
      if (typeof input.name !== 'string' || input.name.trim() === '')
        throw DomainError.invalid(KnowledgeErrors.missingName);
      changes.name = input.name.trim();
    }
    if (input.icon !== undefined) changes.icon = typeof input.icon === 'string' ? input.icon : null;
    if (input.description !== undefined) {
      changes.description = typeof input.description === 'string' ? input.description : null;
    }
    if (input.status !== undefined) {
      if (!STATUSES.includes(input.status as KnowledgeBaseStatus)) {
        throw DomainError.invalid(`status must be one of ${STATUSES.join(', ')}`);
      }
      changes.status = input.status as KnowledgeBaseStatus;
    }
    if (input.embedding !== undefined) {
      changes.embedding = await this.embeddingSetting(input.embedding);
      // Set again (the same or another model): whether it can be used is found anew.
      changes.embeddingError = changes.embedding === null ? null : await this.embeddingProblem(changes.embedding);
    }
    const kb = await this.repo.update(kbId, changes);
    if (!kb) throw DomainError.notFound(KnowledgeErrors.notFound, ErrorCodes.KNOWLEDGE_BASE_NOT_FOUND);
    // A new (or again usable) model: the sources without its vectors are embedded, as jobs.
    if (wantedKey(kb) !== null && (await this.repo.listSources(kbId)).length > 0) await this.ingest(kbId);
    return this.dto(kb);
  }

  /** `embedding` of a PUT: null, or `{modelSourceId, model, dimensions}` naming a stored model source. */
  private async embeddingSetting(value: unknown): Promise<KnowledgeEmbeddingDto | null> {
    if (value === null) return null;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw DomainError.invalid('embedding must be {modelSourceId, model, dimensions} or null');
    }
    const e = value as Record<string, unknown>;
    if (typeof e.modelSourceId !== 'string' || e.modelSourceId === '') {
      throw DomainError.invalid('embedding.modelSourceId must be the id of a model source');
    }
    if (typeof e.model !== 'string' || e.model.trim() === '') {
      throw DomainError.invalid('embedding.model must be the name of an embedding model');
    }
    const dimensions = e.dimensions;
    if (
      typeof dimensions !== 'number' ||
      !Number.isInteger(dimensions) ||
      dimensions < 1 ||
      dimensions > MAX_EMBEDDING_DIMENSIONS
    ) {
      throw DomainError.invalid(`embedding.dimensions must be an integer from 1 to ${MAX_EMBEDDING_DIMENSIONS}`);
    }
    if (!(await this.models.hasSource(e.modelSourceId))) {
      throw DomainError.invalid(`embedding.modelSourceId: no model source ${e.modelSourceId}`);
    }
    return { modelSourceId: e.modelSourceId, model: e.model.trim(), dimensions };
  }

  /** Why an embedding setting cannot be used as it stands (its source gone, or not OpenAI-compatible); null when it may. */
  private async embeddingProblem(e: KnowledgeEmbeddingDto): Promise<string | null> {
    const source = await this.models.storedSource(e.modelSourceId);
    if (!source) return `The model source ${e.modelSourceId} no longer exists`;
    if (source.provider !== 'openai') {
      return `The model source ${source.name} (${source.provider}) has no OpenAI-compatible embeddings endpoint`;
    }
    return null;
  }

  /**
   * Vectors for texts under a base's embedding setting (unit length), or null when the base has
   * none usable. A provider that cannot embed at all marks the base (`embeddingError`, so it says
   * it is keyword-only and stops trying until its embedding is set again); other failures throw.
   */
  private async embed(kb: KnowledgeBaseRecord, texts: string[]): Promise<number[][] | null> {
    if (wantedKey(kb) === null || texts.length === 0) return null;
    const e = kb.embedding!;
    const problem = await this.embeddingProblem(e);
    const source = problem === null ? await this.models.storedSource(e.modelSourceId) : null;
    try {
      if (problem !== null || !source) throw new EmbeddingsUnavailable(problem ?? 'The model source is gone');
      const vectors = await this.embeddings.embed(
        {
          provider: source.provider,
          apiUrl: source.apiUrl,
          apiKey: source.apiKey,
          source: { id: source.id, name: source.name },
        },
        e.model,
        e.dimensions,
        texts,
      );
      return vectors.map(unit);
    } catch (err) {
      if (!(err instanceof EmbeddingsUnavailable)) throw err;
      this.logger.warn({ msg: 'knowledge base falls back to keyword search', kbId: kb.id, reason: err.message });
      await this.repo.update(kb.id, { embeddingError: err.message });
      return null;
    }
  }

  async delete(kbId: string): Promise<void> {
    if (!(await this.repo.delete(kbId)))
      throw DomainError.notFound(KnowledgeErrors.notFound, ErrorCodes.KNOWLEDGE_BASE_NOT_FOUND);
    await this.files
      .removeBase(kbId)
      .catch((err: unknown) =>
        this.logger.warn({ msg: 'could not remove the files of a deleted knowledge base', kbId, error: String(err) }),
      );
  }

  /** Makes one base the default (null: none); answers it, or null. */
  async setDefault(kbId: string | null): Promise<KnowledgeBaseDto | null> {
    if (kbId !== null) await this.record(kbId);
    await this.repo.setDefault(kbId);
    return kbId === null ? null : this.get(kbId);
  }

  async bindSpace(kbId: string, spaceId: unknown, bound: boolean): Promise<KnowledgeBaseDto> {
    if (typeof spaceId !== 'string' || spaceId === '') throw DomainError.invalid(KnowledgeErrors.missingSpaceId);
    await this.record(kbId);
    if (bound) {
      await this.spaces.get(spaceId);
      await this.repo.bind(kbId, 'space', spaceId);
    } else await this.repo.unbind(kbId, 'space', spaceId);
    return this.get(kbId);
  }

  async bindApp(kbId: string, appId: unknown, bound: boolean): Promise<KnowledgeBaseDto> {
    if (typeof appId !== 'string' || appId === '') throw DomainError.invalid(KnowledgeErrors.missingAppId);
    await this.record(kbId);
    if (bound) await this.repo.bind(kbId, 'app', appId);
    else await this.repo.unbind(kbId, 'app', appId);
    return this.get(kbId);
  }

  // ---- sources --------------------------------------------------------------------------

  /**
   * Copies files into the knowledge base: with `spaceId`, paths inside that space's folder
   * (relative to it, or absolute inside it); without, absolute server paths under
   * SVC_KB_IMPORT_ROOTS. A folder brings its accepted files (not its build and VCS folders).
   * A path outside the allowed places refuses the whole request (403, naming it); a file of an
   * unsupported type is listed in `rejected`. The added sources are ingested at once.
   */
  async addFiles(kbId: string, input: { spaceId?: unknown; filePaths?: unknown }): Promise<AddFilesResultDto> {
    await this.record(kbId);
    const paths = input.filePaths;
    if (!Array.isArray(paths) || paths.length === 0 || !paths.every((p) => typeof p === 'string' && p !== '')) {
      throw DomainError.invalid('filePaths must be a non-empty list of paths');
    }
    let roots: string[];
    let base: string | undefined;
    let place: string;
    if (input.spaceId !== undefined && input.spaceId !== null && input.spaceId !== '') {
      if (typeof input.spaceId !== 'string') throw DomainError.invalid(KnowledgeErrors.missingSpaceId);
      const space = await this.spaces.get(input.spaceId);
      roots = [space.path];
      base = space.path;
      place = `the space ${space.name}`;
    } else {
      roots = this.config.kbImportRoots;
      place = 'SVC_KB_IMPORT_ROOTS';
    }
    const guarded: GuardedPath[] = [];
    for (const path of paths as string[]) {
      const refuse = () =>
        DomainError.forbidden(
          `Access denied: ${path} is outside ${place}` +
            (base === undefined && roots.length === 0 ? ' (unset: pass spaceId with paths inside that space)' : ''),
        );
      if (roots.length === 0) throw refuse();
      try {
        guarded.push(await this.fileStore.resolve({ roots, path, ...(base ? { base } : {}), allowRoot: true }));
      } catch (err) {
        if (err instanceof DomainError && err.kind === 'forbidden') throw refuse();
        throw err;
      }
    }
    const result: AddFilesResultDto = { added: [], rejected: [] };
    const files: GuardedPath[] = [];
    const collect = async (target: GuardedPath, named: string): Promise<void> => {
      const info = await this.fileStore.stat(target);
      if (!info) {
        result.rejected.push({ path: named, reason: 'File not found' });
        return;
      }
      if (info.kind === 'folder') {
        for (const entry of await this.fileStore.readDir(target)) {
          if (files.length >= MAX_FILES_PER_IMPORT) return;
          if (entry.kind === 'folder' && (PRUNED_FOLDERS.has(entry.name) || entry.symlink)) continue;
          const child = childOf(target, entry.name);
          if (entry.kind === 'folder') await collect(child, child.path);
          else if (rejectionReason(entry.name) === null) files.push(child);
        }
        return;
      }
      if (info.kind !== 'file') {
        result.rejected.push({ path: named, reason: 'Not a regular file' });
        return;
      }
      const reason = rejectionReason(target.path);
      if (reason) result.rejected.push({ path: named, reason });
      else if (info.size > MAX_SOURCE_BYTES)
        result.rejected.push({ path: named, reason: KnowledgeErrors.uploadTooLarge });
      else files.push(target);
    };
    for (let i = 0; i < guarded.length; i++) await collect(guarded[i]!, (paths as string[])[i]!);
    if (files.length >= MAX_FILES_PER_IMPORT) {
      throw DomainError.invalid(`Too many files (at most ${MAX_FILES_PER_IMPORT} in one request)`);
    }
    for (const file of files) {
      const relPath = normalizeRelPath(file.relativePath === '' ? basename(file.path) : file.relativePath);
      if (relPath === null) {
        result.rejected.push({ path: file.path, reason: 'Invalid file name' });
        continue;
      }
      const bytes = await this.fileStore.readFile(file, MAX_SOURCE_BYTES);
      if (bytes === 'too-large') {
        result.rejected.push({ path: file.path, reason: KnowledgeErrors.uploadTooLarge });
        continue;
      }
      await this.keep(kbId, relPath, once(bytes));
      result.added.push(relPath);
    }
    if (result.added.length > 0) await this.ingest(kbId);
    return result;
  }

  /** An upload: the raw bytes become the source `name` (replacing one of that name), then ingested. */
  async upload(kbId: string, name: unknown, chunks: AsyncIterable<Uint8Array>): Promise<RawFileDto> {
    await this.record(kbId);
    const relPath = typeof name === 'string' ? normalizeRelPath(name) : null;
    if (relPath === null) throw DomainError.invalid('name must be a file name (query parameter)');
    const reason = rejectionReason(relPath);
    if (reason) throw DomainError.invalid(reason);
    const source = await this.keep(kbId, relPath, chunks);
    await this.ingest(kbId);
    return this.rawDto(source);
  }

  private async keep(
    kbId: string,
    relPath: string,
    chunks: AsyncIterable<Uint8Array>,
    origin: 'raw' | 'linked' = 'raw',
  ): Promise<SourceRecord> {
    const written = await this.files.write(kbId, relPath, chunks, MAX_SOURCE_BYTES);
    if (written === 'too-large') throw new DomainError('too_large', KnowledgeErrors.uploadTooLarge);
    return this.repo.upsertSource({
      kbId,
      relPath,
      name: basename(relPath),
      origin,
      size: written.size,
      contentHash: written.hash,
    });
  }

  private rawDto(s: SourceRecord): RawFileDto {
    return {
      name: s.name,
      path: s.relPath,
      size: s.size,
      learned: s.state === 'learned' || s.state === 'no-text',
      state: s.state,
      ...(s.error !== null ? { error: s.error } : {}),
      source: s.origin,
    };
  }

  async raw(kbId: string): Promise<RawFileDto[]> {
    await this.record(kbId);
    return (await this.repo.listSources(kbId)).map((s) => this.rawDto(s));
  }

  /** Deletes one source, its file and its chunks (irreversible). */
  async removeRaw(kbId: string, relativePath: unknown): Promise<void> {
    await this.record(kbId);
    const relPath = typeof relativePath === 'string' ? normalizeRelPath(relativePath) : null;
    if (relPath === null) throw DomainError.invalid('Missing relativePath');
    const removed = await this.repo.deleteSource(kbId, relPath);
    if (!removed) throw DomainError.notFound(KnowledgeErrors.sourceNotFound);
    await this.files.remove(kbId, relPath).catch(() => undefined);
    await this.publishStats(kbId);
  }

  // ---- linked folders ------------------------------------------------------------------

  /** The folder inside the knowledge base that a link's sources are listed under. */
  private linkPrefix(link: LinkRecord): string {
    return `linked-${link.id.slice(0, 8)}`;
  }

  private async linkDto(link: LinkRecord): Promise<LinkedDirDto> {
    const prefix = this.linkPrefix(link);
    const fileCount = (await this.repo.listSources(link.kbId)).filter((s) => s.relPath.startsWith(`${prefix}/`)).length;
    return {
      id: link.id,
      kbId: link.kbId,
      spaceId: link.spaceId,
      path: link.path,
      ...(link.label !== null ? { label: link.label } : {}),
      state: link.state,
      ...(link.error !== null ? { error: link.error } : {}),
      fileCount,
      prefix,
      createdAt: link.createdAt,
    };
  }

  private async linkOf(kbId: string, linkId: string): Promise<LinkRecord> {
    await this.record(kbId);
    const link = await this.repo.getLink(linkId);
    if (!link || link.kbId !== kbId) throw DomainError.notFound(KnowledgeErrors.linkNotFound);
    return link;
  }

  /**
   * Links a folder of a workspace (`path` relative to the space's folder, through the path guard:
   * outside it is 403): its accepted files become sources now and whenever the watcher reports a
   * change under it. Answers the link with the number of files it brought.
   */
  async addLink(kbId: string, input: { spaceId?: unknown; path?: unknown; label?: unknown }): Promise<LinkedDirDto> {
    await this.record(kbId);
    if (typeof input.spaceId !== 'string' || input.spaceId === '')
      throw DomainError.invalid(KnowledgeErrors.missingSpaceId);
    if (input.path !== undefined && typeof input.path !== 'string') {
      throw DomainError.invalid('path must be a folder path inside the space');
    }
    if (input.label !== undefined && input.label !== null && typeof input.label !== 'string') {
      throw DomainError.invalid('label must be a string');
    }
    const space = await this.spaces.get(input.spaceId);
    const target = await this.guardedInSpace(space.path, space.name, (input.path as string | undefined) ?? '');
    const info = await this.fileStore.stat(target);
    if (!info || info.kind !== 'folder')
      throw DomainError.invalid(`path: ${target.relativePath || '.'} is not a folder in the space`);
    const label = typeof input.label === 'string' && input.label.trim() !== '' ? input.label.trim() : null;
    const link = await this.repo.createLink({
      id: randomUUID(),
      kbId,
      spaceId: space.id,
      path: target.relativePath,
      label,
    });
    await this.syncLink(link.id);
    return this.linkDto((await this.repo.getLink(link.id)) ?? link);
  }

  private async guardedInSpace(root: string, name: string, path: string): Promise<GuardedPath> {
    try {
      return await this.fileStore.resolve({
        roots: [root],
        path: path === '' ? '.' : path,
        base: root,
        allowRoot: true,
      });
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'forbidden') {
        throw DomainError.forbidden(`Access denied: ${path} is outside the space ${name}`);
      }
      throw err;
    }
  }

  /** The knowledge base's linked folders, oldest first, each with the number of sources it brings. */
  async listLinks(kbId: string): Promise<LinkedDirDto[]> {
    await this.record(kbId);
    const links = await this.repo.listLinks({ kbId });
    return Promise.all(links.map((link) => this.linkDto(link)));
  }

  /** Unlinks a folder: its sources and their chunks go (the folder itself is left alone). */
  async removeLink(kbId: string, linkId: string): Promise<void> {
    const link = await this.linkOf(kbId, linkId);
    await this.repo.deleteLink(link.id);
    const prefix = `${this.linkPrefix(link)}/`;
    for (const s of await this.repo.listSources(kbId)) {
      if (!s.relPath.startsWith(prefix)) continue;
      await this.repo.deleteSource(kbId, s.relPath);
      await this.files.remove(kbId, s.relPath).catch(() => undefined);
    }
    await this.publishStats(kbId);
  }

  /** Reads the linked folder again now (after an error, say) and ingests what changed. */
  async retryLink(kbId: string, linkId: string): Promise<LinkedDirDto> {
    const link = await this.linkOf(kbId, linkId);
    await this.syncLink(link.id);
    return this.linkDto((await this.repo.getLink(link.id)) ?? link);
  }

  /** The links into a space (the watcher's side: which folders a change may concern). */
  linksInSpace(spaceId: string): Promise<LinkRecord[]> {
    return this.repo.listLinks({ spaceId });
  }

  /**
   * Brings a link's sources in step with its folder: new and changed accepted files copied in
   * (an unchanged one, by content hash, is left alone), sources whose file went removed with their
   * chunks, then an ingestion of what is not indexed. A folder that cannot be read marks the link
   * `error` (its sources are kept until it is readable again or unlinked).
   */
  async syncLink(linkId: string): Promise<void> {
    const link = await this.repo.getLink(linkId);
    if (!link) return;
    const prefix = this.linkPrefix(link);
    let folder: GuardedPath;
    try {
      const space = await this.spaces.get(link.spaceId);
      folder = await this.guardedInSpace(space.path, space.name, link.path);
      const info = await this.fileStore.stat(folder);
      if (!info || info.kind !== 'folder') throw new Error(`${link.path || '.'} is not a folder any more`);
    } catch (err) {
      await this.repo.setLinkState(
        link.id,
        `The linked folder cannot be read: ${err instanceof Error ? err.message : String(err)}`,
      );
      return;
    }
    const files: GuardedPath[] = [];
    let truncated = false;
    const walk = async (dir: GuardedPath): Promise<void> => {
      for (const entry of await this.fileStore.readDir(dir)) {
        if (files.length >= MAX_FILES_PER_IMPORT) {
          truncated = true;
          return;
        }
        if (entry.symlink) continue;
        if (entry.kind === 'folder') {
          if (!PRUNED_FOLDERS.has(entry.name)) await walk(childOf(dir, entry.name));
        } else if (entry.kind === 'file' && rejectionReason(entry.name) === null) files.push(childOf(dir, entry.name));
      }
    };
    await walk(folder);
    const existing = new Map(
      (await this.repo.listSources(link.kbId))
        .filter((s) => s.relPath.startsWith(`${prefix}/`))
        .map((s) => [s.relPath, s]),
    );
    const seen = new Set<string>();
    for (const file of files) {
      const inside = file.relativePath.slice(folder.relativePath === '' ? 0 : folder.relativePath.length + 1);
      const relPath = normalizeRelPath(`${prefix}/${inside}`);
      if (relPath === null) continue;
      seen.add(relPath);
      const bytes = await this.fileStore.readFile(file, MAX_SOURCE_BYTES).catch(() => null);
      if (bytes === null || bytes === 'too-large') continue;
      const known = existing.get(relPath);
      if (known && known.contentHash === createHash('sha256').update(bytes).digest('hex')) continue;
      await this.keep(link.kbId, relPath, once(bytes), 'linked');
    }
    if (!truncated) {
      for (const [relPath] of existing) {
        if (seen.has(relPath)) continue;
        await this.repo.deleteSource(link.kbId, relPath);
        await this.files.remove(link.kbId, relPath).catch(() => undefined);
      }
    }
    await this.repo.setLinkState(
      link.id,
      truncated ? `More than ${MAX_FILES_PER_IMPORT} files: the first ${MAX_FILES_PER_IMPORT} are linked` : null,
    );
    await this.ingest(link.kbId);
    await this.publishStats(link.kbId);
  }

  /** The document map: every source with its state and first line (Markdown), as the prompt carries it. */
  async index(kbId: string): Promise<string> {
    const kb = await this.record(kbId);
    return this.documentMap(kb);
  }

  async documentMap(kb: KnowledgeBaseRecord): Promise<string> {
    const sources = await this.repo.listSources(kb.id);
    const firsts = await this.repo.firstLines(kb.id);
    const lines = [`# ${kb.name}`, ''];
    if (kb.description) lines.push(kb.description, '');
    lines.push(`Knowledge base id: ${kb.id}. ${sources.length} document${sources.length === 1 ? '' : 's'}.`, '');
    for (const s of sources) {
      const first = firsts.get(s.id);
      const state = s.state === 'learned' ? '' : ` [${s.state}${s.error ? `: ${s.error}` : ''}]`;
      lines.push(`- **${s.name}** (\`${s.relPath}\`)${state}${first ? ` — ${first}` : ''}`);
    }
    return `${lines.join('\n')}\n`;
  }

  /** The sources that paths read or cited name (a source's path, or a path ending with it, or its name). */
  async resolveSources(kbId: string, readPaths: unknown): Promise<Array<{ name: string; path: string }>> {
    await this.record(kbId);
    if (!Array.isArray(readPaths)) throw DomainError.invalid('readPaths must be a list of paths');
    const sources = await this.repo.listSources(kbId);
    const out = new Map<string, KnowledgeSourceRefDto>();
    for (const raw of readPaths) {
      if (typeof raw !== 'string') continue;
      const path = raw.replace(/\\/g, '/');
      const hit =
        sources.find((s) => s.relPath === path || path.endsWith(`/${s.relPath}`)) ??
        sources.find((s) => s.name === path || path.endsWith(`/${s.name}`));
      if (hit) out.set(hit.id, { name: hit.name, path: hit.relPath });
    }
    return [...out.values()];
  }

  // ---- ingestion ------------------------------------------------------------------------

  /**
   * Queues every source whose content is not in the index yet (answers at once). One job per
   * (source, content hash, batch): a source queued again while its batch runs, by any replica, runs once.
   */
  async ingest(kbId: string): Promise<void> {
    const kb = await this.record(kbId);
    const key = wantedKey(kb);
    const todo = (await this.repo.listSources(kbId)).filter((s) => !isIndexed(s, s.contentHash, key));
    if (todo.length === 0) {
      const status = await this.repo.ingestStatus(kbId);
      if (!status || status.phase !== 'running') {
        const { status: done } = await this.repo.startBatch(kbId, randomUUID(), []);
        await this.bus.publish(KnowledgeChannels.ingestProgress, statusDto(done));
      }
      return;
    }
    // Announced while the batch row is held, as each item's count is: published after the commit,
    // a grown total could follow a later count and show progress going down.
    const { status, added } = await this.repo.startBatch(
      kbId,
      randomUUID(),
      todo.map((s) => s.id),
      (status) => this.bus.publish(KnowledgeChannels.ingestProgress, statusDto(status)),
    );
    const byId = new Map(todo.map((s) => [s.id, s]));
    // One job per source this call added to the batch (startBatch answers each addition to one
    // caller only, so replicas never queue one twice). The job id carries the batch's total after
    // the addition: a source that already finished in this batch (failed, or embedded without
    // vectors) and is added again gets a job of its own rather than the id of its finished job,
    // which the queue would keep as a no-op while the batch waited for it forever.
    for (const id of added) {
      const s = byId.get(id)!;
      await this.queueIngest(kbId, s.id, s.contentHash, status.batchId, `${status.batchId}-${status.total}`);
    }
  }

  private async queueIngest(kbId: string, sourceId: string, hash: string, batchId: string, jobKey: string) {
    await this.queue.add(
      'knowledge.ingest',
      { kbId, sourceId, hash, batchId },
      { jobId: knowledgeIngestJobId(kbId, sourceId, hash, jobKey), attempts: INGEST_ATTEMPTS, backoffMs: 1000 },
    );
  }

  /**
   * Start-up recovery: every source still waiting in a running batch gets a job again, so a batch
   * whose jobs were lost (a server killed mid-ingestion, a job that failed for good before it
   * could count itself) completes instead of staying running. A job still alive elsewhere may
   * run once more: indexing a source replaces its chunks in one transaction and a source counts
   * once in its batch, so nothing doubles.
   */
  async recoverBatches(): Promise<number> {
    let queued = 0;
    const stamp = Date.now().toString(36);
    for (const batch of await this.repo.runningBatches()) {
      for (const sourceId of batch.waiting) {
        const source = await this.repo.getSource(sourceId);
        if (!source) {
          await this.finishInBatch({ kbId: batch.kbId, batchId: batch.batchId, sourceId }, '', null);
          continue;
        }
        await this.queueIngest(batch.kbId, sourceId, source.contentHash, batch.batchId, `${batch.batchId}-r${stamp}`);
        queued++;
      }
    }
    if (queued > 0) this.logger.log({ msg: 'knowledge ingestion resumed after a restart', sources: queued });
    return queued;
  }

  /** `clear-relearn`: every chunk dropped, every source ingested again. */
  async clearRelearn(kbId: string): Promise<true | string> {
    await this.record(kbId);
    const status = await this.repo.ingestStatus(kbId);
    if (status?.phase === 'running' && status.waiting.length > 0) return KnowledgeErrors.learning;
    await this.repo.resetSources(kbId);
    await this.ingest(kbId);
    return true;
  }

  async ingestStatus(kbId: string): Promise<IngestStatusDto> {
    await this.record(kbId);
    const status = await this.repo.ingestStatus(kbId);
    return status ? statusDto(status) : IDLE(kbId);
  }

  /**
   * The `knowledge.ingest` job: extract, chunk, index one source; then count it done in its batch.
   * On its last attempt an error fails the source (with the reason) and counts it, so the batch
   * ends; earlier attempts throw and the queue retries.
   */
  async ingestSource(
    job: { kbId: string; sourceId: string; hash: string; batchId: string },
    lastAttempt = false,
  ): Promise<void> {
    try {
      await this.ingestOnce(job);
    } catch (err) {
      if (!lastAttempt) throw err;
      const message = `Ingestion failed: ${err instanceof Error ? err.message : String(err)}`;
      this.logger.warn({
        msg: 'knowledge source failed for good',
        kbId: job.kbId,
        sourceId: job.sourceId,
        error: message,
      });
      const source = await this.repo.getSource(job.sourceId);
      if (source) await this.repo.indexSource(source.id, job.hash, { state: 'failed', error: message });
      await this.finishInBatch(job, source?.name ?? '', { file: source?.name ?? job.sourceId, message });
    }
  }

  private async ingestOnce(job: { kbId: string; sourceId: string; hash: string; batchId: string }): Promise<void> {
    const source = await this.repo.getSource(job.sourceId);
    const kb = await this.repo.get(job.kbId);
    let error: { file: string; message: string } | null = null;
    if (kb && source && source.contentHash !== job.hash) {
      // Changed since it was queued (while it waited in the batch, so no job was queued for the
      // new content): this job hands over to one for the content it has now.
      await this.queueIngest(job.kbId, source.id, source.contentHash, job.batchId, `${job.batchId}-c${Date.now()}`);
      return;
    }
    if (kb && source && !isIndexed(source, job.hash, wantedKey(kb))) {
      const outcome = await this.extract(source);
      if (outcome.state === 'learned') {
        try {
          const vectors = await this.embed(
            kb,
            outcome.chunks.map((c) => `${source.name}\n${c.heading ?? ''}\n${c.text}`),
          );
          if (vectors) {
            outcome.chunks.forEach((c, i) => (c.embedding = vectors[i] ?? null));
            outcome.embeddingKey = wantedKey(kb);
          }
        } catch (err) {
          // An outage: the chunks are kept keyword-searchable; the next ingest embeds this source.
          const message = err instanceof Error ? err.message : String(err);
          this.logger.warn({
            msg: 'embedding failed; the source is keyword-searchable only',
            kbId: kb.id,
            source: source.name,
            error: message,
          });
          error = {
            file: source.name,
            message: `Embedding failed (${message}); keyword search only until the next ingest`,
          };
        }
      }
      if (!(await this.repo.indexSource(source.id, job.hash, outcome))) {
        // Changed (or removed) while it was read: the new content gets its own job.
        const now = await this.repo.getSource(source.id);
        if (now) {
          await this.queueIngest(job.kbId, now.id, now.contentHash, job.batchId, `${job.batchId}-c${Date.now()}`);
          return;
        }
      }
      if (outcome.state === 'failed') error = { file: source.name, message: outcome.error };
    }
    await this.finishInBatch(job, source?.name ?? '', error);
  }

  /** Counts a source done in its batch; the last one ends the batch (stats sent). */
  private async finishInBatch(
    job: { kbId: string; batchId: string; sourceId: string },
    name: string,
    error: { file: string; message: string } | null,
  ): Promise<void> {
    const status = await this.repo.finishItem(job.kbId, job.batchId, job.sourceId, name, error, (s) =>
      this.bus.publish(KnowledgeChannels.ingestProgress, statusDto(s)),
    );
    if (status && status.phase !== 'running') {
      await this.repo.markIngested(job.kbId);
      await this.publishStats(job.kbId);
    }
  }

  private async extract(source: SourceRecord): Promise<IndexOutcome> {
    try {
      const bytes = await this.files.read(source.kbId, source.relPath, MAX_SOURCE_BYTES);
      if (bytes === null) return { state: 'failed', error: 'The source file is missing' };
      if (bytes === 'too-large') return { state: 'failed', error: KnowledgeErrors.uploadTooLarge };
      // Extraction, chunking and lexemes: off the event loop for large or packed files, within
      // the time budget (the parser's worker is stopped past it); the race is the outer bound.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<{ error: string }>((resolve) => {
        timer = setTimeout(
          () => resolve({ error: `Text extraction took longer than ${PARSE_TIMEOUT_MS / 1000} s` }),
          PARSE_TIMEOUT_MS + 5_000,
        );
      });
      const prepared = await Promise.race([this.parser.prepare(source.name, bytes, PARSE_TIMEOUT_MS), timeout]).finally(
        () => clearTimeout(timer),
      );
      if ('error' in prepared) return { state: 'failed', error: prepared.error };
      if (prepared.chunks.length === 0) return { state: 'no-text' };
      return {
        state: 'learned',
        chunks: prepared.chunks.map((c) => ({ ...c, embedding: null })),
        embeddingKey: null,
      };
    } catch (err) {
      return { state: 'failed', error: `Text extraction failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private async publishStats(kbId: string): Promise<void> {
    await this.bus.publish(KnowledgeChannels.statsUpdated, { kbId, stats: await this.repo.stats(kbId) });
  }

  // ---- search ---------------------------------------------------------------------------

  async search(kbId: string, input: { query?: unknown; topK?: unknown; mode?: unknown }): Promise<SearchHitDto[]> {
    await this.record(kbId);
    return this.searchMany([kbId], input);
  }

  /**
   * Search over several bases (the `kb_search` tool). `keyword`: the tsvector ranking. `hybrid`
   * (the default): the keyword list and, for each embedding model among the bases, the vector list,
   * fused by reciprocal rank. `semantic`: the vector lists only. A base without a usable embedding
   * model answers keyword hits in every mode.
   */
  async searchMany(
    kbIds: string[],
    input: { query?: unknown; topK?: unknown; mode?: unknown },
  ): Promise<SearchHitDto[]> {
    if (typeof input.query !== 'string' || input.query.trim() === '') throw DomainError.invalid('Missing query');
    const topK = input.topK === undefined || input.topK === null ? DEFAULT_TOP_K : Number(input.topK);
    if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K) {
      throw DomainError.invalid(`topK must be an integer from 1 to ${MAX_TOP_K}`);
    }
    if (input.mode !== undefined && !['hybrid', 'keyword', 'semantic'].includes(input.mode as string)) {
      throw DomainError.invalid('mode must be hybrid, keyword or semantic');
    }
    if (kbIds.length === 0) return [];
    const mode = (input.mode as SearchMode | undefined) ?? 'hybrid';
    const tsquery = tsqueryLiteral(input.query);
    const depth = Math.max(topK * RRF_DEPTH, RRF_MIN_CANDIDATES);
    // A hybrid search reads its keyword list while the query is embedded and the vectors are
    // searched (the deeper list: ranked the same, its first topK are the keyword-only answer).
    const [vectorLists, keywordDeep] = await Promise.all([
      mode === 'keyword' ? [] : this.vectorLists(kbIds, input.query, topK),
      mode === 'hybrid' && tsquery !== null ? this.repo.keywordSearch(kbIds, tsquery, depth) : null,
    ]);
    let hits: KeywordHit[];
    if (vectorLists.length === 0) {
      hits =
        tsquery === null
          ? []
          : keywordDeep
            ? keywordDeep.slice(0, topK)
            : await this.repo.keywordSearch(kbIds, tsquery, topK);
    } else {
      const keyword = mode === 'semantic' ? [] : (keywordDeep ?? []);
      hits =
        mode === 'semantic' && vectorLists.length === 1
          ? vectorLists[0]!.slice(0, topK)
          : fuseByRank([keyword, ...vectorLists], topK);
    }
    return hits.map((h) => ({
      chunkId: h.chunkId,
      sourceName: h.sourceName,
      sourcePath: h.sourcePath,
      ...(h.heading ? { heading: h.heading } : {}),
      text: h.text,
      score: h.score,
      kbId: h.kbId,
    }));
  }

  /** The nearest chunks to the query under each embedding model the bases use (empty: no base has a usable one). */
  private async vectorLists(kbIds: string[], query: string, topK: number): Promise<KeywordHit[][]> {
    const groups = new Map<string, KnowledgeBaseRecord[]>();
    for (const kbId of kbIds) {
      const kb = await this.repo.get(kbId);
      const key = kb ? wantedKey(kb) : null;
      if (kb && key !== null) groups.set(key, [...(groups.get(key) ?? []), kb]);
    }
    const lists: KeywordHit[][] = [];
    const depth = Math.max(topK * RRF_DEPTH, RRF_MIN_CANDIDATES);
    for (const bases of groups.values()) {
      let vector: number[] | undefined;
      try {
        vector = (await this.embed(bases[0]!, [query]))?.[0];
      } catch (err) {
        this.logger.warn({
          msg: 'query embedding failed; keyword search only',
          error: err instanceof Error ? err.message : String(err),
        });
      }
      if (!vector) continue;
      lists.push(
        await this.repo.vectorSearch(
          bases.map((b) => b.id),
          vector,
          depth,
        ),
      );
    }
    return lists;
  }

  /**
   * The bases a turn may search: the active ones bound to its space or app, the default one
   * (when `withDefault` and active), and the one its message named (whatever its bindings).
   */
  async forTurn(scope: {
    spaceId: string;
    appId?: string | null;
    kbId?: string | null;
    withDefault?: boolean;
  }): Promise<KnowledgeBaseRecord[]> {
    const found = new Map<string, KnowledgeBaseRecord>();
    const add = (kb: KnowledgeBaseRecord) => {
      if (kb.status === 'active') found.set(kb.id, kb);
    };
    (await this.repo.turnCandidates(scope.spaceId, scope.appId ?? null, scope.withDefault === true)).forEach(add);
    if (scope.kbId) {
      const kb = await this.repo.get(scope.kbId);
      if (kb) found.set(kb.id, kb);
    }
    return [...found.values()];
  }
}
