import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { type ArtifactQueryResult, ArtifactSearchService } from '#core/artifacts/artifact-search.service.js';
import { ArtifactWatchService } from '#core/artifacts/artifact-watch.service.js';
import { ApiData, ApiDone } from '../openapi/api-data.js';
import { ARTIFACT_QUERY } from '../openapi/response-schemas.js';
import { Assistant } from '../assistant-api/assistant.decorator.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ArtifactSearchQuery } from './artifact-search.dto.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { SpaceIdParams } from '../common/path-params.js';

/** File search and reconcile (docs/api.md, "Workspaces and files"). */
@ApiTags('Workspaces and files')
@Controller('api/spaces/:spaceId/artifacts')
export class ArtifactSearchController {
  constructor(
    private readonly search: ArtifactSearchService,
    private readonly watch: ArtifactWatchService,
  ) {}

  @Get('query')
  @ApiOperation({
    summary: 'Search file names and paths in a space',
    description:
      'Only the best matches. `indexing` true: the space is still being indexed, so a repeat may find more; `truncated` true: the space has more paths than the index holds.',
  })
  @Assistant()
  @ApiData(ARTIFACT_QUERY)
  async query(
    @Param() { spaceId }: SpaceIdParams,
    @Query() query: ArtifactSearchQuery,
  ): Promise<SuccessBody<ArtifactQueryResult>> {
    return { success: true, data: await this.search.query(spaceId, query.q, query.limit) };
  }

  /** Rebuilds this replica's index from disk, then tells clients and the other replicas to resync. */
  @Post('reconcile')
  @ApiOperation({
    summary: "Resync a space's file list with the disk",
    description:
      "Rebuilds this replica's file index of the space from disk and waits for it, then emits `artifact:changed-batch` with `resync: true` (no changes) on the WebSocket so clients and the other replicas read the space again, and restarts the space's file watcher. 404 `Space not found`.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiDone()
  async reconcile(@Param() { spaceId }: SpaceIdParams): Promise<{ success: true }> {
    await this.search.reconcile(spaceId);
    await this.watch.requestResync(spaceId);
    return { success: true };
  }
}
