import { once } from 'node:events';
import { setTimeout } from 'node:timers/promises';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes } from '../openapi/swagger-decorators.js';
import type { Request, Response } from 'express';
import type { ArtifactEntry, ArtifactTree, ChildEntry } from '#core/artifacts/artifact.js';
import {
  ArtifactErrors,
  ArtifactsService,
  DEFAULT_LIST_DEPTH,
  MAX_UPLOAD_BYTES,
} from '#core/artifacts/artifacts.service.js';
import { DomainError } from '#core/errors/domain-error.js';
import {
  ChildrenBody,
  CreateFileBody,
  CreateFolderBody,
  ListArtifactsQuery,
  MoveBody,
  PathBody,
  PathQuery,
  RenameBody,
} from './artifacts.dto.js';
import { ApiData, ApiDone } from '../openapi/api-data.js';
import { ARTIFACT_ENTRY, ARTIFACT_TREE, CHILD_ENTRY, PATH_RESULT } from '../openapi/response-schemas.js';
import { arr, int, obj, str } from '../openapi/schema.js';
import { Assistant } from '../assistant-api/assistant.decorator.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ok } from '../common/envelope.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { SpaceIdParams } from '../common/path-params.js';

/** How long a refused upload's remaining bytes are read (and discarded) before the answer. */
const DRAIN_MS = 10_000;

/**
 * A space's files (docs/api.md, "Workspaces and files"). `query` and `reconcile` belong to the
 * file-index context and are served by its own controller.
 */
@ApiTags('Workspaces and files')
@Controller('api/spaces/:spaceId/artifacts')
export class SpaceArtifactsController {
  constructor(private readonly artifacts: ArtifactsService) {}

  @Get()
  @ApiOperation({
    summary: "List a space's files",
    description:
      "Answers the entries of the space's folder, depth first, down to `maxDepth` levels (default 2; 1: the root's own entries; 0: none); symbolic links to folders are not followed and the reserved `.svc` folder is left out. 400 `maxDepth must be a non-negative integer`; 404 `Space not found`.",
  })
  @Assistant()
  @ApiData(arr(ARTIFACT_ENTRY), 403)
  async list(
    @Param() { spaceId }: SpaceIdParams,
    @Query() query: ListArtifactsQuery,
  ): Promise<SuccessBody<ArtifactEntry[]>> {
    return ok(await this.artifacts.list(spaceId, query.maxDepth ?? DEFAULT_LIST_DEPTH));
  }

  @Delete()
  @ApiOperation({
    summary: 'Move a file or folder to the trash',
    description:
      "Moves the file or folder at `path` (absolute, or relative to the space's folder) to the trash of the data folder. 400 `Missing file path`; 403 `Access denied` outside the space's folder or inside the reserved `.svc` folder; 404 `File not found`.",
  })
  @Assistant()
  @ApiDone(403)
  async trash(@Param() { spaceId }: SpaceIdParams, @Body() body: PathBody): Promise<{ success: true }> {
    await this.artifacts.trash(spaceId, body.path);
    return { success: true };
  }

  @Post('children')
  @ApiOperation({
    summary: 'List the entries of a folder in a space',
    description:
      "Answers the entries of the folder `dirPath` (absolute, or relative to the space's folder), sorted folders first; folders carry `childrenLoaded: false`. 400 `dirPath is required`; 403 outside the space's folder or inside `.svc`; 404 `Folder not found`.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(arr(CHILD_ENTRY), 403)
  async children(@Param() { spaceId }: SpaceIdParams, @Body() body: ChildrenBody): Promise<SuccessBody<ChildEntry[]>> {
    return ok(await this.artifacts.children(spaceId, body.dirPath));
  }

  @Post('file')
  @ApiOperation({
    summary: 'Create or overwrite a file in a space',
    description:
      "Writes `content` (default empty) to a file `name` in `parentPath` (default the space's folder), replacing an existing file, and answers its absolute `path`. 400 for a bad name; 403 outside the space's folder or inside `.svc`; 409 `A folder already exists at that path`.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(PATH_RESULT, 403, 409)
  async createFile(
    @Param() { spaceId }: SpaceIdParams,
    @Body() body: CreateFileBody,
  ): Promise<SuccessBody<{ path: string }>> {
    return ok(await this.artifacts.createFile(spaceId, body));
  }

  @Post('folder')
  @ApiOperation({
    summary: 'Create a folder in a space',
    description:
      "Creates the folder `name` in `parentPath` (default the space's folder), or keeps it when it exists, and answers its absolute `path`. 400 for a bad name; 403 outside the space's folder or inside `.svc`; 409 `A file already exists at that path`.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(PATH_RESULT, 403, 409)
  async createFolder(
    @Param() { spaceId }: SpaceIdParams,
    @Body() body: CreateFolderBody,
  ): Promise<SuccessBody<{ path: string }>> {
    return ok(await this.artifacts.createFolder(spaceId, body));
  }

  @Post('move')
  @ApiOperation({
    summary: 'Move a file or folder in a space',
    description:
      "Moves the file or folder `oldPath` into the folder `newParentPath` (default the space's folder) and answers its new absolute `path`. 400 `oldPath is required` or `Cannot move a folder into itself`; 403 outside the space's folder or inside `.svc`; 404 `File not found`; 409 `A file or folder with that name already exists in the destination`.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(PATH_RESULT, 403, 409)
  async move(@Param() { spaceId }: SpaceIdParams, @Body() body: MoveBody): Promise<SuccessBody<{ path: string }>> {
    return ok(await this.artifacts.move(spaceId, body));
  }

  @Post('rename')
  @ApiOperation({
    summary: 'Rename a file or folder in a space',
    description:
      "Gives the file or folder `oldPath` the plain name `newName` in the same folder (a case-only change is allowed). 400 `oldPath is required` or a bad name; 403 outside the space's folder or inside `.svc`; 404 `File not found`; 409 `A file or folder named <newName> already exists`.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiDone(403, 409)
  async rename(@Param() { spaceId }: SpaceIdParams, @Body() body: RenameBody): Promise<{ success: true }> {
    await this.artifacts.rename(spaceId, body);
    return { success: true };
  }

  /**
   * Addition to the interface (docs/api.md, "Uploads and downloads"): a file's raw bytes as the request body (any content type but JSON),
   * streamed to disk and swapped in atomically; at most 50 MB.
   */
  @Put('upload')
  @ApiOperation({
    summary: "Upload a file's bytes to a space",
    description:
      "The body is the file's raw bytes (at most 50 MB); `path` names the file inside the space (relative, or absolute inside its folder). An existing file is replaced.",
  })
  @ApiConsumes('application/octet-stream')
  @ApiBody({ schema: { type: 'string', format: 'binary', description: 'The raw bytes of the file (at most 50 MB)' } })
  @ApiData(obj({ path: str('Absolute path'), size: int('Bytes written') }, ['path', 'size']), 403)
  async upload(
    @Param() { spaceId }: SpaceIdParams,
    @Query() query: PathQuery,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<SuccessBody<{ path: string; size: number }>> {
    if (req.readableEnded && Number(req.headers['content-length'] ?? 0) > 0) {
      // The JSON parser already read it: that is a JSON request, not a file.
      throw DomainError.invalid('Send the file as raw bytes (Content-Type application/octet-stream), not JSON');
    }
    if (Number(req.headers['content-length'] ?? 0) > MAX_UPLOAD_BYTES) {
      // Refused from its announced length, unread: answered at once, then the connection closes.
      res.setHeader('Connection', 'close');
      throw new DomainError('too_large', ArtifactErrors.uploadTooLarge);
    }
    try {
      // Not destroyed when the writer stops early: the rest is drained below before answering.
      return ok(await this.artifacts.upload(spaceId, query.path, req.iterator({ destroyOnReturn: false })));
    } catch (err) {
      if (!req.readableEnded && !req.destroyed) {
        // Refused with part of the body unread: let the client finish sending (for a while), then close.
        res.setHeader('Connection', 'close');
        req.resume();
        await Promise.race([once(req, 'end'), once(req, 'close'), setTimeout(DRAIN_MS)]).catch(() => undefined);
      }
      throw err;
    }
  }

  @Get('tree')
  @ApiOperation({
    summary: "Read a space's file tree",
    description:
      "Answers `{workspaceRoot, nodes}`: the space folder's entries, each top-level folder with its own entries (`childrenLoaded`); deeper folders are read with `children`. 404 `Space not found`.",
  })
  @Assistant()
  @ApiData(ARTIFACT_TREE, 403)
  async tree(@Param() { spaceId }: SpaceIdParams): Promise<SuccessBody<ArtifactTree>> {
    return ok(await this.artifacts.tree(spaceId));
  }
}
