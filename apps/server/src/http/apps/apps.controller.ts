import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import type { ActivityEntryDto, AppDto, AutomationStateDto } from '#contracts/apps.js';
import type { SuccessBody } from '#contracts/errors.js';
import { AppsService } from '#core/apps/apps.service.js';
import { DomainError } from '#core/errors/domain-error.js';
import {
  ActivityQuery,
  AppListQuery,
  FrequencyDto,
  ImportSpecDto,
  MoveSpaceDto,
  PermissionDto,
  UninstallQuery,
  UpgradeStrategyDto,
} from './apps.dto.js';
import { toActivityDto, toAppDto } from './apps.presenter.js';
import { ApiData } from '../openapi/api-data.js';
import { ACTIVITY_ENTRY, APP, APP_ID, AUTOMATION_STATE, NULL_DATA } from '../openapi/response-schemas.js';
import { anyObject, arr, str } from '../openapi/schema.js';
import { Assistant } from '../assistant-api/assistant.decorator.js';
import { ok } from '../common/envelope.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

/** A number from a query string, or undefined when absent; anything else is a 400 naming it. */
function queryNumber(value: unknown, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isFinite(n)) throw DomainError.invalid(`${name} must be a number`);
  return n;
}

/**
 * Digital humans (docs/api/digital-humans.md). Fixed routes come before
 * `:appId`. Chat, runs, trigger and escalation answers are served elsewhere.
 */
@ApiTags('Digital humans')
@Controller('api/apps')
export class AppsController {
  constructor(private readonly apps: AppsService) {}

  @Get()
  @ApiOperation({
    summary: 'List installed digital humans',
    description: 'Uninstalled ones are left out unless `status=uninstalled` asks for them.',
  })
  @Assistant()
  @ApiData(arr(APP))
  async list(@Query() query: AppListQuery): Promise<SuccessBody<AppDto[]>> {
    return ok((await this.apps.list({ spaceId: query.spaceId, status: query.status })).map(toAppDto));
  }

  @Post('import-spec')
  @ApiOperation({ summary: 'Install a digital human from spec YAML' })
  @HttpCode(200)
  @ApiData(APP_ID, 409, 422, 503)
  async importSpec(@Body() body: ImportSpecDto): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.apps.importSpec(body);
    return ok({ appId: app.id });
  }

  @Get(':appId')
  @ApiOperation({ summary: 'Read a digital human' })
  @Assistant()
  @ApiData(APP)
  async get(@Param('appId') appId: string): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.get(appId)));
  }

  /** Soft delete; `purge=true` also deletes the app's data folder. */
  @Delete(':appId')
  @ApiOperation({ summary: 'Uninstall a digital human (soft delete)' })
  @ApiData(NULL_DATA)
  async uninstall(@Param('appId') appId: string, @Query() query: UninstallQuery): Promise<SuccessBody<null>> {
    await this.apps.uninstall(appId, query.purge === 'true');
    return ok(null);
  }

  @Delete(':appId/permanent')
  @ApiOperation({ summary: 'Delete a digital human permanently, with its data' })
  @ApiData(NULL_DATA)
  async deletePermanently(@Param('appId') appId: string): Promise<SuccessBody<null>> {
    await this.apps.deletePermanently(appId);
    return ok(null);
  }

  @Post(':appId/reinstall')
  @ApiOperation({ summary: 'Reinstall an uninstalled digital human' })
  @HttpCode(200)
  @ApiData(APP)
  async reinstall(@Param('appId') appId: string): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.reinstall(appId)));
  }

  /** The body is the whole config object (full replacement); answers the stored values. */
  @Post(':appId/config')
  @ApiOperation({ summary: "Replace a digital human's configuration" })
  @HttpCode(200)
  @ApiData(anyObject('The stored configuration values'), 422)
  async config(
    @Param('appId') appId: string,
    @Body() body: Record<string, unknown>,
  ): Promise<SuccessBody<Record<string, unknown>>> {
    return ok(await this.apps.setConfig(appId, body));
  }

  @Get(':appId/state')
  @ApiOperation({ summary: "Read a digital human's real-time automation state" })
  @Assistant()
  @ApiData(AUTOMATION_STATE)
  async state(@Param('appId') appId: string): Promise<SuccessBody<AutomationStateDto>> {
    return ok(await this.apps.state(appId));
  }

  /** Newest first; `before` (epoch ms) pages back. */
  @Get(':appId/activity')
  @ApiOperation({ summary: "List a digital human's activity entries (newest first)" })
  @Assistant()
  @ApiData(arr(ACTIVITY_ENTRY))
  async activity(
    @Param('appId') appId: string,
    @Query() query: ActivityQuery,
  ): Promise<SuccessBody<ActivityEntryDto[]>> {
    const entries = await this.apps.activity(
      appId,
      queryNumber(query.limit, 'limit'),
      queryNumber(query.before, 'before'),
    );
    return ok(entries.map(toActivityDto));
  }

  @Post(':appId/pause')
  @ApiOperation({ summary: 'Pause a digital human' })
  @HttpCode(200)
  @ApiData(APP)
  async pause(@Param('appId') appId: string): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.pause(appId)));
  }

  @Post(':appId/resume')
  @ApiOperation({ summary: 'Resume a paused digital human' })
  @HttpCode(200)
  @ApiData(APP)
  async resume(@Param('appId') appId: string): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.resume(appId)));
  }

  @Post(':appId/frequency')
  @ApiOperation({ summary: 'Change how often a subscription of a digital human runs' })
  @HttpCode(200)
  @ApiData(APP, 422)
  async frequency(@Param('appId') appId: string, @Body() body: FrequencyDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.setFrequency(appId, body.subscriptionId, body.frequency)));
  }

  /** JSON Merge Patch (RFC 7386) of the spec's top-level fields. */
  @Patch(':appId/spec')
  @ApiOperation({ summary: "Change a digital human's spec (JSON Merge Patch)" })
  @ApiData(APP, 422)
  async patchSpec(@Param('appId') appId: string, @Body() body: Record<string, unknown>): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.patchSpec(appId, body)));
  }

  /** JSON Merge Patch of the user's overrides; null deletes a key. */
  @Patch(':appId/overrides')
  @ApiOperation({ summary: "Change a digital human's user overrides (JSON Merge Patch)" })
  @ApiData(APP, 422)
  async patchOverrides(
    @Param('appId') appId: string,
    @Body() body: Record<string, unknown>,
  ): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.patchOverrides(appId, body)));
  }

  @Post(':appId/permissions/grant')
  @ApiOperation({ summary: 'Grant a permission to a digital human' })
  @HttpCode(200)
  @ApiData(APP, 422)
  async grant(@Param('appId') appId: string, @Body() body: PermissionDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.grant(appId, body.permission)));
  }

  @Post(':appId/permissions/revoke')
  @ApiOperation({ summary: 'Revoke a permission of a digital human' })
  @HttpCode(200)
  @ApiData(APP, 422)
  async revoke(@Param('appId') appId: string, @Body() body: PermissionDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.revoke(appId, body.permission)));
  }

  /** The stored spec as a YAML file's text. */
  @Get(':appId/export-spec')
  @ApiOperation({ summary: "Export a digital human's spec as YAML" })
  @ApiData(str('The spec as YAML text'))
  async exportSpec(@Param('appId') appId: string): Promise<SuccessBody<string>> {
    return ok(await this.apps.exportSpec(appId));
  }

  @Post(':appId/move-space')
  @ApiOperation({ summary: 'Move a digital human to another space (or global)' })
  @HttpCode(200)
  @ApiData(APP)
  async moveSpace(@Param('appId') appId: string, @Body() body: MoveSpaceDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.moveSpace(appId, body.spaceId)));
  }

  @Post(':appId/upgrade-strategy')
  @ApiOperation({ summary: "Set a digital human's upgrade strategy (auto, notify, manual)" })
  @HttpCode(200)
  @ApiData(APP)
  async upgradeStrategy(@Param('appId') appId: string, @Body() body: UpgradeStrategyDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.setUpgradeStrategy(appId, body.strategy)));
  }

  @Post(':appId/clear-memory')
  @ApiOperation({ summary: "Clear a digital human's memory" })
  @HttpCode(200)
  @ApiData(NULL_DATA)
  async clearMemory(@Param('appId') appId: string): Promise<SuccessBody<null>> {
    await this.apps.clearMemory(appId);
    return ok(null);
  }
}
