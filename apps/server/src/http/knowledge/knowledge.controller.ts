import { once } from 'node:events';
import { setTimeout } from 'node:timers/promises';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { SuccessBody } from '#contracts/errors.js';
import type {
  AddFilesResultDto,
  IngestStatusDto,
  KnowledgeBaseDto,
  KnowledgeSourceRefDto,
  LinkedDirDto,
  RawFileDto,
  SearchHitDto,
} from '#contracts/knowledge.js';
import { DomainError } from '#core/errors/domain-error.js';
import { MAX_SOURCE_BYTES } from '#core/knowledge/formats.js';
import { KnowledgeErrors, KnowledgeService } from '#core/knowledge/knowledge.service.js';
import { ok } from '../common/envelope.js';
import { ApiData } from '../openapi/api-data.js';
import { anyValue, arr, bool, nullable, str } from '../openapi/schema.js';
import { ApiBody, ApiConsumes, ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import {
  AddFilesDto,
  AppBindingDto,
  CreateKnowledgeBaseDto,
  LinkDirDto,
  RemoveRawDto,
  ResolveSourcesDto,
  SearchDto,
  SetDefaultDto,
  SpaceBindingDto,
  UpdateKnowledgeBaseDto,
  UploadQuery,
} from './knowledge.dto.js';
import {
  ADD_FILES_RESULT,
  INGEST_STATUS,
  KNOWLEDGE_BASE,
  LINKED_DIR,
  RAW_FILE,
  SEARCH_HIT,
  SOURCE_REF,
} from './knowledge.schemas.js';
import { KbIdParams, KbLinkParams, SpaceIdParams } from '../common/path-params.js';

/** How long a refused upload's unread rest is drained before the connection closes. */
const DRAIN_MS = 2_000;

/**
 * Knowledge bases (docs/api/knowledge.md), at the original's paths (`/api/tlon`), plus search.
 * Ingestion answers at once; progress comes over WebSocket (`tlon:ingest-progress`, `tlon:stats-updated`).
 */
@ApiTags('Knowledge bases')
@Controller('api/tlon')
export class KnowledgeController {
  constructor(private readonly knowledge: KnowledgeService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create a knowledge base',
    description:
      'Body `{name, icon?, description?}`; answers the new, empty knowledge base (`status: "active"`, `searchMode: "keyword"`). 400 `Missing name` when the name is absent or blank.',
  })
  @ApiData(KNOWLEDGE_BASE)
  async create(@Body() body: CreateKnowledgeBaseDto): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.create(body));
  }

  @Get()
  @ApiOperation({
    summary: 'List knowledge bases',
    description:
      'Every knowledge base with its bindings (`spaceIds`, `appIds`), `isDefault`, stats, embedding and search mode.',
  })
  @ApiData(arr(KNOWLEDGE_BASE))
  async list(): Promise<SuccessBody<KnowledgeBaseDto[]>> {
    return ok(await this.knowledge.list());
  }

  @Get('for-space/:spaceId')
  @ApiOperation({
    summary: 'List the knowledge bases bound to a space',
    description:
      'Those bound with `bind-space` to this space (`[]` when none); the default knowledge base is not added unless it is bound.',
  })
  @ApiData(arr(KNOWLEDGE_BASE))
  async forSpace(@Param() { spaceId }: SpaceIdParams): Promise<SuccessBody<KnowledgeBaseDto[]>> {
    return ok(await this.knowledge.forSpace(spaceId));
  }

  @Post('set-default')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Make a knowledge base the default (null: none)',
    description:
      "At most one knowledge base is the default; the assistant's chat searches it in every space. `{kbId: null}` clears the default and answers null. 400 `kbId must be an id or null`; 404 `Knowledge base not found`.",
  })
  @ApiData(nullable(KNOWLEDGE_BASE), 404)
  async setDefault(@Body() body: SetDefaultDto): Promise<SuccessBody<KnowledgeBaseDto | null>> {
    const kbId = body.kbId;
    if (kbId !== null && (typeof kbId !== 'string' || kbId === ''))
      throw DomainError.invalid('kbId must be an id or null');
    return ok(await this.knowledge.setDefault(kbId));
  }

  @Get(':kbId')
  @ApiOperation({
    summary: 'Get a knowledge base (with its stats and search mode)',
    description:
      '`searchMode` is `hybrid` when its embedding model can be used, else `keyword`, with `searchNote` saying why an embedding set cannot be used. 404 `Knowledge base not found`.',
  })
  @ApiData(KNOWLEDGE_BASE)
  async get(@Param() { kbId }: KbIdParams): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.get(kbId));
  }

  @Put(':kbId')
  @ApiOperation({
    summary: 'Update a knowledge base',
    description:
      'Body `{name?, icon?, description?, status?, embedding?}`; only `active` knowledge bases reach turns. `embedding: {modelSourceId, model, dimensions}` (an OpenAI-compatible model source, 1–8192 dimensions) enables hybrid search and starts an ingest that embeds the sources; `null` removes it. 400 naming a bad field; 404 `Knowledge base not found`.',
  })
  @ApiData(KNOWLEDGE_BASE)
  async update(
    @Param() { kbId }: KbIdParams,
    @Body() body: UpdateKnowledgeBaseDto,
  ): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.update(kbId, body));
  }

  @Delete(':kbId')
  @ApiOperation({
    summary: 'Delete a knowledge base with its sources and index (irreversible)',
    description:
      'Removes its bindings, chunks and stored source files; answers `true`. 404 `Knowledge base not found`.',
  })
  @ApiData(bool())
  async delete(@Param() { kbId }: KbIdParams): Promise<SuccessBody<true>> {
    await this.knowledge.delete(kbId);
    return ok(true);
  }

  @Post(':kbId/bind-space')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Bind a knowledge base to a space',
    description:
      'Turns in that space get `kb_search` over it (while it is `active`); answers the knowledge base. 400 `Missing spaceId`; 404 for an unknown knowledge base (`Knowledge base not found`) or space.',
  })
  @ApiData(KNOWLEDGE_BASE)
  async bindSpace(
    @Param() { kbId }: KbIdParams,
    @Body() body: SpaceBindingDto,
  ): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.bindSpace(kbId, body.spaceId, true));
  }

  @Post(':kbId/unbind-space')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Unbind a knowledge base from a space',
    description:
      'Answers the knowledge base; unbinding a space that was not bound changes nothing. 400 `Missing spaceId`; 404 `Knowledge base not found`.',
  })
  @ApiData(KNOWLEDGE_BASE)
  async unbindSpace(
    @Param() { kbId }: KbIdParams,
    @Body() body: SpaceBindingDto,
  ): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.bindSpace(kbId, body.spaceId, false));
  }

  @Post(':kbId/bind-app')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Bind a knowledge base to a digital human',
    description:
      "The digital human's chat and runs get `kb_search` over it (while it is `active`); answers the knowledge base. 400 `Missing appId`; 404 `Knowledge base not found`.",
  })
  @ApiData(KNOWLEDGE_BASE)
  async bindApp(@Param() { kbId }: KbIdParams, @Body() body: AppBindingDto): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.bindApp(kbId, body.appId, true));
  }

  @Post(':kbId/unbind-app')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Unbind a knowledge base from a digital human',
    description:
      'Answers the knowledge base; unbinding an app that was not bound changes nothing. 400 `Missing appId`; 404 `Knowledge base not found`.',
  })
  @ApiData(KNOWLEDGE_BASE)
  async unbindApp(@Param() { kbId }: KbIdParams, @Body() body: AppBindingDto): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.bindApp(kbId, body.appId, false));
  }

  @Post(':kbId/files')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Copy files into a knowledge base',
    description:
      'With `spaceId`: paths relative to that workspace (or absolute inside it); without: absolute server paths under ' +
      'SVC_KB_IMPORT_ROOTS. Anything outside answers 403 naming the path. Folders bring their accepted files; ' +
      'unsupported types are listed in `rejected`. The added files are ingested at once.',
  })
  @ApiData(ADD_FILES_RESULT, 403)
  async addFiles(@Param() { kbId }: KbIdParams, @Body() body: AddFilesDto): Promise<SuccessBody<AddFilesResultDto>> {
    return ok(await this.knowledge.addFiles(kbId, body));
  }

  @Post(':kbId/linked-dirs')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Link a folder of a workspace',
    description:
      "Body `{spaceId, path, label?}` with `path` relative to the space's folder ('' or '.' for the whole space). Its accepted files become sources (`source: \"linked\"`, listed by `raw` under the link's `prefix`) and are ingested; afterwards, the watcher's changes under it re-ingest changed files and drop removed ones with their chunks. Answers the link. 400 naming the field (`Missing spaceId`, a path that is not a folder); 403 for a path outside the space; 404 for an unknown space or knowledge base.",
  })
  @ApiData(LINKED_DIR, 403)
  async linkDir(@Param() { kbId }: KbIdParams, @Body() body: LinkDirDto): Promise<SuccessBody<LinkedDirDto>> {
    return ok(await this.knowledge.addLink(kbId, body));
  }

  @Get(':kbId/linked-dirs')
  @ApiOperation({
    summary: 'List linked folders',
    description:
      'The links of the knowledge base (as `linked-dirs` answers one: state, error, file count, prefix). 404 `Knowledge base not found`.',
  })
  @ApiData(arr(LINKED_DIR))
  async listLinkedDirs(@Param() { kbId }: KbIdParams): Promise<SuccessBody<LinkedDirDto[]>> {
    return ok(await this.knowledge.listLinks(kbId));
  }

  @Delete(':kbId/linked-dirs/:linkId')
  @ApiOperation({
    summary: 'Unlink a folder',
    description:
      'Removes the link and the sources it brought, with their chunks (the folder itself is left alone); answers `true` and emits `tlon:stats-updated`. 404 `Linked folder not found` or `Knowledge base not found`.',
  })
  @ApiData(bool())
  async unlinkDir(@Param() { kbId, linkId }: KbLinkParams): Promise<SuccessBody<true>> {
    await this.knowledge.removeLink(kbId, linkId);
    return ok(true);
  }

  @Post(':kbId/linked-dirs/:linkId/retry')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Read a linked folder again',
    description:
      'Reads the folder now (after an `error`, or to catch up without the watcher) and ingests what changed; answers the link with its state. 404 `Linked folder not found` or `Knowledge base not found`.',
  })
  @ApiData(LINKED_DIR)
  async retryLinkDir(@Param() { kbId, linkId }: KbLinkParams): Promise<SuccessBody<LinkedDirDto>> {
    return ok(await this.knowledge.retryLink(kbId, linkId));
  }

  @Put(':kbId/upload')
  @ApiOperation({
    summary: 'Upload a file into a knowledge base (raw bytes, at most 50 MB)',
    description:
      '`?name=<file name>` with the raw bytes (any content type but JSON); the same name replaces the source, which is ingested at once. Answers the source. 400 for a missing name, a JSON body or an unsupported type; 413 `File too large (the upload limit is 50 MB)`; 404 `Knowledge base not found`.',
  })
  @ApiConsumes('application/octet-stream')
  @ApiBody({ schema: { type: 'string', format: 'binary', description: 'The raw bytes of the file (at most 50 MB)' } })
  @ApiData(RAW_FILE)
  async upload(
    @Param() { kbId }: KbIdParams,
    @Query() query: UploadQuery,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<SuccessBody<RawFileDto>> {
    if (req.readableEnded && Number(req.headers['content-length'] ?? 0) > 0) {
      throw DomainError.invalid('Send the file as raw bytes (Content-Type application/octet-stream), not JSON');
    }
    if (Number(req.headers['content-length'] ?? 0) > MAX_SOURCE_BYTES) {
      res.setHeader('Connection', 'close');
      throw new DomainError('too_large', KnowledgeErrors.uploadTooLarge);
    }
    try {
      return ok(await this.knowledge.upload(kbId, query.name, req.iterator({ destroyOnReturn: false })));
    } catch (err) {
      if (!req.readableEnded && !req.destroyed) {
        res.setHeader('Connection', 'close');
        req.resume();
        await Promise.race([once(req, 'end'), once(req, 'close'), setTimeout(DRAIN_MS)]).catch(() => undefined);
      }
      throw err;
    }
  }

  @Get(':kbId/raw')
  @ApiOperation({
    summary: "List a knowledge base's sources with their state",
    description:
      '`[{name, path, size, learned, state, error?, source: "raw"}]`, `state` being `pending`, `learned`, `no-text` or `failed` (with `error`). 404 `Knowledge base not found`.',
  })
  @ApiData(arr(RAW_FILE))
  async raw(@Param() { kbId }: KbIdParams): Promise<SuccessBody<RawFileDto[]>> {
    return ok(await this.knowledge.raw(kbId));
  }

  @Post(':kbId/remove-raw')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Remove one source with its chunks (irreversible)',
    description:
      "Body `{relativePath}` (the source's `path`); deletes its file and chunks, answers `true` and emits `tlon:stats-updated`. 400 `Missing relativePath`; 404 `Source not found` or `Knowledge base not found`.",
  })
  @ApiData(bool())
  async removeRaw(@Param() { kbId }: KbIdParams, @Body() body: RemoveRawDto): Promise<SuccessBody<true>> {
    await this.knowledge.removeRaw(kbId, body.relativePath);
    return ok(true);
  }

  @Get(':kbId/index')
  @ApiOperation({
    summary: "The knowledge base's document map (Markdown)",
    description:
      "The map the system prompt carries: each document's name, path, state and first line. 404 `Knowledge base not found`.",
  })
  @ApiData(str('Markdown'))
  async index(@Param() { kbId }: KbIdParams): Promise<SuccessBody<string>> {
    return ok(await this.knowledge.index(kbId));
  }

  @Post(':kbId/resolve-sources')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Map paths the assistant read or cited back to source documents',
    description:
      'Body `{readPaths: [paths]}`; answers `[{name, path}]` for the paths that name sources of this knowledge base. 400 `readPaths must be a list of paths`; 404 `Knowledge base not found`.',
  })
  @ApiData(arr(SOURCE_REF))
  async resolveSources(
    @Param() { kbId }: KbIdParams,
    @Body() body: ResolveSourcesDto,
  ): Promise<SuccessBody<KnowledgeSourceRefDto[]>> {
    return ok(await this.knowledge.resolveSources(kbId, body.readPaths));
  }

  @Post(':kbId/ingest')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Ingest the sources not yet in the index (answers at once)',
    description:
      'Answers `true` and queues one job per source that is new, changed, failed before or lacks vectors of the current embedding model; the same work queued twice runs once. Progress goes out as `tlon:ingest-progress`, and `tlon:stats-updated` follows the batch. 404 `Knowledge base not found`.',
  })
  @ApiData(bool())
  async ingest(@Param() { kbId }: KbIdParams): Promise<SuccessBody<true>> {
    await this.knowledge.ingest(kbId);
    return ok(true);
  }

  @Post(':kbId/clear-relearn')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Drop the index and ingest every source again',
    description:
      'Answers `true` at once and re-ingests every source (progress as `tlon:ingest-progress`), or the text `Learning is already in progress` (nothing changed) while a batch runs. 404 `Knowledge base not found`.',
  })
  @ApiData(anyValue('true, or the text "Learning is already in progress"'))
  async clearRelearn(@Param() { kbId }: KbIdParams): Promise<SuccessBody<true | string>> {
    return ok(await this.knowledge.clearRelearn(kbId));
  }

  @Get(':kbId/ingest-status')
  @ApiOperation({
    summary: "A knowledge base's ingestion progress",
    description:
      '`{kbId, total, completed, current?, phase: "idle"|"running"|"done"|"error", errors: [{file, message}]}`, the same object as the `tlon:ingest-progress` event. 404 `Knowledge base not found`.',
  })
  @ApiData(INGEST_STATUS)
  async ingestStatus(@Param() { kbId }: KbIdParams): Promise<SuccessBody<IngestStatusDto>> {
    return ok(await this.knowledge.ingestStatus(kbId));
  }

  @Post(':kbId/search')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Search a knowledge base (chunks with citations)',
    description:
      'Body `{query, topK? (8, 1–50), mode?: "hybrid"|"keyword"|"semantic"}`; answers `[{chunkId, sourceName, sourcePath, heading?, text, score, kbId}]` best first (`chunkId` is the citation id). `hybrid` (default) fuses keyword and vector ranks; without a usable embedding model every mode answers keyword hits. 400 `Missing query`, or naming a bad `topK`/`mode`; 404 `Knowledge base not found`.',
  })
  @ApiData(arr(SEARCH_HIT))
  async search(@Param() { kbId }: KbIdParams, @Body() body: SearchDto): Promise<SuccessBody<SearchHitDto[]>> {
    return ok(await this.knowledge.search(kbId, body));
  }
}
