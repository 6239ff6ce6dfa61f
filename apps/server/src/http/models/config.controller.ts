import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import type { AppConfiguration } from '#contracts/models.js';
import { ModelSourcesService } from '#core/models/model-sources.service.js';
import { ApiData } from '../openapi/api-data.js';
import { APP_CONFIGURATION } from '../openapi/response-schemas.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ok } from '../common/envelope.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { ConfigPatchDto } from './models.dto.js';

/** The configuration object (docs/api.md, "Model sources and the configuration"): read masked, merge partially. */
@ApiTags('Settings and models')
@Controller('api/config')
export class ConfigController {
  constructor(private readonly models: ModelSourcesService) {}

  @Get()
  @ApiOperation({
    summary: 'Read the configuration (secrets masked)',
    description:
      'Answers the whole configuration object: the `aiSources` branch (the model sources) and every other stored top-level branch, with secrets such as API keys masked.',
  })
  @ApiData(APP_CONFIGURATION)
  async get(): Promise<SuccessBody<AppConfiguration>> {
    return ok(await this.models.configuration());
  }

  /** Merges top-level branches; answers the whole configuration, masked, and emits `ai-sources:catalog-changed` on the WebSocket when sources changed. */
  @Post()
  @ApiOperation({
    summary: 'Change the configuration (merged)',
    description:
      "Merges the body's top-level branches into the stored configuration: a branch given replaces the stored one (masked secrets sent back keep their stored value), `null` removes it, and `aiSources.sources`, when given, replaces the source list (a source of the same id keeps its stored apiKey when it sends none or `***`); answers the whole configuration, masked. 400 for a body that is not a JSON object, a forbidden key, an `aiSources` that is not an object, or `remoteAccess.password` (set SVC_REMOTE_PASSWORD instead); a bad `aiSources` branch writes nothing.",
  })
  @HttpCode(200)
  @ApiData(APP_CONFIGURATION)
  async update(@Body() body: ConfigPatchDto): Promise<SuccessBody<AppConfiguration>> {
    return ok(await this.models.updateConfiguration(body));
  }
}
