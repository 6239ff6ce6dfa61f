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
  @ApiOperation({ summary: 'Liveness probe' })
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: database reachable, Redis reachable when used, queue consuming. */
  @Get('readyz')
  @ApiOperation({ summary: 'Readiness probe' })
  async ready(@Res() res: Response): Promise<void> {
    await sendReadiness(this.system, res);
  }
}
