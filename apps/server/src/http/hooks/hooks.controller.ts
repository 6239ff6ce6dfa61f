import { Controller, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';
import express, { type Request, type Response } from 'express';
import { ErrorTexts } from '#contracts/errors.js';
import { Metrics } from '#core/ports/metrics.port.js';
import { TriggersService, type WebhookRefusal } from '#core/triggers/triggers.service.js';
import { WEBHOOK_MAX_BYTES } from '#core/triggers/webhook-rules.js';
import { sendFailure } from '../common/envelope.js';
import { WebhookPathParams } from '../common/path-params.js';

/** The HTTP status of each reason a delivery is refused. */
const REFUSAL_STATUS: Record<WebhookRefusal, number> = {
  'unknown-path': 404,
  'too-large': 413,
  'bad-signature': 401,
  'not-json': 400,
  'bad-body': 400,
  'queue-full': 429,
};

/** The raw bytes of any body up to 256 KB (the signature is over exactly these). */
const rawBody = express.raw({ type: () => true, limit: WEBHOOK_MAX_BYTES });

function readRaw(req: Request, res: Response): Promise<Buffer | 'too-large' | 'unreadable'> {
  return new Promise((resolve) => {
    rawBody(req, res, (err?: unknown) => {
      if (err) {
        const e = err as { type?: string; status?: number };
        resolve(e.type === 'entity.too.large' || e.status === 413 ? 'too-large' : 'unreadable');
        return;
      }
      resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    });
  });
}

/**
 * Webhook triggers (docs/api/triggers.md, "Webhooks"): `POST /hooks/<path>` with no access password (outside
 * `/api`, so neither the token check nor the sign-in lockout sees it). Answers at once; the run
 * is queued.
 */
@ApiTags('Webhooks')
@Controller('hooks')
export class HooksController {
  constructor(
    private readonly triggers: TriggersService,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    // Deliveries are queued by whichever replica answers them (api or worker).
    triggers.configure({ webhookQueueMax: config.webhookQueueMax });
  }

  /** `*path`: one or more segments (`/hooks/github/push`); Express hands them over as a list. */
  @Post('*path')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Deliver a webhook to the digital human subscribed at this path',
    description:
      'No access password. JSON body of at most 256 KB (else 413), or `application/x-www-form-urlencoded` with a ' +
      'JSON `payload` field (GitHub). With a subscription secret the request carries ' +
      'the HMAC-SHA256 of the raw body in `X-Hub-Signature-256: sha256=<hex>` (or `X-Signature-256` / ' +
      '`X-Webhook-Signature: <hex>`); otherwise 401. A repeat (same `X-Webhook-Id`/`X-GitHub-Delivery`, or the same ' +
      'body within 10 minutes) answers alike and starts no second run. Every other accepted delivery starts exactly ' +
      'one run: deliveries arriving while the digital human runs wait in order (durably); past ' +
      '`SVC_WEBHOOK_QUEUE_MAX` waiting (default 100) the answer is 429 with `Retry-After`. Unknown path: 404.',
  })
  async deliver(
    @Param() { path: segments }: WebhookPathParams,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const path = Array.isArray(segments) ? segments.join('/') : segments;
    const raw = await readRaw(req, res);
    if (raw === 'too-large') return sendFailure(res, 413, ErrorTexts.bodyTooLarge);
    if (raw === 'unreadable') return sendFailure(res, 400, 'Invalid request body');
    const outcome = await this.triggers.deliverWebhook(path, raw, req.headers);
    if (outcome.accepted) {
      // svc_webhook_deliveries_total: every accepted delivery is received; a new one is also queued.
      this.metrics.webhookDelivery(outcome.duplicate ? 'duplicate' : 'received');
      if (!outcome.duplicate) this.metrics.webhookDelivery('queued');
      res.status(200).json({ ok: true, received: true });
      return;
    }
    if (outcome.refusal === 'queue-full') this.metrics.webhookDelivery('refused');
    if (outcome.retryAfterS !== undefined) res.setHeader('Retry-After', String(outcome.retryAfterS));
    sendFailure(res, REFUSAL_STATUS[outcome.refusal], outcome.error);
  }
}
