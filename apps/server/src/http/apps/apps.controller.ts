import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import type { ActivityEntryDto, AppDto, AutomationStateDto } from '#contracts/apps.js';
import type { SuccessBody } from '#contracts/errors.js';
import { AppsService } from '#core/apps/apps.service.js';
import { DomainError } from '#core/errors/domain-error.js';
import {
  ActivityQuery,
  AppConfigDto,
  AppListQuery,
  FrequencyDto,
  ImportSpecDto,
  MoveSpaceDto,
  OverridesPatchDto,
  PermissionDto,
  SpecPatchDto,
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
import { AppIdParams } from '../common/path-params.js';

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
  @ApiOperation({
    summary: 'Install a digital human from spec YAML',
    description:
      '`yamlContent` is parsed and installed like `POST /api/apps/install`; answers `{appId}`. 400 `INVALID_YAML` for text that does not parse, 422 `VALIDATION_FAILED` naming the field, 409 `ALREADY_INSTALLED`. Emits `app:list_changed`.',
  })
  @HttpCode(200)
  @ApiData(APP_ID, 409, 422, 503)
  async importSpec(@Body() body: ImportSpecDto): Promise<SuccessBody<{ appId: string }>> {
    const app = await this.apps.importSpec(body);
    return ok({ appId: app.id });
  }

  @Get(':appId')
  @ApiOperation({
    summary: 'Read a digital human',
    description:
      'Answers the app: its normalized spec, status, settings (`userConfig`), `userOverrides`, permissions and upgrade strategy, with its last run, error and open question when set. 404 `App not found: <appId>` for an unknown id.',
  })
  @Assistant()
  @ApiData(APP)
  async get(@Param() { appId }: AppIdParams): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.get(appId)));
  }

  /** Soft delete; `purge=true` also deletes the app's data folder. */
  @Delete(':appId')
  @ApiOperation({
    summary: 'Uninstall a digital human (soft delete)',
    description:
      'Deactivates the app (triggers dropped; its chat threads and runs stop, on whichever replica runs them) and marks it `uninstalled`; its threads are kept for a reinstall. `purge=true` also deletes its data folder. Emits `app:list_changed` and `app:status_changed`.',
  })
  @ApiData(NULL_DATA)
  async uninstall(@Param() { appId }: AppIdParams, @Query() query: UninstallQuery): Promise<SuccessBody<null>> {
    await this.apps.uninstall(appId, query.purge === 'true');
    return ok(null);
  }

  @Delete(':appId/permanent')
  @ApiOperation({
    summary: 'Delete a digital human permanently, with its data',
    description:
      'Stops its work, then deletes its threads, data folder `.svc/apps/<appId>/`, activity and record. 403 `Built-in digital humans cannot be deleted.` for a built-in app. Emits `app:deleted`.',
  })
  @ApiData(NULL_DATA)
  async deletePermanently(@Param() { appId }: AppIdParams): Promise<SuccessBody<null>> {
    await this.apps.deletePermanently(appId);
    return ok(null);
  }

  @Post(':appId/reinstall')
  @ApiOperation({
    summary: 'Reinstall an uninstalled digital human',
    description:
      'Brings the app back with its threads and answers it (an app that is not uninstalled is answered unchanged). The MCP command policy applies again (403 `MCP_COMMAND_BLOCKED`). Emits `app:list_changed` (`change: installed`).',
  })
  @HttpCode(200)
  @ApiData(APP)
  async reinstall(@Param() { appId }: AppIdParams): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.reinstall(appId)));
  }

  /** The body is the whole config object (full replacement); answers the stored values. */
  @Post(':appId/config')
  @ApiOperation({
    summary: "Replace a digital human's configuration",
    description:
      "The body replaces every setting: each value is checked against the spec's `config_schema`, a missing key takes its default and an unknown key is refused (422 naming the setting). Answers the stored values; 409 for an uninstalled app.",
  })
  @HttpCode(200)
  @ApiData(anyObject('The stored configuration values'), 422)
  async config(
    @Param() { appId }: AppIdParams,
    @Body() body: AppConfigDto,
  ): Promise<SuccessBody<Record<string, unknown>>> {
    return ok(await this.apps.setConfig(appId, body));
  }

  @Get(':appId/state')
  @ApiOperation({
    summary: "Read a digital human's real-time automation state",
    description:
      'Answers `{status, automaticEnabled, runningCount, nextRunAtMs, lastRunAtMs, lastStatus, lastError, pendingEscalationId, triggers}`; changes are announced as `app:status_changed`.',
  })
  @Assistant()
  @ApiData(AUTOMATION_STATE)
  async state(@Param() { appId }: AppIdParams): Promise<SuccessBody<AutomationStateDto>> {
    return ok(await this.apps.state(appId));
  }

  /** Newest first; `before` (epoch ms) pages back. */
  @Get(':appId/activity')
  @ApiOperation({
    summary: "List a digital human's activity entries (newest first)",
    description:
      'Run results, skips, milestones, outputs, escalations and approvals. `limit` defaults to 50 (at most 200); `before` (epoch ms) pages back. 400 `limit must be a whole number of at least 1` or `before must be a timestamp in milliseconds`.',
  })
  @Assistant()
  @ApiData(arr(ACTIVITY_ENTRY))
  async activity(
    @Param() { appId }: AppIdParams,
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
  @ApiOperation({
    summary: 'Pause a digital human',
    description:
      'Sets the app `paused` and stops scheduling it (`nextRunAtMs` null); pausing a paused app changes nothing. Emits `app:status_changed`; 409 for an uninstalled app.',
  })
  @HttpCode(200)
  @ApiData(APP)
  async pause(@Param() { appId }: AppIdParams): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.pause(appId)));
  }

  @Post(':appId/resume')
  @ApiOperation({
    summary: 'Resume a paused digital human',
    description:
      'Back to `active` from `paused` or `error` (clearing `lastError`) and scheduled again; emits `app:status_changed`. 409 `The digital human is not paused.` in any other state.',
  })
  @HttpCode(200)
  @ApiData(APP)
  async resume(@Param() { appId }: AppIdParams): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.resume(appId)));
  }

  @Post(':appId/frequency')
  @ApiOperation({
    summary: 'Change how often a subscription of a digital human runs',
    description:
      'Rewrites the timing of the schedule subscription `subscriptionId` in the stored spec (an interval or a cron expression) and reschedules the app. 422 names `subscriptionId` (missing, unknown or not a schedule) or a bad `frequency`.',
  })
  @HttpCode(200)
  @ApiData(APP, 422)
  async frequency(@Param() { appId }: AppIdParams, @Body() body: FrequencyDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.setFrequency(appId, body.subscriptionId, body.frequency)));
  }

  /** JSON Merge Patch (RFC 7386) of the spec's top-level fields. */
  @Patch(':appId/spec')
  @ApiOperation({
    summary: "Change a digital human's spec (JSON Merge Patch)",
    description:
      "Merges the body into the spec's top-level fields (`null` deletes one), validates the result as a whole (422 `VALIDATION_FAILED` naming the field; `type` cannot change) and reschedules. 400 when the body is not a JSON object.",
  })
  @ApiData(APP, 422)
  async patchSpec(@Param() { appId }: AppIdParams, @Body() body: SpecPatchDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.patchSpec(appId, body)));
  }

  /** JSON Merge Patch of the user's overrides; null deletes a key. */
  @Patch(':appId/overrides')
  @ApiOperation({
    summary: "Change a digital human's user overrides (JSON Merge Patch)",
    description:
      "Merges the body into the user's overrides (model choice, notification level, approvals, …; `null` deletes a key); the result is checked (422). 400 when the body is not a JSON object.",
  })
  @ApiData(APP, 422)
  async patchOverrides(@Param() { appId }: AppIdParams, @Body() body: OverridesPatchDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.patchOverrides(appId, body)));
  }

  @Post(':appId/permissions/grant')
  @ApiOperation({
    summary: 'Grant a permission to a digital human',
    description:
      'Adds the permission (a name like `ai-browser` or `bash`) to the granted list and removes it from the denied one; answers the app. A value that is not a permission name answers 422 naming `permission`.',
  })
  @HttpCode(200)
  @ApiData(APP, 422)
  async grant(@Param() { appId }: AppIdParams, @Body() body: PermissionDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.grant(appId, body.permission)));
  }

  @Post(':appId/permissions/revoke')
  @ApiOperation({
    summary: 'Revoke a permission of a digital human',
    description:
      'Adds the permission (a name like `ai-browser`) to the denied list and removes it from the granted one; answers the app. A value that is not a permission name answers 422 naming `permission`.',
  })
  @HttpCode(200)
  @ApiData(APP, 422)
  async revoke(@Param() { appId }: AppIdParams, @Body() body: PermissionDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.revoke(appId, body.permission)));
  }

  /** The stored spec as a YAML file's text. */
  @Get(':appId/export-spec')
  @ApiOperation({
    summary: "Export a digital human's spec as YAML",
    description:
      'Answers the stored, normalized spec as YAML text in `data`; it can be installed again through `import-spec`.',
  })
  @ApiData(str('The spec as YAML text'))
  async exportSpec(@Param() { appId }: AppIdParams): Promise<SuccessBody<string>> {
    return ok(await this.apps.exportSpec(appId));
  }

  @Post(':appId/move-space')
  @ApiOperation({
    summary: 'Move a digital human to another space (or global)',
    description:
      '`spaceId` names a space, or null for global; the data folder moves along and the app is rescheduled. 404 for an unknown space; moving to its current place changes nothing.',
  })
  @HttpCode(200)
  @ApiData(APP)
  async moveSpace(@Param() { appId }: AppIdParams, @Body() body: MoveSpaceDto): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.moveSpace(appId, body.spaceId)));
  }

  @Post(':appId/upgrade-strategy')
  @ApiOperation({
    summary: "Set a digital human's upgrade strategy (auto, notify, manual)",
    description:
      'With `auto`, `POST /api/store/updates/check-now` applies patch and minor updates by itself; otherwise they stay pending. 400 `strategy must be one of auto, notify, manual`.',
  })
  @HttpCode(200)
  @ApiData(APP)
  async upgradeStrategy(
    @Param() { appId }: AppIdParams,
    @Body() body: UpgradeStrategyDto,
  ): Promise<SuccessBody<AppDto>> {
    return ok(toAppDto(await this.apps.setUpgradeStrategy(appId, body.strategy)));
  }

  @Post(':appId/clear-memory')
  @ApiOperation({
    summary: "Clear a digital human's memory",
    description:
      "Deletes the app's memory (`memory.md` or `memory` in its data folder `.svc/apps/<appId>/`), which its chats and runs read; nothing to delete is no error.",
  })
  @HttpCode(200)
  @ApiData(NULL_DATA)
  async clearMemory(@Param() { appId }: AppIdParams): Promise<SuccessBody<null>> {
    await this.apps.clearMemory(appId);
    return ok(null);
  }
}
