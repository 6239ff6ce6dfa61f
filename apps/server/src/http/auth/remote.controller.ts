import { Body, Controller, Get, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { RemoteStatus } from '#contracts/api.js';
import { AccessService } from '#core/auth/access.service.js';
import { APP_CONFIG, type AppConfig } from '#core/config/app-config.js';
import { SystemService } from '#core/system/system.service.js';
import { clientIp } from '../common/client-ip.js';
import { ApiData, ApiDone } from '../openapi/api-data.js';
import { REMOTE_STATUS } from '../openapi/response-schemas.js';
import type { SuccessBody } from '#contracts/errors.js';
import { LoginDto } from './remote.dto.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

@ApiTags('Authentication')
@Controller('api/remote')
export class RemoteController {
  constructor(
    private readonly access: AccessService,
    private readonly system: SystemService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Checks a token under the lockout rules; creates no session. */
  @Post('login')
  @ApiOperation({
    summary: 'Check an access password (browser sign-in)',
    description:
      'Creates no session: every request still carries `Authorization: Bearer <password>`. Failures count towards the sign-in lockout (429 with `Retry-After`).',
  })
  @HttpCode(200)
  @ApiDone(429)
  async login(@Body() body: LoginDto, @Req() req: Request): Promise<{ success: true }> {
    await this.access.login(body.token, clientIp(req, this.config));
    return { success: true };
  }

  @Get('status')
  @ApiOperation({
    summary: 'Read the remote-access status (public)',
    description:
      'Public (no token needed). Answers `{active:true, clients, version, serverVersion}`: remote access is always on for this server; `clients` counts the open WebSocket connections and `version` is the remote protocol version.',
  })
  @ApiData(REMOTE_STATUS)
  async status(): Promise<SuccessBody<RemoteStatus>> {
    return { success: true, data: await this.system.remoteStatus() };
  }
}
