import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import type { AppConfiguration } from '#contracts/models.js';
import { ModelSourcesService } from '#core/models/model-sources.service.js';
import { ApiData } from '../openapi/api-data.js';
import { APP_CONFIGURATION } from '../openapi/response-schemas.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ok } from '../common/envelope.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

/** The configuration object (docs/api.md, "Model sources and the configuration"): read masked, merge partially. */
@ApiTags('Settings and models')
@Controller('api/config')
export class ConfigController {
  constructor(private readonly models: ModelSourcesService) {}

  @Get()
  @ApiOperation({ summary: 'Read the configuration (secrets masked)' })
  @ApiData(APP_CONFIGURATION)
  async get(): Promise<SuccessBody<AppConfiguration>> {
    return ok(await this.models.configuration());
  }

  /** Merges top-level branches; answers the whole configuration, masked. */
  @Post()
  @ApiOperation({ summary: 'Change the configuration (merged)' })
  @HttpCode(200)
  @ApiData(APP_CONFIGURATION)
  async update(@Body() body: unknown): Promise<SuccessBody<AppConfiguration>> {
    return ok(await this.models.updateConfiguration(body));
  }
}
