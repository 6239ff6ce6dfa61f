import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import type { TrashEntry } from '#contracts/artifacts.js';
import type { SuccessBody } from '#contracts/errors.js';
import { TrashService } from '#core/artifacts/trash.service.js';
import { ok } from '../common/envelope.js';
import { ApiData, ApiDone } from '../openapi/api-data.js';
import { RESTORED_PATH, TRASH_ENTRY } from '../openapi/response-schemas.js';
import { arr } from '../openapi/schema.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { RestoreTrashBody } from './artifacts.dto.js';
import { SpaceIdParams, TrashEntryParams } from '../common/path-params.js';

/**
 * A space's trash: an extension of the interface (docs/api.md, "Trash"); the specification only
 * moves files there.
 */
@ApiTags('Workspaces and files')
@Controller('api/spaces/:spaceId/trash')
export class SpaceTrashController {
  constructor(private readonly trash: TrashService) {}

  @Get()
  @ApiOperation({
    summary: "List a space's trash",
    description:
      "Extension. Answers the entries of the data folder's trash that were deleted from this space's folder, newest first: `{id, path (relative to the space), deletedAt, isDirectory, size?}`. 404 `Space not found`.",
  })
  @ApiData(arr(TRASH_ENTRY))
  async list(@Param() { spaceId }: SpaceIdParams): Promise<SuccessBody<TrashEntry[]>> {
    return ok(await this.trash.list(spaceId));
  }

  @Post('restore')
  @ApiOperation({
    summary: 'Restore an entry of the trash',
    description:
      "Extension. Moves the entry `id` back to its original path, or to `path` (relative to the space's folder, or absolute inside it), creating the folders on the way, and answers where it is now. 400 `id is required` or `Invalid trash id`; 403 outside the space's folder or inside `.svc`; 404 `Not in this space's trash`; 409 when something exists at that path now.",
  })
  @HttpCode(200)
  @ApiData(RESTORED_PATH, 403, 409)
  async restore(
    @Param() { spaceId }: SpaceIdParams,
    @Body() body: RestoreTrashBody,
  ): Promise<SuccessBody<{ path: string; relativePath: string }>> {
    return ok(await this.trash.restore(spaceId, body));
  }

  @Delete(':id')
  @ApiOperation({
    summary: 'Delete an entry of the trash for good',
    description:
      "Extension. Irreversible: removes the entry `id` (a file or a whole folder) from the data folder's trash. 400 `Invalid trash id`; 404 `Not in this space's trash`.",
  })
  @ApiDone()
  async purge(@Param() { spaceId, id }: TrashEntryParams): Promise<{ success: true }> {
    await this.trash.purge(spaceId, id);
    return { success: true };
  }
}
