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
  RAW_FILE,
  SEARCH_HIT,
  SOURCE_REF,
} from './knowledge.schemas.js';

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
  @ApiOperation({ summary: 'Create a knowledge base' })
  @ApiData(KNOWLEDGE_BASE)
  async create(@Body() body: CreateKnowledgeBaseDto): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.create(body));
  }

  @Get()
  @ApiOperation({ summary: 'List knowledge bases' })
  @ApiData(arr(KNOWLEDGE_BASE))
  async list(): Promise<SuccessBody<KnowledgeBaseDto[]>> {
    return ok(await this.knowledge.list());
  }

  @Get('for-space/:spaceId')
  @ApiOperation({ summary: 'List the knowledge bases bound to a space' })
  @ApiData(arr(KNOWLEDGE_BASE))
  async forSpace(@Param('spaceId') spaceId: string): Promise<SuccessBody<KnowledgeBaseDto[]>> {
    return ok(await this.knowledge.forSpace(spaceId));
  }

  @Post('set-default')
  @HttpCode(200)
  @ApiOperation({ summary: 'Make a knowledge base the default (null: none)' })
  @ApiData(nullable(KNOWLEDGE_BASE), 404)
  async setDefault(@Body() body: SetDefaultDto): Promise<SuccessBody<KnowledgeBaseDto | null>> {
    const kbId = body.kbId;
    if (kbId !== null && (typeof kbId !== 'string' || kbId === ''))
      throw DomainError.invalid('kbId must be an id or null');
    return ok(await this.knowledge.setDefault(kbId));
  }

  @Get(':kbId')
  @ApiOperation({ summary: 'Get a knowledge base (with its stats and search mode)' })
  @ApiData(KNOWLEDGE_BASE)
  async get(@Param('kbId') kbId: string): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.get(kbId));
  }

  @Put(':kbId')
  @ApiOperation({ summary: 'Update a knowledge base' })
  @ApiData(KNOWLEDGE_BASE)
  async update(
    @Param('kbId') kbId: string,
    @Body() body: UpdateKnowledgeBaseDto,
  ): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.update(kbId, body));
  }

  @Delete(':kbId')
  @ApiOperation({ summary: 'Delete a knowledge base with its sources and index (irreversible)' })
  @ApiData(bool())
  async delete(@Param('kbId') kbId: string): Promise<SuccessBody<true>> {
    await this.knowledge.delete(kbId);
    return ok(true);
  }

  @Post(':kbId/bind-space')
  @HttpCode(200)
  @ApiOperation({ summary: 'Bind a knowledge base to a space' })
  @ApiData(KNOWLEDGE_BASE)
  async bindSpace(@Param('kbId') kbId: string, @Body() body: SpaceBindingDto): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.bindSpace(kbId, body.spaceId, true));
  }

  @Post(':kbId/unbind-space')
  @HttpCode(200)
  @ApiOperation({ summary: 'Unbind a knowledge base from a space' })
  @ApiData(KNOWLEDGE_BASE)
  async unbindSpace(
    @Param('kbId') kbId: string,
    @Body() body: SpaceBindingDto,
  ): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.bindSpace(kbId, body.spaceId, false));
  }

  @Post(':kbId/bind-app')
  @HttpCode(200)
  @ApiOperation({ summary: 'Bind a knowledge base to a digital human' })
  @ApiData(KNOWLEDGE_BASE)
  async bindApp(@Param('kbId') kbId: string, @Body() body: AppBindingDto): Promise<SuccessBody<KnowledgeBaseDto>> {
    return ok(await this.knowledge.bindApp(kbId, body.appId, true));
  }

  @Post(':kbId/unbind-app')
  @HttpCode(200)
  @ApiOperation({ summary: 'Unbind a knowledge base from a digital human' })
  @ApiData(KNOWLEDGE_BASE)
  async unbindApp(@Param('kbId') kbId: string, @Body() body: AppBindingDto): Promise<SuccessBody<KnowledgeBaseDto>> {
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
  async addFiles(@Param('kbId') kbId: string, @Body() body: AddFilesDto): Promise<SuccessBody<AddFilesResultDto>> {
    return ok(await this.knowledge.addFiles(kbId, body));
  }

  @Put(':kbId/upload')
  @ApiOperation({ summary: 'Upload a file into a knowledge base (raw bytes, at most 50 MB)' })
  @ApiConsumes('application/octet-stream')
  @ApiBody({ schema: { type: 'string', format: 'binary', description: 'The raw bytes of the file (at most 50 MB)' } })
  @ApiData(RAW_FILE)
  async upload(
    @Param('kbId') kbId: string,
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
  @ApiOperation({ summary: "List a knowledge base's sources with their state" })
  @ApiData(arr(RAW_FILE))
  async raw(@Param('kbId') kbId: string): Promise<SuccessBody<RawFileDto[]>> {
    return ok(await this.knowledge.raw(kbId));
  }

  @Post(':kbId/remove-raw')
  @HttpCode(200)
  @ApiOperation({ summary: 'Remove one source with its chunks (irreversible)' })
  @ApiData(bool())
  async removeRaw(@Param('kbId') kbId: string, @Body() body: RemoveRawDto): Promise<SuccessBody<true>> {
    await this.knowledge.removeRaw(kbId, body.relativePath);
    return ok(true);
  }

  @Get(':kbId/index')
  @ApiOperation({ summary: "The knowledge base's document map (Markdown)" })
  @ApiData(str('Markdown'))
  async index(@Param('kbId') kbId: string): Promise<SuccessBody<string>> {
    return ok(await this.knowledge.index(kbId));
  }

  @Post(':kbId/resolve-sources')
  @HttpCode(200)
  @ApiOperation({ summary: 'Map paths the assistant read or cited back to source documents' })
  @ApiData(arr(SOURCE_REF))
  async resolveSources(
    @Param('kbId') kbId: string,
    @Body() body: ResolveSourcesDto,
  ): Promise<SuccessBody<KnowledgeSourceRefDto[]>> {
    return ok(await this.knowledge.resolveSources(kbId, body.readPaths));
  }

  @Post(':kbId/ingest')
  @HttpCode(200)
  @ApiOperation({ summary: 'Ingest the sources not yet in the index (answers at once)' })
  @ApiData(bool())
  async ingest(@Param('kbId') kbId: string): Promise<SuccessBody<true>> {
    await this.knowledge.ingest(kbId);
    return ok(true);
  }

  @Post(':kbId/clear-relearn')
  @HttpCode(200)
  @ApiOperation({ summary: 'Drop the index and ingest every source again' })
  @ApiData(anyValue('true, or the text "Learning is already in progress"'))
  async clearRelearn(@Param('kbId') kbId: string): Promise<SuccessBody<true | string>> {
    return ok(await this.knowledge.clearRelearn(kbId));
  }

  @Get(':kbId/ingest-status')
  @ApiOperation({ summary: "A knowledge base's ingestion progress" })
  @ApiData(INGEST_STATUS)
  async ingestStatus(@Param('kbId') kbId: string): Promise<SuccessBody<IngestStatusDto>> {
    return ok(await this.knowledge.ingestStatus(kbId));
  }

  @Post(':kbId/search')
  @HttpCode(200)
  @ApiOperation({ summary: 'Search a knowledge base (chunks with citations)' })
  @ApiData(arr(SEARCH_HIT))
  async search(@Param('kbId') kbId: string, @Body() body: SearchDto): Promise<SuccessBody<SearchHitDto[]>> {
    return ok(await this.knowledge.search(kbId, body));
  }
}
