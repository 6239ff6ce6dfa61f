import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { ArtifactEntry, ArtifactTree, ChildEntry } from '#core/artifacts/artifact.js';
import { ArtifactsService, DEFAULT_LIST_DEPTH } from '#core/artifacts/artifacts.service.js';
import {
  ChildrenBody,
  CreateFileBody,
  CreateFolderBody,
  ListArtifactsQuery,
  MoveBody,
  PathBody,
  RenameBody,
} from './artifacts.dto.js';

type Ok<T> = { success: true; data: T };
const ok = <T>(data: T): Ok<T> => ({ success: true, data });

/**
 * A space's files (spec doc 2, "Space files"). `query` and `reconcile` belong to the
 * file-index context and are served by its own controller.
 */
@Controller('api/spaces/:spaceId/artifacts')
export class SpaceArtifactsController {
  constructor(private readonly artifacts: ArtifactsService) {}

  @Get()
  async list(@Param('spaceId') spaceId: string, @Query() query: ListArtifactsQuery): Promise<Ok<ArtifactEntry[]>> {
    return ok(await this.artifacts.list(spaceId, query.maxDepth ?? DEFAULT_LIST_DEPTH));
  }

  @Delete()
  async trash(@Param('spaceId') spaceId: string, @Body() body: PathBody): Promise<{ success: true }> {
    await this.artifacts.trash(spaceId, body.path);
    return { success: true };
  }

  @Post('children')
  @HttpCode(200)
  async children(@Param('spaceId') spaceId: string, @Body() body: ChildrenBody): Promise<Ok<ChildEntry[]>> {
    return ok(await this.artifacts.children(spaceId, body.dirPath));
  }

  @Post('file')
  @HttpCode(200)
  async createFile(@Param('spaceId') spaceId: string, @Body() body: CreateFileBody): Promise<Ok<{ path: string }>> {
    return ok(await this.artifacts.createFile(spaceId, body));
  }

  @Post('folder')
  @HttpCode(200)
  async createFolder(@Param('spaceId') spaceId: string, @Body() body: CreateFolderBody): Promise<Ok<{ path: string }>> {
    return ok(await this.artifacts.createFolder(spaceId, body));
  }

  @Post('move')
  @HttpCode(200)
  async move(@Param('spaceId') spaceId: string, @Body() body: MoveBody): Promise<Ok<{ path: string }>> {
    return ok(await this.artifacts.move(spaceId, body));
  }

  @Post('rename')
  @HttpCode(200)
  async rename(@Param('spaceId') spaceId: string, @Body() body: RenameBody): Promise<{ success: true }> {
    await this.artifacts.rename(spaceId, body);
    return { success: true };
  }

  @Get('tree')
  async tree(@Param('spaceId') spaceId: string): Promise<Ok<ArtifactTree>> {
    return ok(await this.artifacts.tree(spaceId));
  }
}
