import { Body, Controller, Delete, HttpCode, Param, Post, Put } from '@nestjs/common';
import type { AISourcesConfig, CurrentSelection } from '#contracts/models.js';
import { ModelSourcesService } from '#core/models/model-sources.service.js';
import { ApiData } from '../openapi/api-data.js';
import { AI_SOURCES_CONFIG, CURRENT_SELECTION } from '../openapi/response-schemas.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ok } from '../common/envelope.js';
import { AddAiSourceDto, SetModelDto, SwitchSourceDto, UpdateAiSourceDto } from './models.dto.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { ModelSourceParams } from '../common/path-params.js';

/** Model sources (docs/api.md, "Model sources and the configuration"). Answers carry every secret masked as "***". */
@ApiTags('Settings and models')
@Controller('api/ai-sources')
export class AiSourcesController {
  constructor(private readonly models: ModelSourcesService) {}

  /** Adds a source; answers the whole sources configuration. */
  @Post('sources')
  @ApiOperation({ summary: 'Add a model source', description: 'Answers the whole sources configuration, keys masked.' })
  @HttpCode(200)
  @ApiData(AI_SOURCES_CONFIG)
  async add(@Body() body: AddAiSourceDto): Promise<SuccessBody<AISourcesConfig>> {
    return ok(await this.models.addSource(body));
  }

  @Put('sources/:sourceId')
  @ApiOperation({
    summary: 'Update a model source (omitting apiKey keeps it)',
    description:
      'Merges the given fields into the source; an omitted (or `***`) `apiKey` keeps the stored key, and `id` cannot be changed. Answers the whole sources configuration, keys masked; emits `ai-sources:catalog-changed` on the WebSocket when something changed. 400 for a bad field; 404 `Source not found: <id>`.',
  })
  @ApiData(AI_SOURCES_CONFIG)
  async update(
    @Param() { sourceId }: ModelSourceParams,
    @Body() body: UpdateAiSourceDto,
  ): Promise<SuccessBody<AISourcesConfig>> {
    return ok(await this.models.updateSource(sourceId, body));
  }

  @Delete('sources/:sourceId')
  @ApiOperation({
    summary: 'Remove a model source',
    description:
      'Removes the source; when it was current, the first remaining one (or none) becomes current. Answers the whole sources configuration, keys masked, and emits `ai-sources:catalog-changed` on the WebSocket. 404 `Source not found: <id>`.',
  })
  @ApiData(AI_SOURCES_CONFIG)
  async remove(@Param() { sourceId }: ModelSourceParams): Promise<SuccessBody<AISourcesConfig>> {
    return ok(await this.models.removeSource(sourceId));
  }

  @Post('switch-source')
  @ApiOperation({
    summary: 'Make a model source current',
    description:
      'Makes `sourceId` the current source and answers `{currentId, currentModel}`. 400 without `sourceId`; 404 `Source not found: <id>`.',
  })
  @HttpCode(200)
  @ApiData(CURRENT_SELECTION)
  async switchSource(@Body() body: SwitchSourceDto): Promise<SuccessBody<CurrentSelection>> {
    return ok(await this.models.switchSource(body.sourceId));
  }

  @Post('set-model')
  @ApiOperation({
    summary: "Set the current source's model",
    description:
      "Sets the current source's model to `modelId`, adding it to the source's available models when missing (then emitting `ai-sources:catalog-changed`), and answers `{currentId, currentModel}`. 400 for a missing or bad `modelId`; 404 `No model source is configured: …` without any source.",
  })
  @HttpCode(200)
  @ApiData(CURRENT_SELECTION)
  async setModel(@Body() body: SetModelDto): Promise<SuccessBody<CurrentSelection>> {
    return ok(await this.models.setModel(body.modelId));
  }
}
