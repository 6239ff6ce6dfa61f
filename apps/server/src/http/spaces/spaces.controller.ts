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
  @ApiOperation({ summary: 'List spaces' })
  @Assistant()
  @ApiData(arr(SPACE))
  async list(): Promise<SuccessBody<SpaceDto[]>> {
    return ok((await this.spaces.list()).map((s) => this.spaces.toDto(s)));
  }

  @Post()
  @ApiOperation({ summary: 'Create a space' })
  @Assistant()
  @HttpCode(200)
  @ApiData(SPACE, 403, 409)
  async create(@Body() body: CreateSpaceDto, @Relayed() relayed: boolean): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.create(body, relayed ? 'assistant' : 'user')));
  }

  @Get('default-path')
  @ApiOperation({ summary: 'Read the folder new spaces are created under' })
  @Assistant()
  @ApiData(str('The folder new spaces are created under'))
  defaultPath(): SuccessBody<string> {
    return ok(this.spaces.defaultPath());
  }

  @Get('svc')
  @ApiOperation({ summary: 'Read the temporary space' })
  @Assistant()
  @ApiData(SPACE)
  async temporary(): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.get(TEMP_SPACE_ID)));
  }

  @Put('reorder')
  @ApiOperation({ summary: 'Reorder spaces' })
  @Assistant()
  @ApiDone()
  async reorder(@Body() body: ReorderSpacesDto): Promise<{ success: true }> {
    await this.spaces.reorder(body.spaceIds);
    return { success: true };
  }

  @Get(':spaceId')
  @ApiOperation({ summary: 'Read a space' })
  @Assistant()
  @ApiData(SPACE)
  async get(@Param('spaceId') spaceId: string): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.get(spaceId)));
  }

  @Put(':spaceId')
  @ApiOperation({ summary: 'Rename a space or change its icon' })
  @Assistant()
  @ApiData(SPACE)
  async update(@Param('spaceId') spaceId: string, @Body() body: UpdateSpaceDto): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.update(spaceId, body)));
  }

  @Delete(':spaceId')
  @ApiOperation({ summary: 'Delete a space with its folder, conversations and digital humans (no undo)' })
  @Assistant()
  @ApiDone(403)
  async remove(@Param('spaceId') spaceId: string): Promise<{ success: true }> {
    await this.spaces.delete(spaceId);
    return { success: true };
  }

  @Put(':spaceId/working-dir')
  @ApiOperation({ summary: 'Point a space at another existing folder' })
  @Assistant()
  @ApiData(SPACE, 403)
  async workingDir(
    @Param('spaceId') spaceId: string,
    @Body() body: WorkingDirDto,
    @Relayed() relayed: boolean,
  ): Promise<SuccessBody<SpaceDto>> {
    return ok(
      this.spaces.toDto(await this.spaces.setWorkingDir(spaceId, body.workingDir, relayed ? 'assistant' : 'user')),
    );
  }

  /** Returns the working folder; a headless server opens nothing. */
  @Post(':spaceId/open')
  @ApiOperation({ summary: "Read a space's working folder path" })
  @Assistant()
  @HttpCode(200)
  @ApiData(PATH_RESULT)
  async open(@Param('spaceId') spaceId: string): Promise<SuccessBody<{ path: string }>> {
    return ok({ path: (await this.spaces.get(spaceId)).path });
  }

  @Get(':spaceId/memory')
  @ApiOperation({ summary: "Read a space's memory state" })
  @Assistant()
  @ApiData(MEMORY_STATE)
  async memoryState(@Param('spaceId') spaceId: string): Promise<SuccessBody<MemoryState>> {
    return ok(await this.memory.state(spaceId));
  }

  /** Starts a consolidation in the background; answers once it is queued (or why not). */
  @Post(':spaceId/memory/consolidate')
  @ApiOperation({ summary: "Start consolidating a space's memory" })
  @Assistant()
  @HttpCode(200)
  @ApiData(CONSOLIDATION_START)
  async consolidateMemory(@Param('spaceId') spaceId: string): Promise<SuccessBody<ConsolidationStart>> {
    return ok(await this.consolidation.start(spaceId, 'manual'));
  }

  @Get(':spaceId/preferences')
  @ApiOperation({ summary: "Read a space's preferences" })
  @Assistant()
  @ApiData(SPACE_PREFERENCES)
  async preferences(@Param('spaceId') spaceId: string): Promise<SuccessBody<SpacePreferences>> {
    return ok(this.spaces.preferencesOf(await this.spaces.get(spaceId)));
  }

  /** Merges into the stored preferences and answers the updated space. */
  @Put(':spaceId/preferences')
  @ApiOperation({ summary: "Change a space's preferences (merged)" })
  @Assistant()
  @ApiData(SPACE)
  async updatePreferences(
    @Param('spaceId') spaceId: string,
    @Body() body: SpacePreferencesDto,
  ): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.updatePreferences(spaceId, body)));
  }
}
