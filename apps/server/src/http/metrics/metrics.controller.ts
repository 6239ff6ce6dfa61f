import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ErrorTexts } from '#contracts/errors.js';
import { AccessService } from '#core/auth/access.service.js';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { PromMetrics } from '#infra/metrics/prom-metrics.js';
import { requestToken } from '../auth/auth.middleware.js';
import { sendFailure } from '../common/envelope.js';

/**
 * Prometheus exposition, outside /api, on every role (the worker too). The access password
 * is required (header or ?token=) unless SVC_METRICS_PUBLIC=1.
 */
@Controller()
export class MetricsController {
  constructor(
    private readonly metrics: PromMetrics,
    private readonly access: AccessService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('metrics')
  async scrape(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.config.metricsPublic) {
      const token = requestToken(req.headers.authorization, req.query);
      if (token === null) return sendFailure(res, 401, ErrorTexts.noToken);
      if (!this.access.isValidToken(token)) return sendFailure(res, 401, ErrorTexts.invalidToken);
    }
    const { contentType, body } = await this.metrics.scrape();
    res.status(200).type(contentType).send(body);
  }
}
