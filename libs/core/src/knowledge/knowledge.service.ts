import { randomUUID } from 'node:crypto';
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
import { SpacesService } from '../spaces/spaces.service.js';
import { chunkText } from './chunking.js';
import { MAX_FILES_PER_IMPORT, MAX_SOURCE_BYTES, PRUNED_FOLDERS, rejectionReason } from './formats.js';
import {
  DocumentParser,
  type IndexOutcome,
  type IngestRecord,
  KnowledgeFiles,
  type KnowledgeBaseRecord,
  KnowledgeRepository,
  type SourceRecord,
} from './knowledge.ports.js';
import { tsqueryLiteral, tsvectorLiteral } from './lexemes.js';

export const KnowledgeErrors = {
  notFound: 'Knowledge base not found',
  missingSpaceId: 'Missing spaceId',
  missingAppId: 'Missing appId',
  missingName: 'Missing name',
  sourceNotFound: 'Source not found',
  uploadTooLarge: `File too large (the upload limit is ${MAX_SOURCE_BYTES / 1024 / 1024} MB)`,
  learning: 'Learning is already in progress',
} as const;

/** Search: default and most hits. */
export const DEFAULT_TOP_K = 8;
export const MAX_TOP_K = 50;
/** Longest a parser may work on one file before the source fails. */
export const PARSE_TIMEOUT_MS = 60_000;

export type SearchMode = 'hybrid' | 'keyword' | 'semantic';

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

/** Whether a source's content `hash` is in the index already (learned, or found to hold no text); a failed one is tried again. */
function isIndexed(s: SourceRecord, hash: string): boolean {
  return (s.state === 'learned' || s.state === 'no-text') && s.indexedHash === hash;
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
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'kbImportRoots'>,
  ) {}

  /** Says at start how knowledge bases search here (docs/api/knowledge.md, "Search"). */
  onApplicationBootstrap(): void {
    this.logger.log('knowledge bases: keyword search (tsvector + GIN); vector search is not available in this version');
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
      searchMode: 'keyword',
      ...(kb.embedding !== null
        ? { searchNote: 'Vector search is not available on this server yet: search is keyword-only' }
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
    if (input.embedding !== undefined) changes.embedding = (input.embedding as KnowledgeEmbeddingDto | null) ?? null;
    const kb = await this.repo.update(kbId, changes);
    if (!kb) throw DomainError.notFound(KnowledgeErrors.notFound, ErrorCodes.KNOWLEDGE_BASE_NOT_FOUND);
    return this.dto(kb);
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

  private async keep(kbId: string, relPath: string, chunks: AsyncIterable<Uint8Array>): Promise<SourceRecord> {
    const written = await this.files.write(kbId, relPath, chunks, MAX_SOURCE_BYTES);
    if (written === 'too-large') throw new DomainError('too_large', KnowledgeErrors.uploadTooLarge);
    return this.repo.upsertSource({
      kbId,
      relPath,
      name: basename(relPath),
      origin: 'raw',
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
    await this.record(kbId);
    const todo = (await this.repo.listSources(kbId)).filter((s) => !isIndexed(s, s.contentHash));
    if (todo.length === 0) {
      const status = await this.repo.ingestStatus(kbId);
      if (!status || status.phase !== 'running') {
        const done = await this.repo.startBatch(kbId, randomUUID(), []);
        await this.bus.publish(KnowledgeChannels.ingestProgress, statusDto(done));
      }
      return;
    }
    const status = await this.repo.startBatch(
      kbId,
      randomUUID(),
      todo.map((s) => s.id),
    );
    await this.bus.publish(KnowledgeChannels.ingestProgress, statusDto(status));
    for (const s of todo) {
      await this.queue.add(
        'knowledge.ingest',
        { kbId, sourceId: s.id, hash: s.contentHash, batchId: status.batchId },
        { jobId: knowledgeIngestJobId(kbId, s.id, s.contentHash, status.batchId), attempts: 3, backoffMs: 1000 },
      );
    }
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

  /** The `knowledge.ingest` job: extract, chunk, index one source; then count it done in its batch. */
  async ingestSource(job: { kbId: string; sourceId: string; hash: string; batchId: string }): Promise<void> {
    const source = await this.repo.getSource(job.sourceId);
    let error: { file: string; message: string } | null = null;
    if (source && source.contentHash === job.hash && !isIndexed(source, job.hash)) {
      const outcome = await this.extract(source);
      await this.repo.indexSource(source.id, job.hash, outcome);
      if (outcome.state === 'failed') error = { file: source.name, message: outcome.error };
    }
    const status = await this.repo.finishItem(job.kbId, job.batchId, job.sourceId, source?.name ?? '', error, (s) =>
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
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<{ error: string }>((resolve) => {
        timer = setTimeout(
          () => resolve({ error: `Text extraction took longer than ${PARSE_TIMEOUT_MS / 1000} s` }),
          PARSE_TIMEOUT_MS,
        );
      });
      const extracted = await Promise.race([this.parser.extract(source.name, bytes), timeout]).finally(() =>
        clearTimeout(timer),
      );
      if ('error' in extracted) return { state: 'failed', error: extracted.error };
      const chunks = chunkText(extracted.text);
      if (chunks.length === 0) return { state: 'no-text' };
      return {
        state: 'learned',
        chunks: chunks.map((c) => ({
          heading: c.heading ?? null,
          text: c.text,
          tsv: tsvectorLiteral(`${source.name}\n${c.heading ?? ''}\n${c.text}`),
        })),
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

  /** Search over several bases (the `kb_search` tool). Every mode is keyword until vectors exist. */
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
    const tsquery = tsqueryLiteral(input.query);
    if (tsquery === null || kbIds.length === 0) return [];
    const hits = await this.repo.keywordSearch(kbIds, tsquery, topK);
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
    (await this.repo.boundTo('space', scope.spaceId)).forEach(add);
    if (scope.appId) (await this.repo.boundTo('app', scope.appId)).forEach(add);
    if (scope.withDefault) (await this.repo.list()).filter((kb) => kb.isDefault).forEach(add);
    if (scope.kbId) {
      const kb = await this.repo.get(scope.kbId);
      if (kb) found.set(kb.id, kb);
    }
    return [...found.values()];
  }
}
