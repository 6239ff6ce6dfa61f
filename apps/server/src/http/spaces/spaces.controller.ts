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

/** Spaces (docs/api.md, "Workspaces and files"). Fixed routes come before `:spaceId` so they are never read as ids. */
@Controller('api/spaces')
export class SpacesController {
  constructor(
    private readonly spaces: SpacesService,
    private readonly memory: MemoryService,
    private readonly consolidation: MemoryConsolidationService,
  ) {}

  @Get()
  @Assistant()
  @ApiData(arr(SPACE))
  async list(): Promise<SuccessBody<SpaceDto[]>> {
    return ok((await this.spaces.list()).map((s) => this.spaces.toDto(s)));
  }

  @Post()
  @Assistant()
  @HttpCode(200)
  @ApiData(SPACE, 403, 409)
  async create(@Body() body: CreateSpaceDto, @Relayed() relayed: boolean): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.create(body, relayed ? 'assistant' : 'user')));
  }

  @Get('default-path')
  @Assistant()
  @ApiData(str('The folder new spaces are created under'))
  defaultPath(): SuccessBody<string> {
    return ok(this.spaces.defaultPath());
  }

  @Get('svc')
  @Assistant()
  @ApiData(SPACE)
  async temporary(): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.get(TEMP_SPACE_ID)));
  }

  @Put('reorder')
  @Assistant()
  @ApiDone()
  async reorder(@Body() body: ReorderSpacesDto): Promise<{ success: true }> {
    await this.spaces.reorder(body.spaceIds);
    return { success: true };
  }

  @Get(':spaceId')
  @Assistant()
  @ApiData(SPACE)
  async get(@Param('spaceId') spaceId: string): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.get(spaceId)));
  }

  @Put(':spaceId')
  @Assistant()
  @ApiData(SPACE)
  async update(@Param('spaceId') spaceId: string, @Body() body: UpdateSpaceDto): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.update(spaceId, body)));
  }

  @Delete(':spaceId')
  @Assistant()
  @ApiDone(403)
  async remove(@Param('spaceId') spaceId: string): Promise<{ success: true }> {
    await this.spaces.delete(spaceId);
    return { success: true };
  }

  @Put(':spaceId/working-dir')
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
  @Assistant()
  @HttpCode(200)
  @ApiData(PATH_RESULT)
  async open(@Param('spaceId') spaceId: string): Promise<SuccessBody<{ path: string }>> {
    return ok({ path: (await this.spaces.get(spaceId)).path });
  }

  @Get(':spaceId/memory')
  @Assistant()
  @ApiData(MEMORY_STATE)
  async memoryState(@Param('spaceId') spaceId: string): Promise<SuccessBody<MemoryState>> {
    return ok(await this.memory.state(spaceId));
  }

  /** Starts a consolidation in the background; answers once it is queued (or why not). */
  @Post(':spaceId/memory/consolidate')
  @Assistant()
  @HttpCode(200)
  @ApiData(CONSOLIDATION_START)
  async consolidateMemory(@Param('spaceId') spaceId: string): Promise<SuccessBody<ConsolidationStart>> {
    return ok(await this.consolidation.start(spaceId, 'manual'));
  }

  @Get(':spaceId/preferences')
  @Assistant()
  @ApiData(SPACE_PREFERENCES)
  async preferences(@Param('spaceId') spaceId: string): Promise<SuccessBody<SpacePreferences>> {
    return ok(this.spaces.preferencesOf(await this.spaces.get(spaceId)));
  }

  /** Merges into the stored preferences and answers the updated space. */
  @Put(':spaceId/preferences')
  @Assistant()
  @ApiData(SPACE)
  async updatePreferences(
    @Param('spaceId') spaceId: string,
    @Body() body: SpacePreferencesDto,
  ): Promise<SuccessBody<SpaceDto>> {
    return ok(this.spaces.toDto(await this.spaces.updatePreferences(spaceId, body)));
  }
}
