import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AccessService } from '#core/auth/access.service.js';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { PromMetrics } from '#infra/metrics/prom-metrics.js';
import { sendMetrics } from '../system/probes.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

/**
 * Prometheus exposition, outside /api (a worker-only process answers it through workerProbes).
 * The access password is required (header or ?token=) unless SVC_METRICS_PUBLIC=1.
 */
@ApiTags('Operations')
@Controller()
export class MetricsController {
  constructor(
    private readonly metrics: PromMetrics,
    private readonly access: AccessService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('metrics')
  @ApiOperation({
    summary: 'Prometheus metrics',
    description:
      "Prometheus text exposition of this process's metrics, outside `/api` (a worker-only process answers it too). The access password is required as a Bearer header or `?token=` unless SVC_METRICS_PUBLIC=1: 401 `No authorization token` without one, 401 `Invalid token` for a wrong one.",
  })
  async scrape(@Req() req: Request, @Res() res: Response): Promise<void> {
    await sendMetrics({ metrics: this.metrics, access: this.access, config: this.config }, req, res);
  }
}
