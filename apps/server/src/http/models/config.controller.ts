import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import type { AppConfiguration } from '#contracts/models.js';
import { ModelSourcesService } from '#core/models/model-sources.service.js';
import { ApiData } from '../openapi/api-data.js';
import { APP_CONFIGURATION } from '../openapi/response-schemas.js';

type Ok<T> = { success: true; data: T };
const ok = <T>(data: T): Ok<T> => ({ success: true, data });

/** The configuration object (docs/api.md, "Model sources and the configuration"): read masked, merge partially. */
@Controller('api/config')
export class ConfigController {
  constructor(private readonly models: ModelSourcesService) {}

  @Get()
  @ApiData(APP_CONFIGURATION)
  async get(): Promise<Ok<AppConfiguration>> {
    return ok(await this.models.configuration());
  }

  /** Merges top-level branches; answers the whole configuration, masked. */
  @Post()
  @HttpCode(200)
  @ApiData(APP_CONFIGURATION)
  async update(@Body() body: unknown): Promise<Ok<AppConfiguration>> {
    return ok(await this.models.updateConfiguration(body));
  }
}
