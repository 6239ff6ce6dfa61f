import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { SystemService } from '#core/system/system.service.js';
import { sendReadiness } from './probes.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

/** Probes for orchestrators: outside /api, no token. */
@ApiTags('Operations')
@Controller()
export class HealthController {
  constructor(private readonly system: SystemService) {}

  /** Liveness: the process runs its event loop. */
  @Get('healthz')
  @ApiOperation({
    summary: 'Liveness probe',
    description: 'Outside `/api`, no token: answers 200 `{status:"ok"}` while the process runs its event loop.',
  })
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: database reachable, Redis reachable when used, queue consuming. */
  @Get('readyz')
  @ApiOperation({
    summary: 'Readiness probe',
    description:
      'Outside `/api`, no token: checks the database, Redis when used, and that some worker consumes the queue. Answers 200 `{status:"ready", ready, checks, lastHeartbeatAt}`, or 503 with `status` `not ready` and the failing check\'s `error`.',
  })
  async ready(@Res() res: Response): Promise<void> {
    await sendReadiness(this.system, res);
  }
}
