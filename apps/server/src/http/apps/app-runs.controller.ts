import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import type { EscalationResponse, RunTriggerResult } from '#contracts/apps.js';
import type { MessageDto } from '#contracts/conversations.js';
import type { SuccessBody } from '#contracts/errors.js';
import { AppRunsService } from '#core/apps/agent/app-runs.service.js';
import { toMessageDto } from '../conversations/conversations.presenter.js';
import { ApiData } from '../openapi/api-data.js';
import { ESCALATION_RESPONSE, MESSAGE, RUN_ID, RUN_TRIGGER_RESULT } from '../openapi/response-schemas.js';
import { arr, bool, obj, str } from '../openapi/schema.js';
import { ok } from '../common/envelope.js';
import { EscalationResponseDto, InjectDto } from './apps.dto.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import { AppEscalationParams, AppIdParams, AppRunParams } from '../common/path-params.js';

/** Runs and escalations of a digital human (docs/api/digital-humans.md, "Runs"). A run's progress comes over WebSocket. */
@ApiTags('Digital humans')
@Controller('api/apps/:appId')
export class AppRunsController {
  constructor(private readonly runs: AppRunsService) {}

  /** Starts a run now (`outcome: started`), or records and answers why not (`outcome: skipped`). */
  @Post('trigger')
  @ApiOperation({
    summary: 'Run a digital human now',
    description: 'Starts a run now (`outcome: started`), or records and answers why not (`outcome: skipped`).',
  })
  @HttpCode(200)
  @ApiData(RUN_TRIGGER_RESULT, 409, 503)
  async trigger(@Param() { appId }: AppIdParams): Promise<SuccessBody<RunTriggerResult>> {
    return ok(await this.runs.startRun(appId, { type: 'manual' }));
  }

  @Get('runs/:runId/session')
  @ApiOperation({
    summary: 'Read the session (messages and thoughts) of a run',
    description:
      "The run's transcript: its messages in the app's run conversation `app-run:<appId>`, with `active` true while it is the running turn. 404 `Run not found: <runId>`.",
  })
  @ApiData(obj({ runId: str(), active: bool(), messages: arr(MESSAGE) }, ['runId', 'active', 'messages']))
  async session(
    @Param() { appId, runId }: AppRunParams,
  ): Promise<SuccessBody<{ runId: string; active: boolean; messages: MessageDto[] }>> {
    const session = await this.runs.session(appId, runId);
    return ok({ ...session, messages: session.messages.map(toMessageDto) });
  }

  @Post('runs/:runId/continue')
  @ApiOperation({
    summary: "Continue a digital human's run",
    description:
      'Continues an ended run where it stopped (with the message `Continue.`); a running run gets it at its next step. 404 `Run not found: <runId>`; 409 `Another run of this digital human is in progress.`, or `The digital human is not active (paused, waiting for an answer, or in error).`',
  })
  @HttpCode(200)
  @ApiData(RUN_ID, 409)
  async continueRun(@Param() { appId, runId }: AppRunParams): Promise<SuccessBody<{ runId: string }>> {
    return ok(await this.runs.continueRun(appId, runId));
  }

  @Post('runs/:runId/inject')
  @ApiOperation({
    summary: "Add a message to a digital human's running run",
    description:
      'Gives `text` to the running run at its next step, or, once the run ended, continues it with the text. 404 and 409 as for `continue`.',
  })
  @HttpCode(200)
  @ApiData(RUN_ID, 409)
  async inject(
    @Param() { appId, runId }: AppRunParams,
    @Body() body: InjectDto,
  ): Promise<SuccessBody<{ runId: string }>> {
    return ok(await this.runs.inject(appId, runId, body.text));
  }

  @Post('escalation/:entryId/respond')
  @ApiOperation({
    summary: "Answer a digital human's escalation",
    description: 'Records the answer and starts a follow-up run.',
  })
  @HttpCode(200)
  @ApiData(ESCALATION_RESPONSE, 409)
  async respond(
    @Param() { appId, entryId }: AppEscalationParams,
    @Body() body: EscalationResponseDto,
  ): Promise<SuccessBody<RunTriggerResult & { response: EscalationResponse }>> {
    return ok(await this.runs.respond(appId, entryId, body));
  }
}
