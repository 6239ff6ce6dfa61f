import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import type { MemoryState, SpaceDto, SpacePreferences } from '#contracts/spaces.js';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import { type ConsolidationStart, MemoryConsolidationService } from '#core/memory/memory-consolidation.service.js';
import { MemoryService } from '#core/memory/memory.service.js';
import { SpacesService } from '#core/spaces/spaces.service.js';
import { ApiData, ApiDone } from '../openapi/api-data.js';
import { CreateSpaceDto, ReorderSpacesDto, SpacePreferencesDto, UpdateSpaceDto, WorkingDirDto } from './spaces.dto.js';
import {
  CONSOLIDATION_START,
  MEMORY_STATE,
  PATH_RESULT,
  SPACE,
  SPACE_PREFERENCES,
} from '../openapi/response-schemas.js';
import { arr, str } from '../openapi/schema.js';
import { Assistant } from '../assistant-api/assistant.decorator.js';
import { Relayed } from '../assistant-api/relayed.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ok } from '../common/envelope.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { SpaceIdParams } from '../common/path-params.js';

/** Spaces (docs/api.md, "Workspaces and files"). Fixed routes come before `:spaceId` so they are never read as ids. */
@ApiTags('Workspaces and files')
@Controller('api/spaces')
export class SpacesController {
  constructor(
    private readonly spaces: SpacesService,
    private readonly memory: MemoryService,
    private readonly consolidation: MemoryConsolidationService,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'List spaces',
    description:
      "Answers the user-created spaces in the user's order; the temporary space is left out (read it with `GET /api/spaces/svc`).",
  })
  @Assistant()
  @ApiData(arr(SPACE))
  async list(): Promise<SuccessBody<SpaceDto[]>> {
    return ok((await this.spaces.list()).map((s) => this.spaces.toDto(s)));
  }

  @Post()
  @ApiOperation({
    summary: 'Create a space',
    description:
      "Creates the space and its folder and emits `space:changed` (`created`) on the WebSocket; by default under the data folder's spaces folder (`GET /api/spaces/default-path`), or at `customPath` (absolute). 400 when `name` is missing or longer than 200 characters, or `customPath` is relative, the data folder or a system folder; 403 when `customPath` lies outside the operator's space roots (SVC_SPACE_ROOTS) or the assistant names a folder; 409 `Another space already uses that folder.` when it is, lies in or contains another space's folder.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(SPACE, 403, 409)
  async create(@Body() body: CreateSpaceDto, @Relayed() relayed: boolean): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.create(body, relayed ? 'assistant' : 'user')));
  }

  @Get('default-path')
  @ApiOperation({
    summary: 'Read the folder new spaces are created under',
    description:
      "Answers the absolute folder under which a new space's folder is created when no `customPath` is given.",
  })
  @Assistant()
  @ApiData(str('The folder new spaces are created under'))
  defaultPath(): SuccessBody<string> {
    return ok(this.spaces.defaultPath());
  }

  @Get('svc')
  @ApiOperation({
    summary: 'Read the temporary space',
    description:
      'Answers the temporary space (id `svc-temp`), which always exists, is not listed by `GET /api/spaces`, cannot be deleted and cannot change its working folder.',
  })
  @Assistant()
  @ApiData(SPACE)
  async temporary(): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.get(TEMP_SPACE_ID)));
  }

  @Put('reorder')
  @ApiOperation({
    summary: 'Reorder spaces',
    description:
      'Gives the listed spaces (`spaceIds`) the listed order; unknown ids, duplicates and the temporary space are ignored, and spaces not listed keep their positions.',
  })
  @Assistant()
  @ApiDone()
  async reorder(@Body() body: ReorderSpacesDto): Promise<{ success: true }> {
    await this.spaces.reorder(body.spaceIds);
    return { success: true };
  }

  @Get(':spaceId')
  @ApiOperation({
    summary: 'Read a space',
    description: 'Answers one space, the temporary one (`svc-temp`) included. 404 `Space not found` for an unknown id.',
  })
  @Assistant()
  @ApiData(SPACE)
  async get(@Param() { spaceId }: SpaceIdParams): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.get(spaceId)));
  }

  @Put(':spaceId')
  @ApiOperation({
    summary: 'Rename a space or change its icon',
    description:
      'Changes any of `name` (1 to 200 characters), `icon` and `color`; fields left out are unchanged, the updated space is answered and `space:changed` (`updated`) is emitted on the WebSocket. 400 naming the field for a bad value; 404 `Space not found` for an unknown id.',
  })
  @Assistant()
  @ApiData(SPACE)
  async update(@Param() { spaceId }: SpaceIdParams, @Body() body: UpdateSpaceDto): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.update(spaceId, body)));
  }

  @Delete(':spaceId')
  @ApiOperation({
    summary: 'Delete a space with its folder, conversations and digital humans (no undo)',
    description:
      "Removes the space's folder (recursively, no trash) when the space created it and no other space uses it, then every conversation and digital human of the space and the record; emits `space:changed` (`deleted`) on the WebSocket. 403 `The temporary space cannot be deleted.` for the temporary space, and 403 when the folder is the filesystem root, the data folder or a parent of it; 404 `Space not found` for an unknown id.",
  })
  @Assistant()
  @ApiDone(403)
  async remove(@Param() { spaceId }: SpaceIdParams): Promise<{ success: true }> {
    await this.spaces.delete(spaceId);
    return { success: true };
  }

  @Put(':spaceId/working-dir')
  @ApiOperation({
    summary: 'Point a space at another existing folder',
    description:
      "Points the space at another existing folder (`workingDir`, absolute); nothing is moved, created or deleted, deleting the space later leaves that folder in place, and `space:changed` (`folder-changed`) is emitted on the WebSocket. 400 `That folder does not exist.` or for a relative path, the data folder or a system folder; 403 for the temporary space, a folder outside the operator's space roots or when the assistant asks; 409 when another space uses, lies in or contains the folder, while work is in progress in the space, or while another change to it is under way.",
  })
  @Assistant()
  @ApiData(SPACE, 403)
  async workingDir(
    @Param() { spaceId }: SpaceIdParams,
    @Body() body: WorkingDirDto,
    @Relayed() relayed: boolean,
  ): Promise<SuccessBody<SpaceDto>> {
    return ok(
      this.spaces.toDto(await this.spaces.setWorkingDir(spaceId, body.workingDir, relayed ? 'assistant' : 'user')),
    );
  }

  /** Returns the working folder; a headless server opens nothing. */
  @Post(':spaceId/open')
  @ApiOperation({
    summary: "Read a space's working folder path",
    description:
      "Answers `{path}`, the space's working folder. A headless server opens nothing: the route only reports the path. 404 `Space not found` for an unknown id.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(PATH_RESULT)
  async open(@Param() { spaceId }: SpaceIdParams): Promise<SuccessBody<{ path: string }>> {
    return ok({ path: (await this.spaces.get(spaceId)).path });
  }

  @Get(':spaceId/memory')
  @ApiOperation({
    summary: "Read a space's memory state",
    description:
      "Answers the state of the space's memory files with `consolidating` (whether a consolidation is queued or running). 404 `Space not found` for an unknown id.",
  })
  @Assistant()
  @ApiData(MEMORY_STATE)
  async memoryState(@Param() { spaceId }: SpaceIdParams): Promise<SuccessBody<MemoryState>> {
    return ok(await this.memory.state(spaceId));
  }

  /** Starts a consolidation in the background; answers once it is queued (or why not). */
  @Post(':spaceId/memory/consolidate')
  @ApiOperation({
    summary: "Start consolidating a space's memory",
    description:
      "Queues a consolidation of the space's memory in the background and answers at once: `{started:true}`, or `{started:false, reason}` with `reason` `already-running` or `empty` (nothing to consolidate). 404 `Space not found` for an unknown id.",
  })
  @Assistant()
  @HttpCode(200)
  @ApiData(CONSOLIDATION_START)
  async consolidateMemory(@Param() { spaceId }: SpaceIdParams): Promise<SuccessBody<ConsolidationStart>> {
    return ok(await this.consolidation.start(spaceId, 'manual'));
  }

  @Get(':spaceId/preferences')
  @ApiOperation({
    summary: "Read a space's preferences",
    description:
      "Answers the space's preferences with defaults filled in (`memory.enabled`, `memory.autoConsolidate`, `memory.cadence`). 404 `Space not found` for an unknown id.",
  })
  @Assistant()
  @ApiData(SPACE_PREFERENCES)
  async preferences(@Param() { spaceId }: SpaceIdParams): Promise<SuccessBody<SpacePreferences>> {
    return ok(this.spaces.preferencesOf(await this.spaces.get(spaceId)));
  }

  /** Merges into the stored preferences and answers the updated space. */
  @Put(':spaceId/preferences')
  @ApiOperation({
    summary: "Change a space's preferences (merged)",
    description:
      'Merges `memory` (`enabled` and `autoConsolidate` booleans, `cadence` one of `diligent`, `balanced`, `economical`) into the stored preferences and answers the updated space. 400 naming the field for a bad value; 404 `Space not found` for an unknown id.',
  })
  @Assistant()
  @ApiData(SPACE)
  async updatePreferences(
    @Param() { spaceId }: SpaceIdParams,
    @Body() body: SpacePreferencesDto,
  ): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.updatePreferences(spaceId, body)));
  }
}
